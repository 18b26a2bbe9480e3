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

char *mixed_origin_installation(const char *folder)
{
	char root[PATH_MAX];
	if (!search_installation(folder, root, sizeof(root)))
		return strdup(folder);
	char *real = realpath(root, NULL);
	return real ? real : strdup(root);
}

/* The installation of folder, worked out once a run (realpath walks every component). */
static const char *installation_of(struct file_probe *probe, const char *folder)
{
	char *installation = string_map_get(&probe->installations, folder);
	if (!installation && (installation = mixed_origin_installation(folder)) &&
	    !string_map_put(&probe->installations, folder, installation)) {
		free(installation);
		installation = NULL;
	}
	return installation;
}

static void check_entry(struct tree *tree, struct file_probe *probe, const struct object *asker, const struct dependency *d)
{
	if (!d->object || !is_nvidia(d->family) || d->action == RUNTIME_COHERENT)
		return;
	if (strcmp(asker->origin, d->object->origin) == 0)
		return; /* one folder: one installation */
	const char *own = installation_of(probe, asker->origin), *theirs = installation_of(probe, d->object->origin);
	if (own && theirs && strcmp(own, theirs) != 0) {
		enum how how;
		char *copy = what_if_candidate(probe, d->name, asker->origin, true, &how, NULL);
		struct warning warning = {
			.kind = WARNING_MIXED_ORIGIN,
			.library = asker->path,
			.dependency = d->name,
			.got = d->object->path,
			.own = copy,
			.how = d->how,
			.run_time = d->run_time,
		};
		/* The default policy keeps the loader's choice; only coherent takes the asker's own copy, and
		   no policy replaces a library the process has loaded already (--pid): first loaded wins. */
		const char *remedy = !copy ? ""
				     : d->object->preloaded
					     ? " (it is loaded in the process already: first loaded wins under every policy, coherent too; "
					       "only loading the library's own copy first avoids it)"
				     : tree->what_if && tree->policy == POLICY_COHERENT ? ""
				     : tree->what_if && tree->policy == POLICY_FALLBACK
					     ? " (the fallback policy keeps the loader's choice; the coherent policy would take it)"
					     : " (the runtime's default policy, fallback, keeps the loader's choice; the coherent policy would take it)";
		if (asprintf(&warning.text, "mixed origins: %s (%s) gets %s%s from %s (%s)%s%s%s", asker->path,
			     libnames[asker->family].family, d->name, d->run_time ? " at run time" : "", d->object->path,
			     how_name(d->how), copy ? "; its own installation holds " : "", copy ? copy : "", remedy) >= 0)
			tree_add_warning(tree, &warning);
		free(warning.text);
		free(copy);
	}
}

void mixed_origin_check(struct tree *tree, struct file_probe *probe)
{
	for (size_t i = 0; i < tree->object_count; i++) {
		const struct object *asker = tree->objects[i];
		if (!is_nvidia(asker->family))
			continue;
		for (size_t k = 0; k < object_entry_count(asker); k++)
			check_entry(tree, probe, asker, object_entry(asker, k));
	}
}
