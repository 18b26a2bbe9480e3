/* Deciding what the runtime loads for an NVIDIA library, on a real caller's behalf: the slow path of
   the hooks and of the attach scan. Nothing here loads anything: the answer is a plan, which the
   front carries out (preload.c). Runs outside the loader's locks and may allocate. */
#pragma once

#include "dynamic.h"
#include "search.h"

#include <limits.h>
#include <link.h>
#include <stdbool.h>

#define LOOKUP_MAX_LOADS 64

/* One load of the plan. */
struct lookup_load {
	char name[NAME_MAX + 1]; /* the name asked for */
	char path[PATH_MAX];     /* the file the runtime found */
	struct dynamic_file_identity identity; /* that file as the runtime checked it */
	int family;
	enum search_step step;   /* where it found it */
	bool coherent;           /* chosen by the coherent policy over the loader's own choice */
	/* First ask the loader by name from the runtime's own frame: its ld.so.cache, which no search
	   list shows, may hold the name (and it then takes that copy); path only when it does not. */
	bool by_name_first;
};

/* What to load, in order: what a library needs comes before it (leaves first). */
struct lookup_plan {
	bool missed; /* lookup_bare_name: neither the loader's listed folders nor the runtime's places hold it */
	size_t count;
	struct lookup_load loads[LOOKUP_MAX_LOADS];
};

/* Installs the fork handler of the mixed-origin bookkeeping. */
void lookup_init(void);

/* The object whose code holds address, as glibc's dlopen determines its caller: when no object
   holds it (generated code), the main program. */
struct link_map *lookup_object_at(const void *address);

/* An NVIDIA bare name for caller: true with one load in plan when the loader would not find it
   for the caller (or, under coherent, when the caller's own folder holds another copy); false when
   the plain loader should have the call (it finds the library itself, or nobody does). For a name
   the index does not hold, after loaded_sync: the caller's own origin must be registered. */
bool lookup_bare_name(const char *name, int family, struct link_map *caller, struct lookup_plan *plan);

/* A bare name the runtime supplies no copy of (plan->missed, a driver library, the policy off):
   when the loader will not find it either for caller (its listed folders, then its own answer for
   the name, ld.so.cache included: a RTLD_NOLOAD probe), a miss is reported (report.h), with every
   folder tried; the runtime's places too when runtime_places. Only call it when
   report_misses_wanted(): the walk is made again to list the folders. */
void lookup_report_bare_miss(const char *name, int family, struct link_map *caller, const char *asker, bool runtime_places);

/* The same question asked from inside the loader (the audit front's la_objsearch, before the
   loader's own search for a name requester needs): nothing here may call the loader, so
   ld.so.cache is read from its file, where a name it holds is one the loader may find (the loader
   may have been told to skip the cache, which a process cannot see). True with the load. */
bool lookup_for_requester(const char *name, int family, struct link_map *requester, struct lookup_load *load);

/* An NVIDIA library about to be dlopen'ed by path: true with the loads (leaves first) when some of
   its DT_NEEDED NVIDIA libraries would not be found by the loader for it (or, under coherent, would
   come from elsewhere than its own installation) but are in a registered origin, a wheel sibling or
   NVINTERPOSE_PATH; false when it needs nothing from the runtime. One that nobody finds is reported
   as a miss (when report_misses_wanted()): the loader will fail the load. */
bool lookup_needed(const char *path, const struct dynamic_file *file, struct lookup_plan *plan);

/* True when the loader holds an object under this name now (RTLD_NOLOAD; for a name it does not
   hold, the loader still searches the file system before it says so). */
bool lookup_loaded_by_name(const char *name);

/* Under the coherent policy, when name is already loaded but the asker's folder (or its wheel
   siblings) holds another copy: a warning and a "mixed-origin" event with both paths. Each soname
   is looked at once. The asker is a path, or (when NULL) the object holding asker_code. */
void lookup_report_mixed_origin(const char *name, const char *asker, const void *asker_code);
