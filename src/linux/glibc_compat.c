/* stat, fstat and lstat for glibc before 2.33, which had no such symbols: <sys/stat.h> made them
   inline calls of __xstat64, __fxstat64 and __lxstat64, which every glibc since keeps at the
   machine's base version. The definitions are local to what links them (the runtime's version
   script exports none; a program exports none), so its calls bind here, and so do those of the
   archives a program links (libelf's fstat, in the inspector); see glibc_compat.h. */
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
int __lxstat64(int version, const char *path, struct stat64 *buffer);
__asm__(".symver __xstat64, __xstat64@" GLIBC_COMPAT_BASE);
__asm__(".symver __fxstat64, __fxstat64@" GLIBC_COMPAT_BASE);
__asm__(".symver __lxstat64, __lxstat64@" GLIBC_COMPAT_BASE);

int stat64(const char *path, struct stat64 *buffer) { return __xstat64(STAT_LAYOUT_VERSION, path, buffer); }

int fstat64(int fd, struct stat64 *buffer) { return __fxstat64(STAT_LAYOUT_VERSION, fd, buffer); }

int lstat64(const char *path, struct stat64 *buffer) { return __lxstat64(STAT_LAYOUT_VERSION, path, buffer); }

/* fstat, as code built without _FILE_OFFSET_BITS=64 calls it (libelf's archive); on 64-bit
   machines struct stat is struct stat64. */
int fstat_unsuffixed(int fd, struct stat64 *buffer) __asm__("fstat");
int fstat_unsuffixed(int fd, struct stat64 *buffer) { return fstat64(fd, buffer); }
