/* Attach at any time: GOT and dynamic-symbol patching of the loaded objects, so that a runtime
   dlopen'ed into a running process sees every later dlopen and dlmopen (patch.c). */
#pragma once

#include <stdbool.h>

/* One runtime per process: looks for another copy of the runtime loaded before this one
   (preloaded, linked, or attached from another path). When there is one, it is pinned,
   front_primary() gives its API from then on, and true is returned: this copy then patches
   nothing and its hooks pass every call on. */
bool patch_find_earlier_runtime(void);

/* Points the process's dlopen and dlmopen bindings at the hooks, when the settings allow it
   (NVINTERPOSE_PATCH, NVINTERPOSE_DISABLE). For the runtime's constructor, which dlopen runs with
   the loader's lock held: no load is in flight and every listed object is relocated. */
void patch_attach(void);

/* The same for nvi_rescan, from any thread: the objects loaded since the attach, once no load
   that began before the call is still in flight. */
void patch_rescan(void);

/* Points libc's dynamic-symbol entries for dlopen and dlmopen at the hooks, once, as the attach
   does (the entries only, never a GOT slot: no other interposer's binding is touched), for a
   library about to be loaded with RTLD_DEEPBIND. Such a library looks its own dlopen up in its own
   scope first, where libc defines it, before the global scope that holds the preloaded hooks.
   False where the settings leave libc alone (NVINTERPOSE_PATCH=0). From the hooks' slow path. */
bool patch_for_deep_binding(void);
