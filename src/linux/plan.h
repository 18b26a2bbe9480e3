/* Planning what the runtime loads for an NVIDIA name, on a real caller's behalf. It is the slow
   path of the hooks, the attach scan and the audit front. A plan asks the policy (policy.h) and
   walks the places once to learn what it asks for. Nothing here loads anything, since the front
   carries the plan out (carry_out.h). A miss or a mixed origin found on the way is reported here,
   once, with what the walk tried. Runs outside the loader's locks and may allocate. */
#pragma once

#define _GNU_SOURCE
#include "dynamic.h"
#include "policy.h"
#include "report.h"

#include <limits.h>
#include <link.h>
#include <stdbool.h>

#define PLAN_MAX_LOADS 64

/* One NVIDIA name asked for, as the front learned it. It is built once and carried down, so no
   step below asks again. */
struct plan_request {
	enum policy_request kind;
	const char *name; /* the bare name asked for */
	int family;
	bool driver;
	bool loaded; /* first loaded wins, and the name (the attach scan: the family) is loaded */
	const char *loaded_path; /* with loaded, the path of the name's loaded copy, when the index holds it */
	/* A miss of the name would be shown or recorded (report_misses_wanted), for a request whose
	   misses are reported. The front learns it once. */
	bool heard;
	enum report_miss_weight weight; /* how loud a miss of it is (report_miss_weight) */
	/* The object whose search applies: the dlopen caller, the audit front's requester, the
	   library the attach scan loads for. */
	struct link_map *caller;
	const char *asker; /* the caller as events name it */
};

/* One load of the plan. */
struct plan_load {
	char name[NAME_MAX + 1]; /* the name asked for */
	char path[PATH_MAX];     /* the file the runtime found */
	struct dynamic_file_identity identity; /* that file as the runtime read it */
	int family;
	/* Why: the copy's place or the coherent rule, and whether the loader is asked by name first
	   (its ld.so.cache, which no search list shows, may hold the name). */
	struct policy_answer answer;
};

/* What to load, in order: what a library needs comes before it (leaves first). */
struct plan {
	size_t count;
	struct plan_load loads[PLAN_MAX_LOADS];
};

/* The policy's question with the facts the request holds already (the settings, its kind, the
   family's driver flag, what is loaded). The plans add what they learn. */
struct policy_question plan_question(const struct plan_request *request);

/* False when nothing can come of a plan for the request on what it knows already: no load, no
   miss anybody listens for, no mixed origin (the policy off, a driver library nobody listens for,
   a name loaded under fallback). The fronts ask it before they learn more. */
bool plan_worth_making(const struct plan_request *request);

/* A bare name for request->caller: true with load filled when the loader would not find it
   for the caller (or, under coherent, when the caller's own installation holds another copy). False
   when the plain loader should have the call. A miss is reported, with every place tried. For a
   name the index does not hold, after loaded_sync: the caller's own origin must be registered. */
bool plan_bare_name(const struct plan_request *request, struct plan_load *load);

/* The same question asked from inside the loader (the audit front's la_objsearch, before the
   loader's own search for a name the requester needs). Nothing here may call the loader, so
   ld.so.cache is read from its file. A name it holds is one the loader may find, since the loader
   may have been told to skip the cache, which a process cannot see. True with the load. */
bool plan_for_requester(const struct plan_request *request, struct plan_load *load);

/* An NVIDIA library about to be dlopen'ed by path, read as file; folder is that of the path, what
   $ORIGIN means for it. True with the loads (leaves first) when some of its DT_NEEDED NVIDIA
   libraries would not be found by the loader for it (or, under coherent, would come from elsewhere
   than its own installation) but are in the runtime's places. False when it needs nothing from the
   runtime. One that nobody finds is reported as a miss, since the loader will fail the load. */
bool plan_needed(const char *path, const char *folder, const struct dynamic_file *file, struct plan *plan);

/* First loaded wins, and request's name (of request's family) is loaded, at request's loaded_path.
   Under coherent, when the asker's own installation holds another copy, a warning and a "mixed-origin" event with both
   paths, once for each soname. The asker is a path, or (when NULL) the object holding asker_code,
   found only when the check is made. */
void plan_check_mixed_origin(const struct plan_request *request, const char *asker, const void *asker_code);
