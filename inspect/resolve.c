/* The loader's search, step by step, after glibc's elf/dl-load.c (_dl_map_object, open_path,
   open_verify) and elf/dl-deps.c (breadth-first loading); the order itself is the loader model's
   (src/loader). Limits: one namespace; LD_PRELOAD and LD_AUDIT are not modelled. */
#define _GNU_SOURCE
#include "resolve.h"

#include "elf_names.h"
#include "libnames.h"
#include "loader/dst.h"
#include "loader/search_order.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A tree larger than this is cut short with a warning: real ones hold tens of objects. */
#define MAX_OBJECTS 4096
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

void tree_warn(struct tree *tree, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	add_line(&tree->warnings, &tree->warning_count, format, args);
	va_end(args);
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
	switch (loader_folder_files(machine, folder, lookup->name, try_candidate, &walk)) {
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
	if (!loader_search_order(LOADER_NEEDED, asker, process, visit_folder, lookup) && asker->nodeflib)
		record(lookup, "(default folders)", HOW_DEFAULT, "not searched: the asker has NODEFLIB", false);
}

static bool answers_to(const struct object *object, const char *name)
{
	if (strcmp(object->path, name) == 0 || (object->facts && object->facts->soname && strcmp(object->facts->soname, name) == 0))
		return true;
	for (size_t i = 0; i < object->name_count; i++)
		if (strcmp(object->names[i], name) == 0)
			return true;
	return false;
}

static void add_name(struct object *object, const char *name)
{
	char **grown = realloc(object->names, (object->name_count + 1) * sizeof(char *));
	if (grown && (grown[object->name_count] = strdup(name)))
		object->name_count++;
	if (grown)
		object->names = grown;
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
	tree->objects[tree->object_count++] = object;
	return object;
}

static bool runtime_helps(const struct resolver *r, const struct object *asker, const struct dependency *dependency)
{
	return r->what_if && r->what_if->policy != POLICY_OFF && asker->runtime_depth >= 0 &&
	       asker->runtime_depth <= RUNTIME_MAX_DEPTH && dependency->family >= 0 && !libnames_is_driver(dependency->family);
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

static void resolve_dependency(const struct resolver *r, struct tree *tree, struct object *asker,
			       struct dependency *dependency, const struct loader_process *process)
{
	const char *name = dependency->name;
	struct lookup lookup = { .resolver = r, .tree = tree, .asker = asker, .name = name, .how = HOW_NOT_FOUND,
				 .every_attempt = strchr(name, '/') != NULL };
	/* First loaded wins: an object that answers to the name is used, wherever it came from. */
	for (size_t i = 0; i < tree->object_count; i++)
		if (answers_to(tree->objects[i], name)) {
			dependency->how = HOW_ALREADY_LOADED;
			dependency->object = tree->objects[i];
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
			struct lookup again = { .resolver = r, .tree = tree, .asker = asker, .name = name, .every_attempt = true };
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
		tree->missing++;
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
	for (size_t i = 0; i < tree->object_count; i++) {
		struct object *o = tree->objects[i];
		if (o->facts && o->device == lookup.file->device && o->inode == lookup.file->inode) {
			add_name(o, name);
			dependency->how = HOW_ALREADY_LOADED;
			dependency->object = o;
			free(lookup.path);
			return;
		}
	}
	if (tree->object_count >= MAX_OBJECTS) {
		if (tree->object_count == MAX_OBJECTS)
			tree_warn(tree, "more than %d objects: the tree is cut short", MAX_OBJECTS);
		dependency->how = HOW_NOT_FOUND;
		tree->missing++;
		free(lookup.path);
		return;
	}
	struct object *object = new_object(tree, lookup.path, lookup.file->facts);
	free(lookup.path);
	if (!object)
		return;
	object->device = lookup.file->device;
	object->inode = lookup.file->inode;
	object->loader = asker;
	add_name(object, name);
	if (dependency->action != RUNTIME_NONE)
		object->runtime_depth = asker->runtime_depth + 1;
	dependency->object = object;
	dependency->loads = true;
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
	if (object->facts) {
		object->device = file->device;
		object->inode = file->inode;
	}
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
		if (file) {
			object->device = file->device;
			object->inode = file->inode;
		}
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
	if (facts != &tree->root_facts) {
		tree->root->device = probed->device;
		tree->root->inode = probed->inode;
	}
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
	add_name(tree->root, file);
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
	/* Breadth first, as _dl_map_object_deps: every DT_NEEDED of an object before those of its
	   dependencies, so the first object to name a library is its loader. */
	for (size_t next = 0; next < tree->object_count; next++) {
		struct object *object = tree->objects[next];
		if (object->preloaded || object->interpreter || !object->facts || object->needed)
			continue;
		object->needed = calloc(object->facts->needed_count ? object->facts->needed_count : 1, sizeof(*object->needed));
		if (!object->needed)
			break;
		object->needed_count = object->facts->needed_count;
		for (size_t i = 0; i < object->needed_count; i++) {
			struct dependency *dependency = &object->needed[i];
			dependency->name = strdup(object->facts->needed[i]);
			dependency->family = libnames_match_linux(libnames_basename(dependency->name), NULL);
			resolve_dependency(r, tree, object, dependency, &process);
		}
	}
	loader_host_free_dirs(library_path, (size_t)library_count);
	return 0;
}

void tree_free(struct tree *tree)
{
	for (size_t i = 0; i < tree->object_count; i++) {
		struct object *o = tree->objects[i];
		for (size_t k = 0; k < o->needed_count; k++) {
			struct dependency *d = &o->needed[k];
			free(d->name);
			free(d->hwcaps);
			free(d->error);
			free(d->loader_path);
			free_attempts(d->attempts, d->attempt_count);
		}
		free(o->needed);
		loader_host_free_dirs(o->names, o->name_count);
		loader_host_free_dirs(o->rpath, o->rpath_count > 0 ? (size_t)o->rpath_count : 0);
		loader_host_free_dirs(o->runpath, o->runpath_count > 0 ? (size_t)o->runpath_count : 0);
		free(o->path);
		free(o->origin);
		free(o);
	}
	free(tree->objects);
	loader_host_free_dirs(tree->warnings, tree->warning_count);
	loader_host_free_dirs(tree->notes, tree->note_count);
	elf_facts_free(&tree->root_facts);
	free(tree->file);
	memset(tree, 0, sizeof(*tree));
}
