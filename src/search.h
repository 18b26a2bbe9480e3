/* Candidate paths for a library name, in the order a policy tries them. No hooks, no loading: the
   front decides what a candidate is worth (its file check) and what to do with it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum search_step {
	SEARCH_CALLER,          /* the caller's own search list, as the loader walks it */
	SEARCH_CALLER_FOLDER,   /* the folder of the NVIDIA library that asked */
	SEARCH_ORIGIN,          /* a registered origin */
	SEARCH_WHEEL_SIBLING,   /* site-packages/nvidia/<other>/lib beside an origin */
	SEARCH_NVINTERPOSE_PATH,
};

struct search_request {
	const char *name;                /* a bare file name */
	const char *const *caller_dirs;  /* the loader's folders for the caller, in order */
	size_t caller_dir_count;
	const char *caller_folder;       /* NULL unless the caller is an NVIDIA library */
	bool include_caller_dirs;
	bool caller_folder_only;         /* only the caller's folder and its wheel siblings (coherent) */
};

/* Called with each candidate path that exists as a file; returns true to stop the search. */
typedef bool (*search_visit)(const char *path, enum search_step step, void *arg);

/* Walks the candidates; true when the visitor stopped it. Each folder is tried once. */
bool search_candidates(const struct search_request *request, search_visit visit, void *arg);

const char *search_step_name(enum search_step step);

/* The wheel-sibling rule: for ".../site-packages/nvidia/PKG/lib" (Windows: "bin"), writes
   ".../site-packages/nvidia" to parent and the last component ("lib") to leaf; false otherwise. */
bool search_wheel_root(const char *folder, char *parent, size_t size, const char **leaf);
