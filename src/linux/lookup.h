/* Finding NVIDIA libraries on a real caller's behalf: the slow path of the hooks and of the attach
   scan. Everything here runs outside the loader's locks and may allocate. */
#pragma once

#include "dynamic.h"

#include <link.h>
#include <stdbool.h>

/* Installs the fork handler of the mixed-origin bookkeeping. */
void lookup_init(void);

/* libc's own dlopen, resolved at start-up (preload.c); passthru.S jumps to it. */
extern void *(*preload_real_dlopen)(const char *file, int mode);

/* The object whose code holds address, as glibc's dlopen determines its caller: when no object
   holds it (generated code), the main program. */
struct link_map *lookup_object_at(const void *address);

/* An NVIDIA bare name for caller: the handle when the runtime loaded it (or the loader found it
   only by ld.so.cache), NULL when the plain loader should have the call (it finds the library
   itself, or nobody does). Call loaded_sync first: the caller's own origin must be registered. */
void *lookup_bare_name(const char *name, int mode, int family, struct link_map *caller);

/* An NVIDIA library about to be loaded by path: when some of its DT_NEEDED NVIDIA libraries would
   not be found by the loader but are in a registered origin, a wheel sibling or NVINTERPOSE_PATH,
   loads those first (leaves first, RTLD_LOCAL), then the library, then drops its own handles so
   that dlclose still unloads the tree. NULL when there was nothing to do or the load failed: the
   plain loader should have the call. */
void *lookup_load_with_needed(const char *path, const struct dynamic_file *file, int mode, struct link_map *caller);

/* Under the coherent policy, when name is already loaded but the asker's folder (or its wheel
   siblings) holds another copy: a warning and a "mixed-origin" event with both paths. Each soname
   is looked at once. The asker is a path, or (when NULL) the object holding asker_code. */
void lookup_report_mixed_origin(const char *name, const char *asker, const void *asker_code);
