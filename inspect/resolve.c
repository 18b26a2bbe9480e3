/* A file's dependency tree as glibc's loader would resolve it. Every DT_NEEDED of an object comes
   before those of its dependencies (elf/dl-deps.c, breadth first), then the run-time dependents.
   One namespace is modelled, and neither LD_PRELOAD nor LD_AUDIT. */
#define _GNU_SOURCE
#include "resolving.h"

#include "elf_names.h"
#include "libnames.h"
#include "loader/dst.h"

#include <elf.h>
#include <limits.h>
#include <stdarg.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The audit front answers the loader's searches from glibc 2.34 (before, an audit library cannot
   call libdl: src/linux/start.h). The inspector runs on the glibc of the programs it looks at. */
static bool audit_front_answers(void)
{
	int major = 0, minor = 0;
	return sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 && (major > 2 || (major == 2 && minor >= 34));
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
	else if (r->what_if && r->what_if->policy != POLICY_OFF && audit_front_answers()) {
		tree->audit_front = true;
		tree_note(tree, "the preloaded runtime helps the DT_NEEDED of an NVIDIA library loaded by path; %s is not one, so the what-if "
				"is that of nvinterpose-run --audit, whose audit front answers the loader's searches for NVIDIA names", file);
	} else if (r->what_if && r->what_if->policy != POLICY_OFF)
		tree_note(tree, "the runtime helps the DT_NEEDED of an NVIDIA library loaded by path; %s is not one, so it would change nothing "
				"here (the audit front, nvinterpose-run --audit, answers nothing before glibc 2.34; this is %s)", file,
			  gnu_get_libc_version());
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

/* The loader alone misses something: the same file under the default policy's what-if, and each
   dependency the runtime would load there, kept in tree->would_supply. */
static void note_what_the_runtime_would_supply(const struct resolver *r, const char *file, struct tree *tree)
{
	struct resolver with_runtime = *r;
	with_runtime.what_if = r->default_view;
	with_runtime.run_objects_left = NULL;
	struct tree other;
	char message[256];
	if (resolve_tree(&with_runtime, file, &other, message, sizeof(message)) != 0)
		goto out;
	for (size_t i = 0; i < other.object_count; i++) {
		const struct object *o = other.objects[i];
		for (size_t k = 0; k < object_entry_count(o); k++) {
			const struct dependency *d = object_entry(o, k);
			if (d->action != RUNTIME_PRELOAD || !(d->object || d->not_followed))
				continue;
			struct supply *grown = realloc(tree->would_supply, (tree->would_supply_count + 1) * sizeof(*grown));
			if (!grown)
				goto out;
			tree->would_supply = grown;
			grown[tree->would_supply_count++] = (struct supply){ .name = strdup(d->name), .asker = strdup(o->path),
									     .path = strdup(d->object ? d->object->path : d->path),
									     .how = d->how, .run_time = d->run_time };
		}
	}
out:
	tree_free(&other);
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
	if (r->default_view && !r->what_if && (tree->missing || tree->optional_missing))
		note_what_the_runtime_would_supply(r, file, tree);
	return 0;
}
