/* The loader's search, step by step, after glibc's elf/dl-load.c (_dl_map_object, open_path,
   open_verify) and elf/dl-deps.c (breadth-first loading); the order itself is the loader model's
   (src/loader). Limits: one namespace; LD_PRELOAD and LD_AUDIT are not modelled. */
#define _GNU_SOURCE
#include "resolve.h"

#include "elf_names.h"
#include "libnames.h"
#include "platform.h"
#include "loader/dst.h"
#include "loader/search_order.h"
#include "search.h"
#include "system_libraries.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The runtime's DT_NEEDED help goes this deep (src/linux/lookup.c, NEEDED_MAX_DEPTH). */
#define RUNTIME_MAX_DEPTH 8

const char *how_name(enum how how)
{
	static const char *const names[] = {
		[HOW_ALREADY_LOADED] = "already_loaded",
		[HOW_PATH] = "path",
		[HOW_REGISTERED_ORIGIN] = "registered_origin",
		[HOW_WHEEL_SIBLING] = "wheel_sibling",
		[HOW_NVINTERPOSE_PATH] = "nvinterpose_path",
		[HOW_NOT_FOUND] = "not_found",
		[HOW_ERROR] = "error",
	};
	return how < HOW_ALREADY_LOADED ? loader_step_name((enum loader_step)how) : names[how];
}

/* One lookup in progress. */
struct lookup {
	const struct resolver *resolver;
	struct tree *tree;
	struct object *asker;
	const char *name;
	enum loader_lookup kind; /* a DT_NEEDED, or the asker's dlopen(name) */
	/* Places where nothing was found are kept only on a second search, made when the first one
	   found nothing: most lookups succeed, and that is the inspector's main cost. */
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

/* Adds a line unless the same one is there: a folder's oddity is met by every name looked up there. */
static void add_line(char ***lines, size_t *count, const char *format, va_list args)
{
	char *line = NULL;
	if (vasprintf(&line, format, args) < 0)
		return;
	for (size_t i = 0; i < *count; i++)
		if (strcmp((*lines)[i], line) == 0) {
			free(line);
			return;
		}
	char **grown = realloc(*lines, (*count + 1) * sizeof(char *));
	if (!grown) {
		free(line);
		return;
	}
	*lines = grown;
	(*lines)[(*count)++] = line;
}

const char *warning_kind_name(enum warning_kind kind)
{
	static const char *const names[] = {
		[WARNING_LOADER] = "loader",
		[WARNING_MIXED_ORIGIN] = "mixed-origin",
		[WARNING_CUT] = "cut",
	};
	return names[kind];
}

static char *copy(const char *s) { return s ? strdup(s) : NULL; }

void tree_add_warning(struct tree *tree, const struct warning *warning)
{
	for (size_t i = 0; i < tree->warning_count; i++)
		if (strcmp(tree->warnings[i].text, warning->text) == 0)
			return;
	struct warning *grown = realloc(tree->warnings, (tree->warning_count + 1) * sizeof(*grown));
	if (!grown)
		return;
	tree->warnings = grown;
	struct warning *w = &grown[tree->warning_count];
	*w = *warning;
	w->library = copy(warning->library);
	w->dependency = copy(warning->dependency);
	w->got = copy(warning->got);
	w->own = copy(warning->own);
	if ((w->text = copy(warning->text)))
		tree->warning_count++;
}

void tree_warn(struct tree *tree, const char *format, ...)
{
	struct warning warning = { .kind = WARNING_LOADER, .how = HOW_NOT_FOUND };
	va_list args;
	va_start(args, format);
	if (vasprintf(&warning.text, format, args) < 0)
		warning.text = NULL;
	va_end(args);
	if (warning.text)
		tree_add_warning(tree, &warning);
	free(warning.text);
}

void tree_note(struct tree *tree, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	add_line(&tree->notes, &tree->note_count, format, args);
	va_end(args);
}

static void record(struct lookup *lookup, const char *path, enum how step, const char *result, bool passed_over)
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

static void free_attempts(struct attempt *attempts, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(attempts[i].path);
		free(attempts[i].result);
	}
	free(attempts);
}

static char *folder_of(const char *path)
{
	char folder[PATH_MAX];
	return strdup(dst_origin_of(path, folder, sizeof(folder)) ? folder : ".");
}

/* What one candidate file means for the search. True when the search of this list ends here. */
static bool try_file(struct lookup *lookup, const char *path, enum how step, const char *hwcaps, bool last_in_folder)
{
	const struct probed_file *file = file_probe_path(lookup->resolver->probe, path);
	if (!file)
		return false;
	switch (file->result) {
	case PROBE_ABSENT:
		record(lookup, path, step, "absent", false);
		return false;
	case PROBE_SKIPPED: {
		char *result = NULL;
		if (asprintf(&result, "skipped: %s", file->reason) >= 0)
			record(lookup, path, step, result, true);
		free(result);
		return false;
	}
	case PROBE_STOPS_LIST:
		record(lookup, path, step, file->reason, true);
		/* open_path looks at errno once per folder, after its last candidate there. */
		return last_in_folder;
	case PROBE_FATAL:
		record(lookup, path, step, file->reason, true);
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
	walk->ends = try_file(walk->lookup, path, walk->step, hwcaps_name, subdir[0] == '\0');
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
			record(lookup, path, step, "no such folder", false);
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
		record(lookup, "ld.so.cache", HOW_CACHE, "not read", false);
		return false;
	}
	struct ld_cache_entry entries[32];
	size_t count = ld_cache_lookup(r->cache, lookup->name, entries, sizeof(entries) / sizeof(entries[0]));
	if (count > sizeof(entries) / sizeof(entries[0]))
		count = sizeof(entries) / sizeof(entries[0]);
	const struct ld_cache_entry *entry = choose_cache_entry(lookup, entries, count);
	if (!entry) {
		record(lookup, r->cache_path, HOW_CACHE, "no entry", false);
		return false;
	}
	/* A NODEFLIB object takes no cache entry from under the default folders. */
	if (lookup->asker->facts->nodeflib && under_default_folder(r->host, entry->path)) {
		record(lookup, entry->path, HOW_CACHE, "passed over: the asker has NODEFLIB and the entry lies in a default folder", true);
		return false;
	}
	return try_file(lookup, entry->path, HOW_CACHE, entry->hwcaps, true) && (lookup->path || lookup->stop);
}

/* The object as the loader model sees it: its RPATH and RUNPATH expanded ($ORIGIN its folder), and
   the object whose DT_NEEDED loaded it. */
static const struct loader_object *model_of(const struct resolver *r, struct object *object)
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
		.loader = object->loader ? model_of(r, object->loader) : NULL,
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
static void search_loader_order(struct lookup *lookup, const struct loader_process *process)
{
	const struct loader_object *asker = model_of(lookup->resolver, lookup->asker);
	if (!loader_search_order(lookup->kind, asker, process, visit_folder, lookup) && asker->nodeflib)
		record(lookup, "(default folders)", HOW_DEFAULT, "not searched: the asker has NODEFLIB", false);
}

/* ---- the objects of a tree ----------------------------------------------------------------------- */

/* The object loaded first that answers to name (its path, its SONAME, a name it was found by):
   first loaded wins. */
static struct object *object_answering(const struct tree *tree, const char *name)
{
	return string_map_get(&tree->by_name, name);
}

static void index_name(struct tree *tree, const char *name, struct object *object)
{
	if (!string_map_get(&tree->by_name, name))
		string_map_put(&tree->by_name, name, object);
}

/* "device:inode" in hex, written by hand: every object and every file found makes one. */
static void inode_key(char *key, size_t size, dev_t device, ino_t inode)
{
	unsigned long long parts[2] = { (unsigned long long)device, (unsigned long long)inode };
	size_t n = 0;
	for (int p = 0; p < 2; p++) {
		char digits[16];
		size_t k = 0;
		do
			digits[k++] = "0123456789abcdef"[parts[p] & 15];
		while ((parts[p] >>= 4) && k < sizeof(digits));
		while (k && n + 2 < size)
			key[n++] = digits[--k];
		if (p == 0 && n + 2 < size)
			key[n++] = ':';
	}
	key[n] = '\0';
}

/* Its file, for the loader's device-and-inode check (objects the inspector could not read have none). */
static void set_inode(struct tree *tree, struct object *object, dev_t device, ino_t inode)
{
	char key[48];
	object->device = device;
	object->inode = inode;
	inode_key(key, sizeof(key), device, inode);
	if (object->facts && !string_map_get(&tree->by_inode, key))
		string_map_put(&tree->by_inode, key, object);
}

static void add_name(struct tree *tree, struct object *object, const char *name)
{
	char **grown = realloc(object->names, (object->name_count + 1) * sizeof(char *));
	if (grown && (grown[object->name_count] = strdup(name)))
		object->name_count++;
	if (grown)
		object->names = grown;
	index_name(tree, name, object);
}

static struct object *new_object(struct tree *tree, const char *path, const struct elf_facts *facts)
{
	if (tree->object_count == tree->object_capacity) {
		size_t capacity = tree->object_capacity ? 2 * tree->object_capacity : 32;
		struct object **grown = realloc(tree->objects, capacity * sizeof(*grown));
		if (!grown)
			return NULL;
		tree->objects = grown;
		tree->object_capacity = capacity;
	}
	struct object *object = calloc(1, sizeof(*object));
	if (!object)
		return NULL;
	object->path = strdup(path);
	object->origin = folder_of(path);
	object->facts = facts;
	object->rpath_count = object->runpath_count = -1;
	object->runtime_depth = -1;
	object->index = tree->object_count;
	const char *own_name = facts && facts->soname ? facts->soname : path;
	object->family = libnames_match_linux(libnames_basename(own_name), NULL);
	object->system = system_library(own_name);
	tree->objects[tree->object_count++] = object;
	index_name(tree, path, object);
	if (facts && facts->soname)
		index_name(tree, facts->soname, object);
	return object;
}

static bool runtime_helps(const struct resolver *r, const struct object *asker, const struct dependency *dependency)
{
	if (!r->what_if || r->what_if->policy == POLICY_OFF || dependency->family < 0 || libnames_is_driver(dependency->family))
		return false;
	/* A dlopen by an NVIDIA library reaches the hooks wherever it sits; a DT_NEEDED only as deep as
	   the runtime's help for a library loaded by path goes. */
	return dependency->run_time || (asker->runtime_depth >= 0 && asker->runtime_depth <= RUNTIME_MAX_DEPTH);
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The runtime's turn (src/linux/lookup.c, prepare_needed): under coherent, the asker's folder or
   its wheel siblings first, unless they hold the very file the loader takes; otherwise, when the
   loader finds nothing usable, the registered origins, their wheel siblings and NVINTERPOSE_PATH. */
static void ask_runtime(struct lookup *lookup, struct dependency *dependency)
{
	struct file_probe *probe = lookup->resolver->probe;
	enum how how;
	char *own = NULL;
	if (lookup->resolver->what_if->policy == POLICY_COHERENT)
		own = what_if_candidate(probe, lookup->name, lookup->asker->origin, true, &how);
	if (own && lookup->path && same_file(own, lookup->path)) {
		free(own);
		return;
	}
	if (own) {
		dependency->action = RUNTIME_COHERENT;
		dependency->loader_path = lookup->path; /* may be NULL: the loader had none */
	} else if (!lookup->path) {
		own = what_if_candidate(probe, lookup->name, lookup->asker->origin, false, &how);
		if (!own)
			return;
		dependency->action = RUNTIME_PRELOAD;
	} else {
		return;
	}
	const struct probed_file *file = file_probe_path(probe, own);
	if (!file || file->result != PROBE_FOUND) {
		free(own);
		dependency->action = RUNTIME_NONE;
		dependency->loader_path = NULL;
		return;
	}
	if (dependency->action != RUNTIME_COHERENT)
		free(lookup->path);
	free(lookup->hwcaps);
	free(lookup->error);
	lookup->path = own;
	lookup->file = file;
	lookup->how = how;
	lookup->hwcaps = NULL;
	lookup->error = NULL;
	lookup->stop = false;
	lookup->tree->action_count++;
}

static void count_missing(struct tree *tree, const struct dependency *dependency)
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

static void resolve_dependency(const struct resolver *r, struct tree *tree, struct object *asker,
			       struct dependency *dependency, const struct loader_process *process)
{
	const char *name = dependency->name;
	enum loader_lookup kind = dependency->run_time ? LOADER_BARE_NAME : LOADER_NEEDED;
	struct lookup lookup = { .resolver = r, .tree = tree, .asker = asker, .name = name, .kind = kind, .how = HOW_NOT_FOUND,
				 .every_attempt = strchr(name, '/') != NULL };
	/* First loaded wins: an object that answers to the name is used, wherever it came from. */
	struct object *loaded = object_answering(tree, name);
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
		if (!try_file(&lookup, path, HOW_PATH, NULL, true) || !lookup.path)
			lookup.how = lookup.stop ? HOW_ERROR : HOW_NOT_FOUND;
		loader_host_free_dirs(expanded, n > 0 ? (size_t)n : 0);
	} else {
		search_loader_order(&lookup, process);
		if (runtime_helps(r, asker, dependency))
			ask_runtime(&lookup, dependency);
	}

	if (!lookup.path) {
		if (!strchr(name, '/')) {
			/* Again, keeping every place looked this time. */
			struct lookup again = { .resolver = r, .tree = tree, .asker = asker, .name = name, .kind = kind, .every_attempt = true };
			search_loader_order(&again, process);
			free_attempts(lookup.attempts, lookup.attempt_count);
			lookup.attempts = again.attempts;
			lookup.attempt_count = again.attempt_count;
			free(again.path);
			free(again.hwcaps);
			free(again.error);
		}
		dependency->how = lookup.stop ? HOW_ERROR : HOW_NOT_FOUND;
		dependency->error = lookup.error;
		dependency->attempts = lookup.attempts;
		dependency->attempt_count = lookup.attempt_count;
		count_missing(tree, dependency);
		return;
	}
	/* Found: only the files passed over are worth keeping. */
	size_t kept = 0;
	for (size_t i = 0; i < lookup.attempt_count; i++) {
		struct attempt *a = &lookup.attempts[i];
		if (a->passed_over)
			lookup.attempts[kept++] = *a;
		else {
			free(a->path);
			free(a->result);
		}
	}
	dependency->attempts = kept ? lookup.attempts : NULL;
	dependency->attempt_count = kept;
	if (!kept)
		free(lookup.attempts);
	dependency->how = lookup.how;
	dependency->hwcaps = lookup.hwcaps;
	/* The same file under another name is the object already loaded (_dl_map_object_from_fd
	   compares device and inode), keeping the name it was first loaded as. */
	char key[48];
	inode_key(key, sizeof(key), lookup.file->device, lookup.file->inode);
	struct object *same = string_map_get(&tree->by_inode, key);
	if (same) {
		add_name(tree, same, name);
		dependency->how = HOW_ALREADY_LOADED;
		dependency->object = same;
		free(lookup.path);
		return;
	}
	if (tree->object_count >= tree->max_objects) {
		stop_at_the_bound(r, tree, dependency, lookup.path);
		return;
	}
	struct object *object = new_object(tree, lookup.path, lookup.file->facts);
	free(lookup.path);
	if (!object)
		return;
	set_inode(tree, object, lookup.file->device, lookup.file->inode);
	/* dlopen maps a run-time dependent with no loader (__RTLD_CALLMAP): its own needs never see
	   the RPATH of the library that asked. */
	object->loader = dependency->run_time ? NULL : asker;
	object->dlopened = dependency->run_time;
	object->depth = asker->depth + 1;
	add_name(tree, object, name);
	/* The runtime helps the needs of what it loads by path: a library it loaded in the loader's
	   place, and (to its bound) the dependencies it loaded for one. */
	if (dependency->action != RUNTIME_NONE)
		object->runtime_depth = dependency->run_time ? 0 : asker->runtime_depth + 1;
	dependency->object = object;
	dependency->loads = true;
}

/* ---- run-time dependents -------------------------------------------------------------------------- */

/* The file name a run-time dependent is looked up by. The table names only its family, so the
   name is that of a file of the family where it would be met: already loaded, in the asker's
   folder, along the asker's dlopen search (its folders, ld.so.cache's names), among the names the
   caller knows (--scan: every copy it found) and, for the what-if, in the runtime's places; the fit rule (libnames_dependent_fit: same .alt-ness, the asker's major
   first) ranks them, then where it was met, first met first. */
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

static void consider_wheel_siblings(struct dependent_choice *choice, const char *folder)
{
	char root[PATH_MAX];
	const char *leaf;
	if (!search_wheel_root(folder, root, sizeof(root), &leaf))
		return;
	char **names = NULL;
	int count = platform_list_folder(root, &names); /* in the runtime's order */
	for (int i = 0; i < count; i++) {
		char sibling[PATH_MAX];
		int n = snprintf(sibling, sizeof(sibling), "%s/%s/%s", root, names[i], leaf);
		if (names[i][0] != '.' && n > 0 && (size_t)n < sizeof(sibling))
			consider_folder(choice, sibling, 0);
	}
	platform_free_names(names, count);
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
	loader_search_order(LOADER_BARE_NAME, model_of(r, (struct object *)asker), process, consider_loader_folder, &choice);
	consider_names(&choice, r->known_names, 0);
	if (r->what_if && r->what_if->policy != POLICY_OFF) {
		for (size_t i = 0; i < r->what_if->origin_count; i++)
			consider_folder(&choice, r->what_if->origins[i], 0);
		consider_wheel_siblings(&choice, asker->origin);
		for (size_t i = 0; i < r->what_if->origin_count; i++)
			consider_wheel_siblings(&choice, r->what_if->origins[i]);
		const struct config *config = config_get();
		for (size_t i = 0; i < config->path_count; i++)
			consider_folder(&choice, config_path(config, i), 0);
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
		record(lookup, lookup->resolver->cache ? lookup->resolver->cache_path : "ld.so.cache", HOW_CACHE,
		       lookup->resolver->cache ? result : "not read", false);
	} else {
		snprintf(result, sizeof(result), "no %s file", libnames[search->family].family);
		record(lookup, folder[0] ? folder : ".", (enum how)step, result, false);
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
	loader_search_order(LOADER_BARE_NAME, model_of(r, asker), process, record_no_file, &search);
	dependency->how = HOW_NOT_FOUND;
	dependency->attempts = search.lookup.attempts;
	dependency->attempt_count = search.lookup.attempt_count;
	count_missing(tree, dependency);
}

struct run_time_walk {
	const struct resolver *resolver;
	struct tree *tree;
	struct object *object;
	const struct loader_process *process;
	struct libname_match parent;
	size_t count;
};

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
	struct dependency *dependency = &object->runtime[object->runtime_count++];
	dependency->family = family;
	dependency->run_time = true;
	dependency->required = required;
	dependency->name = choose_dependent_name(walk->resolver, walk->tree, object, &walk->parent, family, walk->process);
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
static void resolve_run_time(const struct resolver *r, struct tree *tree, struct object *object, const struct loader_process *process)
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
	libnames_foreach_dependent(list, resolve_one_dependent, &walk);
}

/* Each DT_NEEDED of an object, in order. */
static bool resolve_needed(const struct resolver *r, struct tree *tree, struct object *object, const struct loader_process *process)
{
	if (object->preloaded || object->interpreter || !object->facts || object->needed)
		return true;
	object->needed = calloc(object->facts->needed_count ? object->facts->needed_count : 1, sizeof(*object->needed));
	if (!object->needed)
		return false;
	object->needed_count = object->facts->needed_count;
	for (size_t i = 0; i < object->needed_count; i++) {
		struct dependency *dependency = &object->needed[i];
		dependency->name = strdup(object->facts->needed[i]);
		dependency->family = libnames_match_linux(libnames_basename(dependency->name), NULL);
		resolve_dependency(r, tree, object, dependency, process);
	}
	return true;
}

/* The interpreter is in the list of loaded objects before anything else (l_name its PT_INTERP). */
static void add_interpreter(const struct resolver *r, struct tree *tree, const char *interpreter)
{
	if (!interpreter)
		return;
	const struct probed_file *file = file_probe_path(r->probe, interpreter);
	struct object *object = new_object(tree, interpreter, file && file->result == PROBE_FOUND ? file->facts : NULL);
	if (!object)
		return;
	object->interpreter = true;
	if (object->facts)
		set_inode(tree, object, file->device, file->inode);
}

static void add_mapped(const struct resolver *r, struct tree *tree)
{
	if (!r->what_if)
		return;
	for (size_t i = 0; i < r->what_if->mapped_count; i++) {
		const struct mapped_object *mapped = &r->what_if->mapped[i];
		struct object *object = new_object(tree, mapped->path, mapped->facts);
		if (!object)
			return;
		object->preloaded = true;
		const struct probed_file *file = mapped->facts ? file_probe_path(r->probe, mapped->path) : NULL;
		if (file)
			set_inode(tree, object, file->device, file->inode);
	}
}

static int refuse(char *message, size_t size, const char *file, const char *format, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(char *message, size_t size, const char *file, const char *format, ...)
{
	va_list args;
	int n = snprintf(message, size, "%s: ", file);
	va_start(args, format);
	if (n >= 0 && (size_t)n < size)
		vsnprintf(message + n, size - (size_t)n, format, args);
	va_end(args);
	return -1;
}

int resolve_tree(const struct resolver *r, const char *file, struct tree *tree, char *message, size_t size)
{
	memset(tree, 0, sizeof(*tree));
	tree->file = strdup(file);
	tree->what_if = r->what_if != NULL;
	tree->policy = r->what_if ? r->what_if->policy : POLICY_OFF;
	char **library_path = NULL;
	int library_count = 0;
	struct elf_host *host = &r->host->elf;
	char machine[32], own_machine[32];

	/* Through the probe: a file inspected is often another's dependency too, and is read once. */
	const struct probed_file *probed = file_probe_path(r->probe, file);
	const struct elf_facts *facts = &tree->root_facts;
	if (probed && probed->facts)
		facts = probed->facts;
	else if (elf_read_facts(file, &tree->root_facts, message, size) != ELF_READER_OK)
		return -1;
	tree->root = new_object(tree, file, facts);
	if (!tree->root)
		return refuse(message, size, file, "out of memory");
	if (facts != &tree->root_facts)
		set_inode(tree, tree->root, probed->device, probed->inode);
	if (facts->elf_class != host->elf_class || facts->data != host->data || facts->machine != host->machine)
		return refuse(message, size, file, "a %s %s %s file: this inspector resolves for the loader of its own kind (%s %s %s)",
			      facts->elf_class == ELFCLASS32 ? "32-bit" : "64-bit", facts->data == ELFDATA2LSB ? "little-endian" : "big-endian",
			      elf_machine_name(facts->machine, machine, sizeof(machine)), host->elf_class == ELFCLASS32 ? "32-bit" : "64-bit",
			      host->data == ELFDATA2LSB ? "little-endian" : "big-endian", elf_machine_name(host->machine, own_machine, sizeof(own_machine)));
	if (facts->type != ET_DYN && facts->type != ET_EXEC)
		return refuse(message, size, file, "a %s, not a program or a shared library", elf_type_name(facts->type));
	if (!facts->has_dynamic) {
		tree_note(tree, "no dynamic section: statically linked, nothing to resolve");
		return 0;
	}
	/* $ORIGIN of a program (PT_INTERP, no SONAME) is the folder of its real path, as when it is run;
	   of a library, the folder of the path given, as when it is loaded by that path. */
	if (facts->interp && !facts->soname) {
		char *real = realpath(file, NULL);
		if (real) {
			free(tree->root->origin);
			tree->root->origin = folder_of(real);
			free(real);
		}
	}
	add_name(tree, tree->root, file);
	if (r->what_if && r->what_if->policy != POLICY_OFF && tree->root->family >= 0 && !libnames_is_driver(tree->root->family))
		tree->root->runtime_depth = 0;
	else if (r->what_if && r->what_if->policy != POLICY_OFF)
		tree_note(tree, "the runtime helps the DT_NEEDED of an NVIDIA library loaded by path; %s is not one, so it would change nothing here",
			  file);
	add_interpreter(r, tree, facts->interp ? facts->interp : r->host->interpreter);
	add_mapped(r, tree);

	library_count = loader_host_expand(r->host, r->host->library_path, ":;", tree->root->origin, &library_path);
	if (library_count < 0)
		library_count = 0;
	struct loader_process process = {
		.program = model_of(r, tree->root),
		.library_path = { (const char *const *)library_path, (size_t)library_count },
		.default_dirs = { (const char *const *)r->host->default_dirs, r->host->default_count },
	};
	/* The tree's bound, within what is left of the run's: the objects already there (the root, the
	   interpreter, a process's mapped libraries) are always in. */
	tree->max_objects = r->max_objects ? r->max_objects : SIZE_MAX;
	if (r->run_objects_left && *r->run_objects_left < tree->max_objects)
		tree->max_objects = *r->run_objects_left;
	if (tree->max_objects < tree->object_count)
		tree->max_objects = tree->object_count;
	size_t before = tree->object_count;
	/* Breadth first, as _dl_map_object_deps: every DT_NEEDED of an object before those of its
	   dependencies, so the first object to name a library is its loader. Then, as the libraries
	   run, the run-time dependents of each in load order, each followed by its own needs. */
	for (size_t next = 0, run_time_next = 0;;) {
		while (next < tree->object_count)
			if (!resolve_needed(r, tree, tree->objects[next++], &process))
				goto out;
		if (run_time_next >= tree->object_count)
			break;
		resolve_run_time(r, tree, tree->objects[run_time_next++], &process);
	}
out:
	if (r->run_objects_left)
		*r->run_objects_left -= tree->object_count - before < *r->run_objects_left ? tree->object_count - before : *r->run_objects_left;
	loader_host_free_dirs(library_path, (size_t)library_count);
	return 0;
}

void tree_free(struct tree *tree)
{
	for (size_t i = 0; i < tree->object_count; i++) {
		struct object *o = tree->objects[i];
		for (size_t k = 0; k < object_entry_count(o); k++) {
			struct dependency *d = object_entry(o, k);
			free(d->name);
			free(d->path);
			free(d->hwcaps);
			free(d->error);
			free(d->loader_path);
			free_attempts(d->attempts, d->attempt_count);
		}
		free(o->needed);
		free(o->runtime);
		loader_host_free_dirs(o->names, o->name_count);
		loader_host_free_dirs(o->rpath, o->rpath_count > 0 ? (size_t)o->rpath_count : 0);
		loader_host_free_dirs(o->runpath, o->runpath_count > 0 ? (size_t)o->runpath_count : 0);
		free(o->path);
		free(o->origin);
		free(o);
	}
	free(tree->objects);
	string_map_clear(&tree->by_name, NULL);
	string_map_clear(&tree->by_inode, NULL);
	for (size_t i = 0; i < tree->warning_count; i++) {
		struct warning *w = &tree->warnings[i];
		free(w->library);
		free(w->dependency);
		free(w->got);
		free(w->own);
		free(w->text);
	}
	free(tree->warnings);
	loader_host_free_dirs(tree->notes, tree->note_count);
	elf_facts_free(&tree->root_facts);
	free(tree->file);
	memset(tree, 0, sizeof(*tree));
}
