/* One file's dependency tree as glibc's loader would resolve it, and, for the what-if, as it would
   be with the runtime: the data the renderers print. */
#pragma once

#include "config.h"
#include "loader/search_order.h"
#include "string_map.h"

#include "elf/elf_reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum how {
	/* The loader's own steps first, as the loader model numbers them. */
	HOW_RPATH = LOADER_RPATH, /* the RPATH of the object that asked, or of one that loaded it */
	HOW_LD_LIBRARY_PATH = LOADER_LD_LIBRARY_PATH,
	HOW_RUNPATH = LOADER_RUNPATH, /* the RUNPATH of the object that asked */
	HOW_CACHE = LOADER_CACHE, /* ld.so.cache */
	HOW_DEFAULT = LOADER_DEFAULT, /* the loader's default folders */
	HOW_ALREADY_LOADED = LOADER_LISTED + 1, /* a loaded object answers to the name (first loaded wins) */
	HOW_PATH,              /* a DT_NEEDED with a slash is opened as that path */
	HOW_REGISTERED_ORIGIN, /* what-if: the folder of an NVIDIA library loaded before */
	HOW_WHEEL_SIBLING,     /* what-if: site-packages/nvidia/OTHER/lib beside such a folder */
	HOW_NVINTERPOSE_PATH,  /* what-if: NVINTERPOSE_PATH */
	HOW_NOT_FOUND,
	HOW_ERROR,             /* the loader stops the load at a file it cannot use */
};

const char *how_name(enum how how);

/* One place the loader looked. */
struct attempt {
	char *path;    /* the file tried (for the cache step: the cache's entry, or the cache itself) */
	enum how step; /* the search step it belongs to */
	char *result;  /* "absent", "no such folder", "skipped: wrong ELF class: ELF32", ... */
	bool passed_over; /* something was there and the loader went past it */
};

enum runtime_action {
	RUNTIME_NONE,
	RUNTIME_PRELOAD,  /* fallback: the loader finds nothing; the runtime loads this copy first */
	RUNTIME_COHERENT, /* coherent: the copy in the asker's folder or wheel siblings, not the loader's */
};

struct object;

/* One DT_NEEDED entry of an object, or one of its run-time dependents (a bare-name dlopen the table
   says it makes). */
struct dependency {
	char *name;             /* run time, when no file of the family exists: the family's pattern */
	int family;             /* the NVIDIA family of the name, or -1 */
	enum how how;
	struct object *object;  /* what it resolved to; NULL when not found (or not followed) */
	char *path;             /* not_followed: the file the loader would take */
	bool not_followed;      /* found, but the tree had reached its bound of objects: not loaded here */
	bool run_time;          /* a run-time dependent, looked up as the object's dlopen(name) */
	bool required;          /* run time: the table marks it required (else it loads only when used) */
	bool loads;             /* this entry loaded the object: its own needs are listed here */
	char *hwcaps;           /* the glibc-hwcaps subfolder it came from, or NULL */
	char *error;            /* HOW_ERROR: the file and the loader's complaint */
	struct attempt *attempts; /* every place looked (not found), or the files passed over (found) */
	size_t attempt_count;
	enum runtime_action action;
	char *loader_path;      /* RUNTIME_COHERENT: the loader's own choice, or NULL when it had none */
};

struct object {
	size_t index;           /* in tree->objects */
	char *path;             /* as the loader names it (l_name) */
	char *origin;           /* what $ORIGIN means for it: the folder of that path */
	const struct elf_facts *facts; /* NULL for a preloaded object the inspector cannot read */
	int family;             /* from its SONAME, else its file name; -1 when not NVIDIA's */
	struct object *loader;  /* the object whose DT_NEEDED loaded it (l_loader) */
	char **names;           /* the names it answers to besides its path and SONAME */
	size_t name_count;
	dev_t device;
	ino_t inode;
	char **rpath, **runpath; /* expanded; no RPATH when there is a RUNPATH */
	int rpath_count, runpath_count; /* -1 until expanded */
	struct loader_object model; /* what the loader model reads of it, once expanded */
	struct dependency *needed;
	size_t needed_count;
	struct dependency *runtime; /* its run-time dependents from the table, resolved after the tree */
	size_t runtime_count;
	bool preloaded;         /* in the process before (--pid), not loaded by this tree */
	bool interpreter;       /* the loader itself */
	bool dlopened;          /* a run-time dependent: loaded by dlopen, after the tree */
	bool system;            /* the C library or the compiler's runtime (folded in the text tree) */
	size_t depth;           /* levels below the root along the entries that loaded it */
	int runtime_depth;      /* how deep the runtime's DT_NEEDED help reaches it; -1 when it does not */
};

/* Something a person should know about a tree. Mixed origins name the four paths; the loader's
   oddities only say what they are in text. */
enum warning_kind {
	WARNING_LOADER,       /* a search the inspector does not model, or a cache entry it does not take */
	WARNING_MIXED_ORIGIN, /* an NVIDIA library gets an NVIDIA dependency from another installation */
	WARNING_CUT,          /* the tree reached its bound of objects */
};

struct warning {
	enum warning_kind kind;
	char *library;    /* mixed origin: the asker's path */
	char *dependency; /* the name it asked for */
	char *got;        /* the file it gets */
	char *own;        /* the copy its own installation holds, or NULL */
	enum how how;     /* how it got it */
	bool run_time;    /* the dependency is a run-time one */
	char *text;       /* the whole warning, one line */
};

const char *warning_kind_name(enum warning_kind kind);

/* An object's entries, its DT_NEEDED ones then its run-time ones, as one list. */
static inline size_t object_entry_count(const struct object *object) { return object->needed_count + object->runtime_count; }

static inline struct dependency *object_entry(const struct object *object, size_t i)
{
	return i < object->needed_count ? &object->needed[i] : &object->runtime[i - object->needed_count];
}

/* Default view: a dependency the loader alone misses that the runtime would supply under the
   default policy, as the what-if (--policy=fallback) finds it. */
struct supply {
	char *name;   /* the name asked for */
	char *asker;  /* the object that asks for it */
	char *path;   /* the copy the runtime would load */
	enum how how; /* where the runtime finds it */
	bool run_time;
};

struct tree {
	char *file;             /* as given */
	struct elf_facts root_facts;
	struct object *root;
	struct object **objects;/* every object, in load order */
	size_t object_count, object_capacity;
	size_t max_objects;     /* the bound on objects: past it, dependencies are not followed */
	bool cut;               /* the bound was reached: the tree is incomplete */
	struct string_map by_name;  /* name an object answers to -> object (first loaded wins) */
	struct string_map by_inode; /* "device:inode" -> object */
	size_t missing;         /* DT_NEEDED and required run-time dependents not found or stopped at an error */
	size_t optional_missing;/* run-time dependents marked optional that are not found */
	struct warning *warnings;
	size_t warning_count;
	char **notes;
	size_t note_count;
	bool what_if;
	enum policy policy;
	size_t action_count;
	/* What-if of a program (or a library the table does not know): the tree as under
	   nvinterpose-run --audit, whose audit front answers the loader's searches for NVIDIA names
	   (the program's own DT_NEEDED too), where the preloaded runtime helps none of them. */
	bool audit_front;
	struct supply *would_supply; /* default view only */
	size_t would_supply_count;
};

void tree_free(struct tree *tree);
void tree_free_attempts(struct attempt *attempts, size_t count);

/* A new object of the tree (path as the loader names it, facts NULL when unread), its $ORIGIN the
   folder of path; NULL when out of memory. */
struct object *tree_new_object(struct tree *tree, const char *path, const struct elf_facts *facts);
/* The folder of path (what $ORIGIN means for it), malloc'd; "." for a bare name. */
char *tree_folder_of(const char *path);
/* Adds a name object answers to (first loaded wins: a name taken stays with its first object). */
void tree_add_name(struct tree *tree, struct object *object, const char *name);
/* Its file, for the loader's device-and-inode check (objects the inspector could not read have none). */
void tree_set_inode(struct tree *tree, struct object *object, dev_t device, ino_t inode);
/* The object loaded first that answers to name (its path, its SONAME, a name it was found by). */
struct object *tree_object_answering(const struct tree *tree, const char *name);
/* The object loaded from this file (device and inode), as _dl_map_object_from_fd compares them. */
struct object *tree_object_of_file(const struct tree *tree, dev_t device, ino_t inode);
/* printf into a new warning (kind WARNING_LOADER) or note of the tree; one like it is not added twice. */
void tree_warn(struct tree *tree, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Adds warning (its strings are copied) unless one with the same text is there. */
void tree_add_warning(struct tree *tree, const struct warning *warning);
void tree_note(struct tree *tree, const char *format, ...) __attribute__((format(printf, 2, 3)));
