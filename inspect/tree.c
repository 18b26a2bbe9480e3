/* A tree's bookkeeping: its objects and the names they answer to, its warnings and notes. */
#define _GNU_SOURCE
#include "tree.h"

#include "libnames.h"
#include "loader/dst.h"
#include "loader_host.h"
#include "system_libraries.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

char *tree_folder_of(const char *path)
{
	char folder[PATH_MAX];
	return strdup(dst_origin_of(path, folder, sizeof(folder)) ? folder : ".");
}

/* ---- the objects of a tree ---- */

/* The object loaded first that answers to name (its path, its SONAME, a name it was found by):
   first loaded wins. */
struct object *tree_object_answering(const struct tree *tree, const char *name)
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

struct object *tree_object_of_file(const struct tree *tree, dev_t device, ino_t inode)
{
	char key[48];
	inode_key(key, sizeof(key), device, inode);
	return string_map_get(&tree->by_inode, key);
}

/* Its file, for the loader's device-and-inode check (objects the inspector could not read have none). */
void tree_set_inode(struct tree *tree, struct object *object, dev_t device, ino_t inode)
{
	char key[48];
	object->device = device;
	object->inode = inode;
	inode_key(key, sizeof(key), device, inode);
	if (object->facts && !string_map_get(&tree->by_inode, key))
		string_map_put(&tree->by_inode, key, object);
}

void tree_add_name(struct tree *tree, struct object *object, const char *name)
{
	char **grown = realloc(object->names, (object->name_count + 1) * sizeof(char *));
	if (grown && (grown[object->name_count] = strdup(name)))
		object->name_count++;
	if (grown)
		object->names = grown;
	index_name(tree, name, object);
}

struct object *tree_new_object(struct tree *tree, const char *path, const struct elf_facts *facts)
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
	object->origin = tree_folder_of(path);
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

void tree_free_attempts(struct attempt *attempts, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(attempts[i].path);
		free(attempts[i].result);
	}
	free(attempts);
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
			tree_free_attempts(d->attempts, d->attempt_count);
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
	for (size_t i = 0; i < tree->would_supply_count; i++) {
		free(tree->would_supply[i].name);
		free(tree->would_supply[i].asker);
		free(tree->would_supply[i].path);
	}
	free(tree->would_supply);
	loader_host_free_dirs(tree->notes, tree->note_count);
	elf_facts_free(&tree->root_facts);
	free(tree->file);
	memset(tree, 0, sizeof(*tree));
}
