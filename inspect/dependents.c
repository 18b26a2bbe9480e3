/* Run-time dependents: the libraries an NVIDIA library loads by name once it runs (the table's
   runtime list, of which those the file itself names: carried_names.h), each looked up as its own
   dlopen(name) would be, after the tree it is part of is loaded. The name is the one the file
   carries; where it carries only a base its own code completes, a file name is chosen. */
#define _GNU_SOURCE
#include "resolving.h"

#include "carried_names.h"
#include "libnames.h"
#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file name a run-time dependent is looked up by. The table names only its family, so the
   name is that of a file of the family where it would be met. That is already loaded, in the
   asker's folder, along the asker's dlopen search (its folders, ld.so.cache's names), among the
   names the caller knows (--scan gives every copy it found) and, for the what-if, in the runtime's
   places. The fit rule (libnames_dependent_fit: the same .alt-ness, the asker's major first) ranks
   them, then where each was met, first met first. */
struct dependent_choice {
	const struct resolver *resolver;
	const struct libname_match *parent;
	int family;
	char *name;
	int score;
};

static void consider(struct dependent_choice *choice, const char *name, int bonus)
{
	int fit = libnames_dependent_fit(choice->parent, choice->family, name);
	if (fit < 0)
		return;
	int score = 3 * fit + bonus;
	if (choice->name && score <= choice->score)
		return;
	free(choice->name);
	choice->name = strdup(name);
	choice->score = score;
}

static void consider_names(struct dependent_choice *choice, const struct family_names *names, int bonus)
{
	for (size_t i = 0; names && i < names->count; i++)
		if (names->families[i] == choice->family)
			consider(choice, names->names[i], bonus);
}

static void consider_folder(struct dependent_choice *choice, const char *folder, int bonus)
{
	consider_names(choice, family_files_in_folder(choice->resolver->family_files, folder), bonus);
}

static enum loader_visit_result consider_loader_folder(const char *folder, enum loader_step step, void *arg)
{
	struct dependent_choice *choice = arg;
	if (step == LOADER_CACHE)
		consider_names(choice, family_files_in_cache(choice->resolver->family_files), 0);
	/* ldconfig put what the system folders hold in the cache: they are not listed when it was read
	   (they are big, and the cache's names came just before). */
	else if (step != LOADER_DEFAULT || !choice->resolver->cache)
		consider_folder(choice, folder, 0);
	return LOADER_NEXT_FOLDER;
}

/* One of the runtime's places (search.h): what-if only. */
static bool consider_place(const char *folder, enum search_step step, void *arg)
{
	(void)step;
	consider_folder(arg, folder, 0);
	return false;
}

static char *choose_dependent_name(const struct resolver *r, const struct tree *tree, const struct object *asker,
				   const struct libname_match *parent, int family, const struct loader_process *process)
{
	struct dependent_choice choice = { .resolver = r, .parent = parent, .family = family };
	for (size_t i = 0; i < tree->object_count; i++) {
		const struct object *o = tree->objects[i];
		if (o->family == family)
			consider(&choice, libnames_basename(o->facts && o->facts->soname ? o->facts->soname : o->path), 2);
	}
	consider_folder(&choice, asker->origin, 1);
	/* What is met later scores at most 3 * its fit: a name already loaded or beside the asker that
	   reaches it is not beaten, and the search need not be listed. */
	const char *own = libnames[parent->family].wheel_folder;
	int ceiling = 3 * (own[0] && strcmp(own, libnames[family].wheel_folder) == 0 ? 2 : 1);
	if (choice.name && choice.score >= ceiling)
		return choice.name;
	loader_search_order(LOADER_BARE_NAME, lookup_model_of(r, (struct object *)asker), process, consider_loader_folder, &choice);
	consider_names(&choice, r->known_names, 0);
	if (r->what_if && r->what_if->policy != POLICY_OFF) {
		struct search_request places = { .caller_folder = asker->origin };
		search_places(&places, consider_place, &choice);
	}
	return choice.name;
}

/* A search for a family of which no file was met: each place the asker's dlopen would look. */
struct family_lookup {
	struct lookup lookup; /* first: the visitor's argument is either */
	int family;
};

static enum loader_visit_result record_no_file(const char *folder, enum loader_step step, void *arg)
{
	struct family_lookup *search = arg;
	struct lookup *lookup = &search->lookup;
	char result[128];
	if (step == LOADER_CACHE) {
		snprintf(result, sizeof(result), "no %s entry", libnames[search->family].family);
		lookup_record(lookup, lookup->resolver->cache ? lookup->resolver->cache_path : "ld.so.cache", HOW_CACHE,
		       lookup->resolver->cache ? result : "not read", false);
	} else {
		snprintf(result, sizeof(result), "no %s file", libnames[search->family].family);
		lookup_record(lookup, folder[0] ? folder : ".", (enum how)step, result, false);
	}
	return LOADER_NEXT_FOLDER;
}

/* No file of the family anywhere: the entry is named by the family's pattern ("libnvrtc-builtins.so*")
   and lists the folders looked in. */
static void resolve_unnamed_dependent(const struct resolver *r, struct tree *tree, struct object *asker,
				      const struct libname_match *parent, struct dependency *dependency,
				      const struct loader_process *process)
{
	const struct libname_row *row = &libnames[dependency->family];
	if (asprintf(&dependency->name, "%s%s.so*", row->linux_stem, parent->alt ? ".alt" : "") < 0)
		dependency->name = NULL;
	struct family_lookup search = {
		.lookup = { .resolver = r, .tree = tree, .asker = asker, .name = dependency->name, .kind = LOADER_BARE_NAME,
			    .every_attempt = true },
		.family = dependency->family,
	};
	loader_search_order(LOADER_BARE_NAME, lookup_model_of(r, asker), process, record_no_file, &search);
	dependency->how = HOW_NOT_FOUND;
	dependency->attempts = search.lookup.attempts;
	dependency->attempt_count = search.lookup.attempt_count;
	resolve_count_missing(tree, dependency);
}

struct run_time_walk {
	const struct resolver *resolver;
	struct tree *tree;
	struct object *object;
	const struct loader_process *process;
	struct libname_match parent;
	size_t count;
	/* The names the file carries (carried_names.h); NULL when they could not be read. */
	const struct family_names *carried;
};

/* Whether the file carries a name of family (carried_names.h). */
static bool carries_family(const struct family_names *carried, int family)
{
	for (size_t i = 0; i < carried->count; i++)
		if (carried->families[i] == family)
			return true;
	return false;
}

static bool needed_has_family(const struct object *object, int family)
{
	for (size_t i = 0; i < object->needed_count; i++)
		if (object->needed[i].family == family)
			return true;
	return false;
}

static bool resolve_one_dependent(int family, bool required, void *arg)
{
	struct run_time_walk *walk = arg;
	struct object *object = walk->object;
	/* One it names in DT_NEEDED is loaded before it runs: its dlopen finds that object. */
	if (libnames_is_driver(family) || needed_has_family(object, family))
		return false;
	/* A family the file names nowhere is not one it loads (Debian's cuFFT 10 names neither NVRTC nor
	   nvJitLink, which the table lists for cuFFT 12). */
	if (walk->carried && !carries_family(walk->carried, family))
		return false;
	/* The name it asks by, as it carries it: of its names of the family the one that fits best (an
	   unversioned name of another component fits, and is shown as asked); none when no name of the
	   family it carries is used as it is (cuDNN's "libcudnn_graph.so", which cuDNN completes with
	   its own version). */
	struct dependent_choice carried = { .resolver = walk->resolver, .parent = &walk->parent, .family = family };
	consider_names(&carried, walk->carried, 0);
	struct dependency *dependency = &object->runtime[object->runtime_count++];
	dependency->family = family;
	dependency->run_time = true;
	dependency->required = required;
	dependency->name = carried.name ? carried.name
				       : choose_dependent_name(walk->resolver, walk->tree, object, &walk->parent, family, walk->process);
	if (dependency->name)
		resolve_dependency(walk->resolver, walk->tree, object, dependency, walk->process);
	else
		resolve_unnamed_dependent(walk->resolver, walk->tree, object, &walk->parent, dependency, walk->process);
	return false;
}

static bool count_dependent(int family, bool required, void *arg)
{
	(void)family;
	(void)required;
	(*(size_t *)arg)++;
	return false;
}

/* The libraries an NVIDIA library loads by name once it runs (the table's runtime list), each
   looked up as its own dlopen(name) would be, after the tree it is part of is loaded. */
void resolve_run_time(const struct resolver *r, struct tree *tree, struct object *object, const struct loader_process *process)
{
	if (object->family < 0 || libnames_is_driver(object->family) || !object->facts || object->preloaded || object->interpreter)
		return;
	const char *list = libnames[object->family].runtime;
	struct run_time_walk walk = { .resolver = r, .tree = tree, .object = object, .process = process };
	const char *own_name = object->facts->soname ? object->facts->soname : object->path;
	if (!list[0] || libnames_match_linux(libnames_basename(own_name), &walk.parent) < 0)
		return;
	libnames_foreach_dependent(list, count_dependent, &walk.count);
	if (!(object->runtime = calloc(walk.count, sizeof(*object->runtime))))
		return;
	walk.carried = carried_names_of(r->probe, object->path, object->family);
	libnames_foreach_dependent(list, resolve_one_dependent, &walk);
}
