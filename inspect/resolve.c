/* A file's dependency tree as glibc's loader would resolve it: every DT_NEEDED of an object before
   those of its dependencies (elf/dl-deps.c, breadth first), then the run-time dependents. Limits:
   one namespace; LD_PRELOAD and LD_AUDIT are not modelled. */
#define _GNU_SOURCE
#include "resolving.h"

#include "elf_names.h"
#include "libnames.h"
#include "loader/dst.h"

#include <elf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		if (lookup_runtime_helps(r, asker, dependency))
			lookup_ask_runtime(&lookup, dependency);
	}
	if (lookup.path)
		record_found(&lookup, dependency);
	else
		record_missing(&lookup, dependency, process);
}

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
	struct object *object = tree_new_object(tree, interpreter, file && file->result == PROBE_FOUND ? file->facts : NULL);
	if (!object)
		return;
	object->interpreter = true;
	if (object->facts)
		tree_set_inode(tree, object, file->device, file->inode);
}

static void add_mapped(const struct resolver *r, struct tree *tree)
{
	if (!r->what_if)
		return;
	for (size_t i = 0; i < r->what_if->mapped_count; i++) {
		const struct mapped_object *mapped = &r->what_if->mapped[i];
		struct object *object = tree_new_object(tree, mapped->path, mapped->facts);
		if (!object)
			return;
		object->preloaded = true;
		const struct probed_file *file = mapped->facts ? file_probe_path(r->probe, mapped->path) : NULL;
		if (file)
			tree_set_inode(tree, object, file->device, file->inode);
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

/* The root's facts, read through the probe (a file inspected is often another's dependency too, and
   is read once); NULL with a message when it is no file this loader loads. */
static const struct elf_facts *read_root(const struct resolver *r, const char *file, struct tree *tree, char *message, size_t size)
{
	const struct elf_host *host = &r->host->elf;
	char machine[32], own_machine[32];
	const struct probed_file *probed = file_probe_path(r->probe, file);
	const struct elf_facts *facts = &tree->root_facts;
	if (probed && probed->facts)
		facts = probed->facts;
	else if (elf_read_facts(file, &tree->root_facts, message, size) != ELF_READER_OK)
		return NULL;
	tree->root = tree_new_object(tree, file, facts);
	if (!tree->root)
		return refuse(message, size, file, "out of memory"), NULL;
	if (facts != &tree->root_facts)
		tree_set_inode(tree, tree->root, probed->device, probed->inode);
	if (facts->elf_class != host->elf_class || facts->data != host->data || facts->machine != host->machine)
		return refuse(message, size, file, "a %s %s %s file: this inspector resolves for the loader of its own kind (%s %s %s)",
			      facts->elf_class == ELFCLASS32 ? "32-bit" : "64-bit", facts->data == ELFDATA2LSB ? "little-endian" : "big-endian",
			      elf_machine_name(facts->machine, machine, sizeof(machine)), host->elf_class == ELFCLASS32 ? "32-bit" : "64-bit",
			      host->data == ELFDATA2LSB ? "little-endian" : "big-endian", elf_machine_name(host->machine, own_machine, sizeof(own_machine))),
		       NULL;
	if (facts->type != ET_DYN && facts->type != ET_EXEC)
		return refuse(message, size, file, "a %s, not a program or a shared library", elf_type_name(facts->type)), NULL;
	return facts;
}

/* The root as the loader starts: its $ORIGIN, the runtime's help, the interpreter and what the
   process of --pid has mapped. */
static void start_root(const struct resolver *r, struct tree *tree, const char *file, const struct elf_facts *facts)
{
	/* $ORIGIN of a program (PT_INTERP, no SONAME) is the folder of its real path, as when it is run;
	   of a library, the folder of the path given, as when it is loaded by that path. */
	if (facts->interp && !facts->soname) {
		char *real = realpath(file, NULL);
		if (real) {
			free(tree->root->origin);
			tree->root->origin = tree_folder_of(real);
			free(real);
		}
	}
	tree_add_name(tree, tree->root, file);
	if (r->what_if && r->what_if->policy != POLICY_OFF && tree->root->family >= 0 && !libnames_is_driver(tree->root->family))
		tree->root->runtime_depth = 0;
	else if (r->what_if && r->what_if->policy != POLICY_OFF)
		tree_note(tree, "the runtime helps the DT_NEEDED of an NVIDIA library loaded by path; %s is not one, so it would change nothing here",
			  file);
	add_interpreter(r, tree, facts->interp ? facts->interp : r->host->interpreter);
	add_mapped(r, tree);
}

/* Breadth first, as _dl_map_object_deps: every DT_NEEDED of an object before those of its
   dependencies, so the first object to name a library is its loader. Then, as the libraries run,
   the run-time dependents of each in load order, each followed by its own needs. The tree's bound
   lies within what is left of the run's; the objects already there (the root, the interpreter, a
   process's mapped libraries) are always in. */
static void walk_tree(const struct resolver *r, struct tree *tree, const struct loader_process *process)
{
	tree->max_objects = r->max_objects ? r->max_objects : SIZE_MAX;
	if (r->run_objects_left && *r->run_objects_left < tree->max_objects)
		tree->max_objects = *r->run_objects_left;
	if (tree->max_objects < tree->object_count)
		tree->max_objects = tree->object_count;
	size_t before = tree->object_count;
	for (size_t next = 0, run_time_next = 0;;) {
		while (next < tree->object_count)
			if (!resolve_needed(r, tree, tree->objects[next++], process))
				goto out;
		if (run_time_next >= tree->object_count)
			break;
		resolve_run_time(r, tree, tree->objects[run_time_next++], process);
	}
out:
	if (r->run_objects_left)
		*r->run_objects_left -= tree->object_count - before < *r->run_objects_left ? tree->object_count - before : *r->run_objects_left;
}

int resolve_tree(const struct resolver *r, const char *file, struct tree *tree, char *message, size_t size)
{
	memset(tree, 0, sizeof(*tree));
	tree->file = strdup(file);
	tree->what_if = r->what_if != NULL;
	tree->policy = r->what_if ? r->what_if->policy : POLICY_OFF;
	const struct elf_facts *facts = read_root(r, file, tree, message, size);
	if (!facts)
		return -1;
	if (!facts->has_dynamic) {
		tree_note(tree, "no dynamic section: statically linked, nothing to resolve");
		return 0;
	}
	start_root(r, tree, file, facts);
	char **library_path = NULL;
	int library_count = loader_host_expand(r->host, r->host->library_path, ":;", tree->root->origin, &library_path);
	if (library_count < 0)
		library_count = 0;
	struct loader_process process = {
		.program = lookup_model_of(r, tree->root),
		.library_path = { (const char *const *)library_path, (size_t)library_count },
		.default_dirs = { (const char *const *)r->host->default_dirs, r->host->default_count },
	};
	walk_tree(r, tree, &process);
	loader_host_free_dirs(library_path, (size_t)library_count);
	return 0;
}
