/* Resolves a file's dependency tree as glibc's loader would, breadth first like _dl_map_object_deps,
   and, given a what-if, as it would be with the runtime. */
#pragma once

#include "family_files.h"
#include "file_probe.h"
#include "loader/ld_cache.h"
#include "loader_host.h"
#include "tree.h"
#include "what_if.h"

struct resolver {
	struct loader_host *host;
	struct file_probe *probe;
	const struct ld_cache *cache; /* NULL: none (absent, unreadable, or --cache none) */
	const char *cache_path;
	const struct what_if *what_if; /* NULL: the loader alone */
	/* The loader alone: the what-if of the default policy, asked when a tree misses something, for
	   what the runtime would supply (tree->would_supply); NULL: not asked. */
	const struct what_if *default_view;
	struct family_files *family_files; /* where run-time dependents are named from */
	const struct family_names *known_names; /* more names to choose from (--scan: every copy found), or NULL */
	size_t max_objects;            /* a tree's bound (0: none) */
	size_t run_max_objects;        /* the run's bound, for messages */
	size_t *run_objects_left;      /* what is left of it (NULL: no bound), taken by each tree */
};

/* Fills tree for file. 0 when the file could be inspected (the tree says what is missing); -1 with
   a message when it cannot be read or is not something this loader loads (tree->root may still
   hold its facts). */
int resolve_tree(const struct resolver *resolver, const char *file, struct tree *tree, char *message, size_t size);
