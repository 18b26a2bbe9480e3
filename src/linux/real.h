/* The loader's own functions: dlopen and dlmopen, which the hooks stand in front of (passthru.S
   jumps to them; the runtime calls them when it makes a load itself), and the others the runtime
   asks (dlsym, dlerror, dlclose, dlinfo, dladdr1).

   The runtime needs no libdl.so.2 of its own. From glibc 2.34 libc.so.6 defines these functions, at
   the versions libdl.so.2 had (glibc_compat.h), and the runtime's weak references to them are bound
   when it is loaded. Before 2.34 they are libdl's, bound only where libdl.so.2 was in the global
   scope then; where it was not, they are found in libdl.so.2's own symbols once it is loaded (it
   can arrive at any time, as a dependency of a library loaded later). */
#pragma once

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>

extern void *(*real_dlopen)(const char *file, int mode);
extern void *(*real_dlmopen)(Lmid_t namespace, const char *file, int mode);

/* Finds dlopen and dlmopen (dlsym RTLD_NEXT: libc's default versions whether the runtime was
   preloaded or dlopen'ed; or libdl's own, above). Idempotent and lock-free but for one walk of the
   loaded objects before glibc 2.34, so that a hook reached from a constructor that ran before the
   runtime's own may call it: dlsym takes the loader's lock, which that thread may hold. Both stay
   NULL where the loader has no such functions yet (glibc before 2.34, no libdl.so.2 loaded). */
void real_resolve(void);

/* The loader's functions, found as above. Where one is not there yet each does what the loader
   does for a request it cannot serve, and sets no dlerror: real_dlsym NULL, real_dlclose,
   real_dlinfo -1, real_dladdr1 0, real_dlerror NULL. */
void *real_dlsym(void *handle, const char *name);
char *real_dlerror(void);
int real_dlclose(void *handle);
int real_dlinfo(void *handle, int request, void *arg);
int real_dladdr1(const void *address, Dl_info *info, void **extra, int flags);
