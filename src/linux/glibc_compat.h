/* The Linux runtime binds the oldest symbol versions its glibc functions have, so that one build
   loads on glibc 2.17 and newer. A version the running glibc lacks is a fatal loader error in
   LD_PRELOAD, before any of the runtime's code runs: building on glibc 2.36 would otherwise bind
   dlsym@GLIBC_2.34 (libdl merged into libc), stat64@GLIBC_2.33 and fcntl64@GLIBC_2.28.

   The build forces this header into each C source of the runtime (-include), ahead of every system
   header, and only where the C library is glibc. So it uses no glibc macro (__GLIBC__ is defined by
   <features.h>) and includes nothing: including <features.h> here would fix the feature macros
   before the source's own _GNU_SOURCE. Assembly sources get the same flags and skip it. The
   versions are those of each machine's glibc ABI lists; stat, fstat and lstat, which had no symbol
   of their own before 2.33, are defined in glibc_compat.c. */
#pragma once

#ifndef __ASSEMBLER__

#if defined(__x86_64__) && !defined(__ILP32__)
#define GLIBC_COMPAT_BASE "GLIBC_2.2.5"
#define GLIBC_COMPAT_DLINFO "GLIBC_2.3.3" /* dlinfo and dladdr1 came with 2.3.3 */
#elif defined(__aarch64__)
#define GLIBC_COMPAT_BASE "GLIBC_2.17"   /* the first aarch64 glibc: every symbol starts there */
#define GLIBC_COMPAT_DLINFO "GLIBC_2.17"
#else
#error "glibc_compat.h: no symbol versions for this machine (x86-64 and aarch64 only)"
#endif

/* Before 2.34 these lived in libdl.so.2; from 2.34 libc.so.6 keeps the same versions for binaries
   built before. The runtime refers to them weakly and needs no libdl.so.2 (real.h); a program
   links it. */
__asm__(".symver dlsym, dlsym@" GLIBC_COMPAT_BASE);
__asm__(".symver dlerror, dlerror@" GLIBC_COMPAT_BASE);
__asm__(".symver dlclose, dlclose@" GLIBC_COMPAT_BASE);
__asm__(".symver dlinfo, dlinfo@" GLIBC_COMPAT_DLINFO);
__asm__(".symver dladdr1, dladdr1@" GLIBC_COMPAT_DLINFO);
/* fcntl64 (2.28) differs from fcntl only on 32-bit machines. */
__asm__(".symver fcntl64, fcntl@" GLIBC_COMPAT_BASE);
/* A program that calls dlopen (the inspector; -DGLIBC_COMPAT_PROGRAM). Never the runtime, which
   defines dlopen, its hook, and reaches the real one through dlsym. A program also links libdl.so.2
   and libpthread.so.0 and starts through glibc_compat_start.c. */
#ifdef GLIBC_COMPAT_PROGRAM
__asm__(".symver dlopen, dlopen@" GLIBC_COMPAT_BASE);
#endif

#endif
