/* The steps of resolving a tree. resolve.c walks the tree and its DT_NEEDED, lookup.c looks one
   name up (the loader's search, the runtime's turn in the what-if, what it adds to the tree), and
   dependents.c names and resolves the run-time dependents. */
#pragma once

#include "resolve.h"

#include <stdbool.h>

/* One lookup in progress. */
struct lookup {
	const struct resolver *resolver;
	struct tree *tree;
	struct object *asker;
	const char *name;
	enum loader_lookup kind; /* a DT_NEEDED, or the asker's dlopen(name) */
	/* Places where nothing was found are kept only on a second search, made when the first one
	   found nothing. Most lookups succeed, and that is the inspector's main cost. */
	bool every_attempt;
	struct attempt *attempts;
	size_t attempt_count, attempt_capacity;
	/* the outcome */
	enum how how;
	char *path;
	const struct probed_file *file;
	char *hwcaps;
	char *error;
	bool stop; /* the loader stops the load at a file (error) */
};

/* Notes a place looked in: kept when something was passed over there, or on the search that keeps
   every place. */
void lookup_record(struct lookup *lookup, const char *path, enum how step, const char *result, bool passed_over);
/* What one candidate file means for the search. True when the search of this list ends here. */
bool lookup_try_file(struct lookup *lookup, const char *path, enum how step, const char *hwcaps, bool last_in_folder);
/* The object as the loader model sees it: its RPATH and RUNPATH expanded ($ORIGIN its folder), and
   the object whose DT_NEEDED loaded it. */
const struct loader_object *lookup_model_of(const struct resolver *resolver, struct object *object);
/* glibc's search for a name without a slash (src/loader/search_order.c). */
void lookup_search(struct lookup *lookup, const struct loader_process *process);
/* The what-if: the runtime takes part in this lookup (the policy on, an NVIDIA name that is no
   driver library, a dlopen by an NVIDIA library or a DT_NEEDED within the runtime's depth; under
   the audit front, tree->audit_front, every search). */
bool lookup_runtime_helps(const struct resolver *resolver, const struct tree *tree, const struct object *asker,
			  const struct dependency *dependency);
/* The runtime's turn after the loader's search, as the policy decides it: the lookup's outcome is
   the runtime's copy when the policy takes one. */
void lookup_ask_runtime(struct lookup *lookup, struct dependency *dependency);

/* Looks dependency up for asker and adds what it resolves to. */
void resolve_dependency(const struct resolver *resolver, struct tree *tree, struct object *asker, struct dependency *dependency,
			const struct loader_process *process);
/* Counts a dependency that was not found: a missing one, or an optional run-time one. */
void resolve_count_missing(struct tree *tree, const struct dependency *dependency);
/* The run-time dependents of object, each resolved as its own dlopen(name) would be. */
void resolve_run_time(const struct resolver *resolver, struct tree *tree, struct object *object, const struct loader_process *process);
