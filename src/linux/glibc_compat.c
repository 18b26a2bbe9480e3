/* stat and fstat for glibc before 2.33, which had no such symbols: <sys/stat.h> made them inline
   calls of __xstat64 and __fxstat64, which every glibc since keeps at the machine's base version.
   The runtime's own definitions are local to it (the version script exports neither), so its calls
   bind here; see glibc_compat.h. */
#define _GNU_SOURCE
#include <sys/stat.h>

/* The stat layout version those functions check: _STAT_VER_LINUX on x86-64, _STAT_VER_KERNEL on
   the generic 64-bit ABI (aarch64). */
#if defined(__x86_64__)
#define STAT_LAYOUT_VERSION 1
#else
#define STAT_LAYOUT_VERSION 0
#endif

int __xstat64(int version, const char *path, struct stat64 *buffer);
int __fxstat64(int version, int fd, struct stat64 *buffer);
__asm__(".symver __xstat64, __xstat64@" GLIBC_COMPAT_BASE);
__asm__(".symver __fxstat64, __fxstat64@" GLIBC_COMPAT_BASE);

int stat64(const char *path, struct stat64 *buffer) { return __xstat64(STAT_LAYOUT_VERSION, path, buffer); }

int fstat64(int fd, struct stat64 *buffer) { return __fxstat64(STAT_LAYOUT_VERSION, fd, buffer); }
