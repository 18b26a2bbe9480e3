/* One name looked up in a tree as glibc's loader looks for it, step by step after elf/dl-load.c
   (_dl_map_object, open_path, open_verify); the order itself is the loader model's (src/loader).
   Then, for the what-if, the runtime's turn, which the policy (src/policy.c) decides on what the
   loader found. Last, what the lookup found is added to the tree: an object, one loaded already, or
   a missing dependency with every place looked. */
#define _GNU_SOURCE
#include "resolving.h"

#include "libnames.h"
#include "platform.h"
#include "policy.h"
#include "search.h"

#include "what_if.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lookup_record(struct lookup *lookup, const char *path, enum how step, const char *result, bool passed_over)
{
	if (!passed_over && !lookup->every_attempt)
		return;
	if (lookup->attempt_count == lookup->attempt_capacity) {
		size_t capacity = lookup->attempt_capacity ? 2 * lookup->attempt_capacity : 16;
		struct attempt *grown = realloc(lookup->attempts, capacity * sizeof(*grown));
		if (!grown)
			return;
		lookup->attempts = grown;
		lookup->attempt_capacity = capacity;
	}
	struct attempt *a = &lookup->attempts[lookup->attempt_count++];
	a->path = strdup(path);
	a->step = step;
	a->result = strdup(result);
	a->passed_over = passed_over;
}


/* What one candidate file means for the search. True when the search of this list ends here. */
bool lookup_try_file(struct lookup *lookup, const char *path, enum how step, const char *hwcaps, bool last_in_folder)
{
	const struct probed_file *file = file_probe_path(lookup->resolver->probe, path);
	if (!file)
		return false;
	switch (file->result) {
	case PROBE_ABSENT:
		lookup_record(lookup, path, step, "absent", false);
		return false;
	case PROBE_SKIPPED: {
		char *result = NULL;
		if (asprintf(&result, "skipped: %s", file->reason) >= 0)
			lookup_record(lookup, path, step, result, true);
		free(result);
		return false;
	}
	case PROBE_STOPS_LIST:
		lookup_record(lookup, path, step, file->reason, true);
		/* open_path looks at errno once per folder, after its last candidate there. */
		return last_in_folder;
	case PROBE_FATAL:
		lookup_record(lookup, path, step, file->reason, true);
		if (asprintf(&lookup->error, "%s: %s", path, file->reason) < 0)
			lookup->error = NULL;
		lookup->stop = true;
		return true;
	case PROBE_FOUND:
		lookup->how = step;
		lookup->path = strdup(path);
		lookup->file = file;
		lookup->hwcaps = hwcaps ? strdup(hwcaps) : NULL;
		return true;
	}
	return false;
}

struct folder_walk {
	struct lookup *lookup;
	enum how step;
	bool ends;
};

/* One candidate of a folder (the loader model names them): a subfolder's copy, or the folder's own
   (the last, where open_path looks at errno). */
static bool try_candidate(const char *path, const char *subdir, void *arg)
{
	struct folder_walk *walk = arg;
	static const char hwcaps[] = "glibc-hwcaps/";
	const char *hwcaps_name = strncmp(subdir, hwcaps, strlen(hwcaps)) == 0 ? subdir + strlen(hwcaps) : NULL;
	walk->ends = lookup_try_file(walk->lookup, path, walk->step, hwcaps_name, subdir[0] == '\0');
	return walk->ends;
}

/* open_path for one folder: the subfolders the loader tries there (glibc-hwcaps, and the legacy
   hwcap folders before glibc 2.37), then the folder itself. The loader is asked for them only when
   the folder has such subfolders: otherwise the folder's own file is the only candidate. */
static enum loader_visit_result search_folder(struct lookup *lookup, const char *folder, enum how step)
{
	struct loader_host *host = lookup->resolver->host;
	const struct folder_facts *facts = file_probe_folder(lookup->resolver->probe, folder);
	struct folder_walk walk = { lookup, step, false };
	if (!facts || !facts->exists) {
		char buffer[PATH_MAX];
		char *path = facts ? file_probe_join_into(buffer, sizeof(buffer), folder, lookup->name) : NULL;
		if (path)
			lookup_record(lookup, path, step, "no such folder", false);
		if (path != buffer)
			free(path);
		return LOADER_NEXT_FOLDER;
	}
	static const struct loader_machine plain = { .subdirs_known = true, .subdir_count = 1 };
	const struct loader_machine *machine = &plain;
	if (facts->has_glibc_hwcaps || facts->has_legacy) {
		loader_host_hwcaps(host);
		machine = &host->machine;
	}
	switch (loader_folder_files(machine, folder, NULL, lookup->name, try_candidate, &walk)) {
	case LOADER_FOLDER_TAKEN: return lookup->path || lookup->stop ? LOADER_STOP : LOADER_NEXT_STEP;
	case LOADER_FOLDER_UNKNOWN:
		tree_warn(lookup->tree, "%s has a copy of %s in an hwcap subfolder, but the loader did not say which subfolders it searches (%s); "
			  "the search is followed past this folder", folder, lookup->name, host->hwcaps_problem ? host->hwcaps_problem : "unknown");
		break;
	case LOADER_FOLDER_NONE: break;
	}
	return LOADER_NEXT_FOLDER;
}

static bool under_default_folder(const struct loader_host *host, const char *path)
{
	for (size_t i = 0; i < host->default_count; i++) {
		size_t n = strlen(host->default_dirs[i]);
		if (strncmp(path, host->default_dirs[i], n) == 0 && (path[n] == '/' || host->default_dirs[i][n - 1] == '/'))
			return true;
	}
	return false;
}

/* _dl_load_cache_lookup: the best glibc-hwcaps entry this loader searches, else the first plain one. */
static const struct ld_cache_entry *choose_cache_entry(struct lookup *lookup, const struct ld_cache_entry *entries, size_t count)
{
	struct loader_host *host = lookup->resolver->host;
	const struct ld_cache_entry *best = NULL, *plain = NULL;
	size_t best_priority = SIZE_MAX;
	for (size_t i = 0; i < count; i++) {
		if (entries[i].hwcaps) {
			if (loader_host_hwcaps(host) != HWCAPS_KNOWN) {
				tree_warn(lookup->tree, "ld.so.cache holds %s for the glibc-hwcaps subfolder %s, but the loader did not say which it searches; not taken here",
					  entries[i].path, entries[i].hwcaps);
				continue;
			}
			for (size_t k = 0; k < host->hwcaps_count && k < best_priority; k++)
				if (strcmp(host->hwcaps[k], entries[i].hwcaps) == 0) {
					best = &entries[i];
					best_priority = k;
				}
		} else if (entries[i].legacy_hwcap) {
			tree_warn(lookup->tree, "ld.so.cache holds %s with a legacy hwcap mask, which the inspector does not evaluate", entries[i].path);
		} else if (!plain) {
			plain = &entries[i];
		}
	}
	return best ? best : plain;
}

static bool search_cache(struct lookup *lookup)
{
	const struct resolver *r = lookup->resolver;
	if (!r->cache) {
		lookup_record(lookup, "ld.so.cache", HOW_CACHE, "not read", false);
		return false;
	}
	struct ld_cache_entry entries[32];
	size_t count = ld_cache_lookup(r->cache, lookup->name, entries, sizeof(entries) / sizeof(entries[0]));
	if (count > sizeof(entries) / sizeof(entries[0]))
		count = sizeof(entries) / sizeof(entries[0]);
	const struct ld_cache_entry *entry = choose_cache_entry(lookup, entries, count);
	if (!entry) {
		lookup_record(lookup, r->cache_path, HOW_CACHE, "no entry", false);
		return false;
	}
	/* A NODEFLIB object takes no cache entry from under the default folders. */
	if (lookup->asker->facts->nodeflib && under_default_folder(r->host, entry->path)) {
		lookup_record(lookup, entry->path, HOW_CACHE, "passed over: the asker has NODEFLIB and the entry lies in a default folder", true);
		return false;
	}
	return lookup_try_file(lookup, entry->path, HOW_CACHE, entry->hwcaps, true) && (lookup->path || lookup->stop);
}

/* The object as the loader model sees it: its RPATH and RUNPATH expanded ($ORIGIN its folder), and
   the object whose DT_NEEDED loaded it. */
const struct loader_object *lookup_model_of(const struct resolver *r, struct object *object)
{
	if (object->rpath_count >= 0)
		return &object->model;
	object->rpath_count = object->runpath_count = 0;
	const struct elf_facts *facts = object->facts;
	/* An object with a RUNPATH has no RPATH for the loader (get-dynamic-info.h). */
	if (facts && !facts->runpath) {
		int n = loader_host_expand(r->host, facts->rpath, ":", object->origin, &object->rpath);
		object->rpath_count = n > 0 ? n : 0;
	}
	if (facts) {
		int n = loader_host_expand(r->host, facts->runpath, ":", object->origin, &object->runpath);
		object->runpath_count = n > 0 ? n : 0;
	}
	object->model = (struct loader_object){
		.rpath = { (const char *const *)object->rpath, (size_t)object->rpath_count },
		.runpath = { (const char *const *)object->runpath, (size_t)object->runpath_count },
		.has_runpath = facts && facts->runpath,
		.nodeflib = facts && facts->nodeflib,
		.loader = object->loader ? lookup_model_of(r, object->loader) : NULL,
	};
	return &object->model;
}

static enum loader_visit_result visit_folder(const char *folder, enum loader_step step, void *arg)
{
	struct lookup *lookup = arg;
	if (step == LOADER_CACHE)
		return search_cache(lookup) ? LOADER_STOP : LOADER_NEXT_FOLDER;
	return search_folder(lookup, folder, (enum how)step); /* the loader's steps are the first hows */
}

/* glibc's search for a DT_NEEDED name without a slash (src/loader/search_order.c). The tree's root
   is the program, as it is for `ld.so --list`. */
void lookup_search(struct lookup *lookup, const struct loader_process *process)
{
	const struct loader_object *asker = lookup_model_of(lookup->resolver, lookup->asker);
	if (!loader_search_order(lookup->kind, asker, process, visit_folder, lookup) && asker->nodeflib)
		lookup_record(lookup, "(default folders)", HOW_DEFAULT, "not searched: the asker has NODEFLIB", false);
}

bool lookup_runtime_helps(const struct resolver *r, const struct tree *tree, const struct object *asker, const struct dependency *dependency)
{
	if (!r->what_if || r->what_if->policy == POLICY_OFF || dependency->family < 0 || libnames_is_driver(dependency->family))
		return false;
	/* The audit front is asked every search the loader makes, whoever needs the name. */
	if (tree->audit_front)
		return true;
	/* A dlopen by an NVIDIA library reaches the hooks wherever it sits; a DT_NEEDED only as deep as
	   the runtime's help for a library loaded by path goes. */
	return dependency->run_time || (asker->runtime_depth >= 0 && asker->runtime_depth <= POLICY_NEEDED_MAX_DEPTH);
}

/* The runtime's copy, as the policy decides on what the loader found (the first loaded was taken
   before, as the loader takes it). The copies are looked for as the policy asks for them. */
static char *runtime_copy(struct lookup *lookup, struct dependency *dependency, enum how *how)
{
	struct file_probe *probe = lookup->resolver->probe;
	struct policy_question question = {
		.policy = lookup->resolver->what_if->policy,
		.request = dependency->run_time ? POLICY_DLOPEN : lookup->tree->audit_front ? POLICY_AUDIT : POLICY_NEEDED,
		.loader = lookup->path ? POLICY_LOADER_FINDS : POLICY_LOADER_MISSES,
		.asker_is_nvidia = (!dependency->run_time && !lookup->tree->audit_front) || lookup->asker->family >= 0,
		.loaded_now = POLICY_NO,
	};
	char *own = NULL, *fallback = NULL;
	enum how own_how = HOW_REGISTERED_ORIGIN, fallback_how = HOW_REGISTERED_ORIGIN;
	for (;;) {
		struct policy_answer answer = policy_decide(&question);
		switch (answer.action) {
		case POLICY_ASK_OWN:
			own = what_if_candidate(probe, lookup->name, lookup->asker->origin, true, &own_how, NULL);
			question.own = own ? POLICY_YES : POLICY_NO;
			question.own_is_loaders = own && lookup->path && platform_same_file(own, lookup->path);
			continue;
		case POLICY_ASK_FALLBACK:
			fallback = what_if_candidate(probe, lookup->name, lookup->asker->origin, false, &fallback_how,
						     &question.fallback_step);
			question.fallback = fallback ? POLICY_YES : POLICY_NO;
			continue;
		case POLICY_LOAD_OWN:
			dependency->action = RUNTIME_COHERENT;
			*how = own_how;
			free(fallback);
			return own;
		case POLICY_LOAD_FALLBACK:
			dependency->action = RUNTIME_PRELOAD;
			*how = fallback_how;
			free(own);
			return fallback;
		default:
			free(own);
			free(fallback);
			return NULL;
		}
	}
}

/* The runtime's turn: when the policy takes a copy the tree has it in the loader's place. Under
   coherent the loader's own choice is kept beside it (NULL when it had none). */
void lookup_ask_runtime(struct lookup *lookup, struct dependency *dependency)
{
	enum how how;
	char *copy = runtime_copy(lookup, dependency, &how);
	const struct probed_file *file = copy ? file_probe_path(lookup->resolver->probe, copy) : NULL;
	if (!file || file->result != PROBE_FOUND) {
		free(copy);
		dependency->action = RUNTIME_NONE;
		return;
	}
	if (dependency->action == RUNTIME_COHERENT)
		dependency->loader_path = lookup->path;
	else
		free(lookup->path);
	free(lookup->hwcaps);
	free(lookup->error);
	lookup->path = copy;
	lookup->file = file;
	lookup->how = how;
	lookup->hwcaps = NULL;
	lookup->error = NULL;
	lookup->stop = false;
	lookup->tree->action_count++;
}

/* ---- what a lookup adds to the tree ---- */

void resolve_count_missing(struct tree *tree, const struct dependency *dependency)
{
	if (dependency->run_time && !dependency->required)
		tree->optional_missing++;
	else
		tree->missing++;
}

/* Past its bound the tree follows no new object: the dependency is found (its file is named) and
   the tree says it was cut, rather than calling the file missing. */
static void stop_at_the_bound(const struct resolver *r, struct tree *tree, struct dependency *dependency, char *path)
{
	dependency->not_followed = true;
	dependency->path = path;
	if (tree->cut)
		return;
	tree->cut = true;
	struct warning warning = { .kind = WARNING_CUT, .how = dependency->how };
	int n = tree->max_objects < r->max_objects
			? asprintf(&warning.text, "this run reached its bound of %zu objects in all: %s and the other dependencies "
						  "past it are not followed (exit status 3)", r->run_max_objects, dependency->name)
			: asprintf(&warning.text, "the tree reached its bound of %zu objects (--max-objects): %s and the other "
						  "dependencies past it are not followed (exit status 3)", tree->max_objects, dependency->name);
	if (n >= 0)
		tree_add_warning(tree, &warning);
	free(warning.text);
}

/* A new object of the tree, for the file found. */
static void add_found(struct lookup *lookup, struct dependency *dependency)
{
	struct object *object = tree_new_object(lookup->tree, lookup->path, lookup->file->facts);
	free(lookup->path);
	if (!object)
		return;
	tree_set_inode(lookup->tree, object, lookup->file->device, lookup->file->inode);
	/* dlopen maps a run-time dependent with no loader (__RTLD_CALLMAP): its own needs never see
	   the RPATH of the library that asked. */
	object->loader = dependency->run_time ? NULL : lookup->asker;
	object->dlopened = dependency->run_time;
	object->depth = lookup->asker->depth + 1;
	tree_add_name(lookup->tree, object, lookup->name);
	/* The runtime helps the needs of what it loads by path: a library it loaded in the loader's
	   place, and (to its bound) the dependencies it loaded for one. */
	if (dependency->action != RUNTIME_NONE)
		object->runtime_depth = dependency->run_time ? 0 : lookup->asker->runtime_depth + 1;
	dependency->object = object;
	dependency->loads = true;
}

/* Not found: every place looked is kept (a second search keeps them, for a name searched for). */
static void record_missing(struct lookup *lookup, struct dependency *dependency, const struct loader_process *process)
{
	if (!strchr(lookup->name, '/')) {
		struct lookup again = { .resolver = lookup->resolver, .tree = lookup->tree, .asker = lookup->asker, .name = lookup->name,
					.kind = lookup->kind, .every_attempt = true };
		lookup_search(&again, process);
		tree_free_attempts(lookup->attempts, lookup->attempt_count);
		lookup->attempts = again.attempts;
		lookup->attempt_count = again.attempt_count;
		free(again.path);
		free(again.hwcaps);
		free(again.error);
	}
	dependency->how = lookup->stop ? HOW_ERROR : HOW_NOT_FOUND;
	dependency->error = lookup->error;
	dependency->attempts = lookup->attempts;
	dependency->attempt_count = lookup->attempt_count;
	resolve_count_missing(lookup->tree, dependency);
}

/* Found: only the files passed over are worth keeping. The file is the object loaded already when
   the tree holds it under another name (_dl_map_object_from_fd compares device and inode), which
   keeps the name it was first loaded as; otherwise a new object, unless the tree is at its bound. */
static void record_found(struct lookup *lookup, struct dependency *dependency)
{
	struct tree *tree = lookup->tree;
	size_t kept = 0;
	for (size_t i = 0; i < lookup->attempt_count; i++) {
		struct attempt *a = &lookup->attempts[i];
		if (a->passed_over)
			lookup->attempts[kept++] = *a;
		else {
			free(a->path);
			free(a->result);
		}
	}
	dependency->attempts = kept ? lookup->attempts : NULL;
	dependency->attempt_count = kept;
	if (!kept)
		free(lookup->attempts);
	dependency->how = lookup->how;
	dependency->hwcaps = lookup->hwcaps;
	struct object *same = tree_object_of_file(tree, lookup->file->device, lookup->file->inode);
	if (same) {
		tree_add_name(tree, same, lookup->name);
		dependency->how = HOW_ALREADY_LOADED;
		dependency->object = same;
		free(lookup->path);
	} else if (tree->object_count >= tree->max_objects) {
		stop_at_the_bound(lookup->resolver, tree, dependency, lookup->path);
	} else {
		add_found(lookup, dependency);
	}
}

void resolve_dependency(const struct resolver *r, struct tree *tree, struct object *asker, struct dependency *dependency,
			const struct loader_process *process)
{
	const char *name = dependency->name;
	struct lookup lookup = { .resolver = r, .tree = tree, .asker = asker, .name = name, .how = HOW_NOT_FOUND,
				 .kind = dependency->run_time ? LOADER_BARE_NAME : LOADER_NEEDED, .every_attempt = strchr(name, '/') != NULL };
	/* First loaded wins: an object that answers to the name is used, wherever it came from. */
	struct object *loaded = tree_object_answering(tree, name);
	if (loaded) {
		dependency->how = HOW_ALREADY_LOADED;
		dependency->object = loaded;
		return;
	}
	if (strchr(name, '/')) {
		/* A name with a slash is a path, with its tokens expanded and no search. */
		char **expanded = NULL;
		int n = strchr(name, ':') ? 0 : loader_host_expand(r->host, name, "", asker->origin, &expanded);
		const char *path = n == 1 ? expanded[0] : name;
		if (!lookup_try_file(&lookup, path, HOW_PATH, NULL, true) || !lookup.path)
			lookup.how = lookup.stop ? HOW_ERROR : HOW_NOT_FOUND;
		loader_host_free_dirs(expanded, n > 0 ? (size_t)n : 0);
	} else {
		lookup_search(&lookup, process);
		if (lookup_runtime_helps(r, tree, asker, dependency))
			lookup_ask_runtime(&lookup, dependency);
	}
	if (lookup.path)
		record_found(&lookup, dependency);
	else
		record_missing(&lookup, dependency, process);
}
