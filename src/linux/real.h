/* The loader's own dlopen and dlmopen (libc's, found once): the functions the hooks stand in front
   of. passthru.S jumps to them; the runtime calls them when it makes a load itself. */
#pragma once

#define _GNU_SOURCE
#include <dlfcn.h>

extern void *(*real_dlopen)(const char *file, int mode);
extern void *(*real_dlmopen)(Lmid_t namespace, const char *file, int mode);

/* Finds them (dlsym RTLD_NEXT: libc's default versions whether the runtime was preloaded or
   dlopen'ed). Idempotent and lock-free, so that a hook reached from a constructor that ran before
   the runtime's own may call it: dlsym takes the loader's lock, which that thread may hold. */
void real_resolve(void);
