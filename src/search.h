/* Candidate paths for a library name, in the order a policy tries them: first, when the front must
   know whether the loader finds the name on its own, the loader's own search (src/loader); then the
   runtime's places. No hooks, no loading: the front decides what a candidate is worth (its file
   check) and what to do with it. */
#pragma once

#include "loader/search_order.h"
#include "platform.h"

#include <stdbool.h>
#include <stddef.h>

enum search_step {
	SEARCH_LOADER,          /* the loader's own search (the loader step says which part) */
	SEARCH_CALLER_FOLDER,   /* the folder of the NVIDIA library that asked */
	SEARCH_ORIGIN,          /* a registered origin */
	SEARCH_WHEEL_SIBLING,   /* site-packages/nvidia/<other>/lib beside an origin */
	SEARCH_NVINTERPOSE_PATH,
};

struct search_request {
	const char *name; /* a bare file name */
	/* The loader's search for name, walked first. None when asker is NULL. */
	enum loader_lookup lookup;
	const struct loader_object *asker;
	const struct loader_process *process;
	const struct loader_machine *machine; /* the subfolders it tries in each folder (NULL: unknown) */
	/* What ld.so.cache holds for name, looked up by the front (the loader's cache step), or NULL. */
	const char *cache_entry;
	const char *caller_folder;       /* NULL unless the asker is an NVIDIA library */
	bool caller_folder_only;         /* only the caller's folder and its wheel siblings (coherent) */
	bool loader_only;                /* the loader's search alone (a driver library's miss) */
	/* When set, called with every folder tried, in order, once each, whether or not it holds the
	   name (folder NULL for the loader's ld.so.cache step), with the visitor's arg: what a miss
	   lists as "looked". */
	void (*tried)(const char *folder, enum search_step step, enum loader_step loader_step, void *arg);
	/* The process the trust rule judges for (src/trust.h): NULL for this one. */
	const struct platform_identity *who;
};

/* Called with each candidate path that exists as a file; returns true to stop the search. For
   SEARCH_LOADER, loader_step is the loader's step (LOADER_LISTED otherwise), and path is NULL for a
   folder where the loader may find the name in subfolders the model cannot name. */
typedef bool (*search_visit)(const char *path, enum search_step step, enum loader_step loader_step, void *arg);

/* Walks the candidates; true when the visitor stopped it. Each folder is tried once. Wheel siblings
   and NVINTERPOSE_PATH entries that the trust rule refuses are skipped, with a warning. */
bool search_candidates(const struct search_request *request, search_visit visit, void *arg);

/* Called with each of the runtime's places; returns true to stop. */
typedef bool (*search_place_visit)(const char *folder, enum search_step step, void *arg);
/* The runtime's own places for request (no loader step), in the order search_candidates tries
   them: the caller's folder, the registered origins, the wheel siblings of both, NVINTERPOSE_PATH
   (with caller_folder_only, the caller's folder and its siblings). Every folder is visited as it is
   met, whether or not it exists or the trust rule would take a file there: for the inspector,
   which looks at what the folders hold. True when the visitor stopped it. */
bool search_places(const struct search_request *request, search_place_visit visit, void *arg);

const char *search_step_name(enum search_step step);
/* The step as a word for machines: the loader's step name (loader.h) for SEARCH_LOADER, else
   "caller_folder", "registered_origin", "wheel_sibling", "nvinterpose_path". */
const char *search_step_key(enum search_step step, enum loader_step loader_step);

/* The wheel-sibling rule. For ".../site-packages/nvidia/PKG/lib" (on Windows "bin"), writes
   ".../site-packages/nvidia" to parent and the last component ("lib") to leaf. False otherwise. */
bool search_wheel_root(const char *folder, char *parent, size_t size, const char **leaf);

/* The installation a folder belongs to: for a wheel folder (.../site-packages/nvidia/PKG/lib, the
   CUDA 13 wheels' nvidia/cu13/lib too) the nvidia folder that holds all its components, else the
   folder itself. Written to out; false when it does not fit. */
bool search_installation(const char *folder, char *out, size_t size);
/* True when folders a and b belong to one installation, by the folders' identities (links and
   other names of one folder are one). False when either cannot be examined. The rule of mixed
   origins, the inspector's and the runtime's. */
bool search_same_installation(const char *a, const char *b);
