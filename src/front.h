/* What the shared rooms ask of the platform front (src/linux/, src/windows/). */
#pragma once

#include "nvinterpose.h"

/* Makes the registry current: registers the origins of libraries loaded since the last call. */
void front_sync(void);

/* The attach scan again (nvi_rescan): returns the number of dependents it loaded. */
int front_rescan(void);

/* What attaching patched (nvi_list_patches): fills up to capacity entries, returns how many. */
int front_list_patches(struct nvi_patch *patches, size_t capacity);

/* The API of another copy of the runtime that serves this process (one runtime per process: a
   copy that finds one loaded before it forwards its API there). A function that copy lacks is
   NULL. */
struct front_api {
	const char *(*version)(void);
	int (*family_origin)(const char *family, char *folder, size_t size);
	int (*register_folder)(const char *family, const char *folder);
	int (*list_origins)(const char *family, struct nvi_origin *origins, size_t capacity);
	int (*rescan)(void);
	int (*list_patches)(struct nvi_patch *patches, size_t capacity);
	int (*list_families)(const char **families, size_t capacity);
	int (*report)(struct nvi_report_totals *totals, struct nvi_report_entry *entries, size_t capacity);
};

/* That copy's API, or NULL when this copy is the process's runtime. */
const struct front_api *front_primary(void);
