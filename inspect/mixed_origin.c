#define _GNU_SOURCE
#include "mixed_origin.h"

#include "libnames.h"
#include "search.h"
#include "what_if.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_nvidia(int family) { return family >= 0 && !libnames_is_driver(family); }

/* The installation a folder belongs to: for a CUDA 12 wheel (site-packages/nvidia/PKG/lib) the
   nvidia folder holding all its components, else the folder itself, by its real path. */
static char *installation_of(const char *folder)
{
	char root[PATH_MAX];
	if (search_wheel_root(folder, root, sizeof(root), NULL)) {
		char *real = realpath(root, NULL);
		return real ? real : strdup(root);
	}
	char *real = realpath(folder, NULL);
	return real ? real : strdup(folder);
}

void mixed_origin_check(struct tree *tree, struct file_probe *probe)
{
	for (size_t i = 0; i < tree->object_count; i++) {
		const struct object *asker = tree->objects[i];
		if (!is_nvidia(asker->family))
			continue;
		char *own = NULL;
		for (size_t k = 0; k < asker->needed_count; k++) {
			const struct dependency *d = &asker->needed[k];
			if (!d->object || !is_nvidia(d->family) || d->action == RUNTIME_COHERENT)
				continue;
			if (strcmp(asker->origin, d->object->origin) == 0)
				continue; /* one folder: one installation */
			if (!own)
				own = installation_of(asker->origin);
			char *theirs = installation_of(d->object->origin);
			if (own && theirs && strcmp(own, theirs) != 0) {
				enum how how;
				char *copy = what_if_candidate(probe, d->name, asker->origin, true, &how);
				tree_warn(tree, "mixed origins: %s (%s) gets %s from %s (%s)%s%s", asker->path,
					  libnames[asker->family].family, d->name, d->object->path, how_name(d->how),
					  copy ? "; its own installation holds " : "", copy ? copy : "");
				free(copy);
			}
			free(theirs);
		}
		free(own);
	}
}
