/* The index of loaded NVIDIA objects, kept fresh by dl_iterate_phdr's adds/subs counters. Syncing
   it is also how the runtime registers origins: every NVIDIA object that appeared since the last
   sync has the folder of its path registered. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define LOADED_MAX_OBJECTS 512
#define LOADED_SONAME_MAX 256

struct loaded_object {
	_Atomic unsigned long generation; /* the sync that last saw it loaded */
	int family;
	bool driver;                    /* the family's driver flag */
	char soname[LOADED_SONAME_MAX]; /* DT_SONAME, or "" when it has none */
	const char *path;               /* the name the loader loaded it as (l_name), which may be relative */
	_Atomic bool mixed_origin_looked; /* loaded_mixed_origin_first was asked */
};

void loaded_init(void);

/* Brings the index up to date when objects were added or removed since the last call (a single
   dl_iterate_phdr step when nothing changed) and registers the origins of the NVIDIA objects that
   appeared. On return the index covers every object loaded before the call. */
void loaded_sync(void);

/* True when an NVIDIA object of this family is loaded, as of the last sync (call loaded_sync
   first for an answer about now). */
bool loaded_has_family(int family);
/* True when an NVIDIA object the loader loaded as path (the same name, relative or absolute) is loaded. */
bool loaded_has_path(const char *path);

/* The loaded object of that soname, or loaded as that path; NULL when none is (as of the last sync).
   The object stays valid for the life of the process (a reloaded library reuses its entry). */
const struct loaded_object *loaded_find_soname(const char *soname);
const struct loaded_object *loaded_find_path(const char *path);
/* The one the loader would match a dlopen of file with: a path (by_path) or a soname. */
const struct loaded_object *loaded_find(const char *file, bool by_path);
/* Whether an object found before is loaded still, as of the last sync: seen by the newest finished
   sync, or by one still running (which has not published yet). */
extern _Atomic unsigned long loaded_current_generation;
static inline bool loaded_still_loaded(const struct loaded_object *object)
{
	return atomic_load_explicit(&object->generation, memory_order_acquire) >=
	       atomic_load_explicit(&loaded_current_generation, memory_order_acquire);
}

/* The front saw path, a relative name, loaded, and registered its folder then: a later scan need
   not say that it cannot. */
void loaded_note_relative_load(const char *path);

/* The front passed a load of name, asked for by asker, to the loader, or the runtime loads it
   for asker itself: when its origin is registered at a later sync, asker is its caller and how
   (static text: "loaded by the runtime for its caller") the register event's reason; NULL: "seen
   loaded". */
void loaded_note_asker(const char *name, const char *asker, const char *how);

/* The noted asker of an object with this soname or file name, into asker, and how it was loaded
   (NULL unless noted) into *how (and out of the notes). */
bool loaded_take_asker(const char *soname, const char *base, char *asker, size_t size, const char **how);

/* True the first time it is asked for object: a repeated load of it is looked at for a mixed
   origin once (as report_mixed_origin_first does by name), so the hot path pays a load and a test
   from then on. Lock-free and allocation-free. */
bool loaded_mixed_origin_first(const struct loaded_object *object);

/* The main program's path (/proc/self/exe), read once, for events that name it. */
const char *loaded_program_path(void);

/* Visits the NVIDIA objects loaded as of the last sync; stops when visit returns true. */
void loaded_foreach(bool (*visit)(const struct loaded_object *object, void *arg), void *arg);

