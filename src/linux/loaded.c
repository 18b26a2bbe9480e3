/* The loaded-objects index. Entries are appended, never removed (a reloaded library reuses its
   entry), so readers need no lock; each entry carries the generation of the last scan that saw it
   loaded. A sync is one dl_iterate_phdr call: its first callback compares the loader's adds/subs
   counters with the last scan's and stops there when nothing changed; otherwise the same call
   scans every object. All index writes happen inside those callbacks, where the loader's list
   lock serializes them, so the runtime takes no lock of its own around the loader's (the order is
   always the loader's lock first). Origins are registered, and anything worth saying is said, after
   the call returns, outside it. */
#define _GNU_SOURCE
#include "loaded.h"

#include "dynamic.h"
#include "libnames.h"
#include "loader/dst.h"
#include "log.h"
#include "origins.h"
#include "platform.h"
#include "registry.h"
#include "report.h"
#include "walk.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOADED_TEXT_BYTES (256 * 1024)

struct entry {
	struct loaded_object object;
	size_t soname_length; /* lengths tell most entries apart before any string compare */
	size_t path_length;
	atomic_flag relative_reported;
};

static struct entry entries[LOADED_MAX_OBJECTS];
static _Atomic size_t entry_count;
static char text[LOADED_TEXT_BYTES];
static size_t text_used;
static _Atomic unsigned long long seen_adds = (unsigned long long)-1, seen_subs = (unsigned long long)-1;
static _Atomic unsigned long scan_generation;    /* the last scan started */
_Atomic unsigned long loaded_current_generation; /* the newest scan finished */
static _Atomic bool index_full;     /* an object found no room: said once, after the scan */
static atomic_flag full_reported = ATOMIC_FLAG_INIT;

static atomic_flag askers_lock = ATOMIC_FLAG_INIT; /* the notes of who asked, below */

/* A fork while another thread holds the lock: the child takes it anew (a note is read only once
   it is counted). */
static void reset_askers_lock_in_child(void) { atomic_flag_clear(&askers_lock); }

void loaded_init(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	walk_init();
	if (!atomic_flag_test_and_set(&done))
		platform_after_fork_in_child(reset_askers_lock_in_child);
}

/* Relative names the front saw loaded, as hashes: the front registered their folder at that moment
   (the loader fixes a relative object's $ORIGIN against the working folder of its load), so a
   scan that meets one later says nothing about it. */
#define NOTED_RELATIVE 256
static _Atomic unsigned long long noted_relative[NOTED_RELATIVE];

static unsigned long long hash_name(const char *name)
{
	unsigned long long hash = 14695981039346656037ull; /* FNV-1a */
	for (; *name; name++)
		hash = (hash ^ (unsigned char)*name) * 1099511628211ull;
	return hash | 1; /* never 0, the empty slot */
}

void loaded_note_relative_load(const char *name)
{
	unsigned long long hash = hash_name(name);
	for (size_t i = 0; i < NOTED_RELATIVE; i++) {
		unsigned long long expected = 0;
		if (atomic_load(&noted_relative[i]) == hash ||
		    atomic_compare_exchange_strong(&noted_relative[i], &expected, hash))
			return;
	}
}

static bool relative_load_was_noted(const char *name)
{
	unsigned long long hash = hash_name(name);
	for (size_t i = 0; i < NOTED_RELATIVE; i++) {
		unsigned long long slot = atomic_load(&noted_relative[i]);
		if (slot == hash)
			return true;
		if (slot == 0)
			return false;
	}
	return false;
}

struct scan {
	bool first;
	bool changed;
	unsigned long generation;
	unsigned long long adds, subs;
};

static struct entry *find_entry(const char *path, const char *soname, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(entries[i].object.path, path) == 0 && strcmp(entries[i].object.soname, soname) == 0)
			return &entries[i];
	return NULL;
}

static struct entry *append_entry(int family, const char *path, const char *soname)
{
	size_t n = atomic_load_explicit(&entry_count, memory_order_relaxed);
	size_t length = strlen(path) + 1;
	if (n == LOADED_MAX_OBJECTS || text_used + length > sizeof(text) || strlen(soname) >= LOADED_SONAME_MAX) {
		atomic_store(&index_full, true);
		return NULL;
	}
	struct entry *entry = &entries[n];
	entry->object.family = family;
	entry->object.driver = libnames_is_driver(family);
	strcpy(entry->object.soname, soname);
	entry->object.path = memcpy(text + text_used, path, length);
	entry->soname_length = strlen(soname);
	entry->path_length = length - 1;
	text_used += length;
	atomic_store_explicit(&entry_count, n + 1, memory_order_release);
	return entry;
}

/* ---- who asked ---------------------------------------------------------------------------
   The loader loads what the front passes on (a bare name it finds itself, the DT_NEEDED of a
   library loaded by path) after the hooks have returned: its origin is registered at the next
   sync, which no longer knows the request. The front notes each such request here, by name, while
   someone will read the answer (the log, the event log, the report). */
#define NOTED_ASKERS 8

static struct noted_asker {
	char name[NAME_MAX + 1];
	char asker[PATH_MAX];
	const char *how;
} noted_askers[NOTED_ASKERS];
static size_t noted_next;

static void lock_askers(void)
{
	while (atomic_flag_test_and_set_explicit(&askers_lock, memory_order_acquire))
		;
}

static void unlock_askers(void) { atomic_flag_clear_explicit(&askers_lock, memory_order_release); }

void loaded_note_asker(const char *name, const char *asker, const char *how)
{
	if (strlen(name) > NAME_MAX || strlen(asker) >= PATH_MAX)
		return;
	lock_askers();
	struct noted_asker *slot = &noted_askers[noted_next++ % NOTED_ASKERS]; /* the oldest goes */
	strcpy(slot->name, name);
	strcpy(slot->asker, asker);
	slot->how = how;
	unlock_askers();
}

bool loaded_take_asker(const char *soname, const char *base, char *asker, size_t size, const char **how)
{
	bool found = false;
	lock_askers();
	for (size_t i = 0; i < NOTED_ASKERS && !found; i++) {
		struct noted_asker *slot = &noted_askers[i];
		if (slot->name[0] && (strcmp(slot->name, soname) == 0 || strcmp(slot->name, base) == 0) &&
		    strlen(slot->asker) < size) {
			strcpy(asker, slot->asker);
			*how = slot->how;
			slot->name[0] = '\0';
			found = true;
		}
	}
	unlock_askers();
	return found;
}

struct needer_search {
	const char *name;
	char *asker;
	size_t size;
	bool found;
};

/* Under the loader's list lock: no allocation, no logging. */
static int find_needer(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct needer_search *search = arg;
	(void)size;
	if (!dynamic_loaded_needs(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, search->name))
		return 0;
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : loaded_program_path();
	if (strlen(name) >= search->size)
		return 0;
	strcpy(search->asker, name);
	search->found = true;
	return 1; /* the first in load order: the loader maps dependencies breadth first */
}

bool loaded_mixed_origin_first(const struct loaded_object *object)
{
	/* The index's own storage, which it hands out read-only. */
	struct loaded_object *own = (struct loaded_object *)object;
	return !atomic_load_explicit(&own->mixed_origin_looked, memory_order_relaxed) &&
	       !atomic_exchange_explicit(&own->mixed_origin_looked, true, memory_order_relaxed);
}

const char *loaded_program_path(void)
{
	static char path[PATH_MAX];
	static _Atomic int state; /* 0 not read, 1 being read, 2 read */
	int expected = 0;
	if (atomic_compare_exchange_strong(&state, &expected, 1)) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		if (n > 0)
			path[n] = '\0';
		else
			strcpy(path, "(main program)");
		atomic_store(&state, 2);
	}
	while (atomic_load(&state) != 2)
		platform_yield();
	return path;
}

/* The object that asked for this one: a noted request, else the first object that names it in its
   DT_NEEDED (the program included); NULL when neither (a dlopen the runtime did not see). */
static const char *asker_of(const struct loaded_object *object, char *asker, size_t size, const char **how)
{
	const char *base = libnames_basename(object->path);
	*how = NULL;
	if (loaded_take_asker(object->soname, base, asker, size, how))
		return asker;
	if (!report_askers_wanted())
		return NULL; /* nobody reads it */
	struct needer_search search = { .name = object->soname[0] ? object->soname : base, .asker = asker, .size = size };
	loaded_program_path(); /* read now, not under the loader's lock */
	walk_loaded_objects(find_needer, &search);
	return search.found ? asker : NULL;
}

static void register_origin(struct entry *entry)
{
	char folder[PATH_MAX], asker[PATH_MAX];
	const struct loaded_object *object = &entry->object;
	if (object->path[0] != '/') {
		/* Its folder was fixed against the working folder of its load, which may have changed. */
		if (!relative_load_was_noted(object->path) && !atomic_flag_test_and_set(&entry->relative_reported))
			log_message(LOG_WARN, "%s was loaded as %s (a relative name) before the runtime saw it: the folder it "
				    "came from is not known, so it is not registered", libnames[object->family].family, object->path);
		return;
	}
	if (!dst_origin_of(object->path, folder, sizeof(folder)) || registry_has_origin(object->family, folder))
		return;
	const char *how;
	const char *caller = asker_of(object, asker, sizeof(asker), &how);
	origins_register(&(struct origin_load){
		.family = object->family,
		.folder = folder,
		.path = object->path,
		.name = object->soname[0] ? object->soname : libnames_basename(object->path),
		.caller = caller,
		.dependent = caller != NULL,
		.reason = how ? how : caller ? "seen loaded" : "seen loaded; the request was not seen (made before the runtime "
						   "was there, or through a dlopen bound past its hooks)",
	});
}

/* Objects a scan found not to be NVIDIA's, remembered by where they are mapped (the load address,
   the program headers, the name's storage) and the hash of their file name: a later scan skips
   their dynamic section, and a process with hundreds of objects rescans every one after each
   unload. Only scan_object touches it, which dl_iterate_phdr runs with its lock held: one thread at
   a time. An entry is a hint that saves work: an object that differs in any of these is read
   afresh. Each object has VERDICT_WAYS slots to choose from, so that two never evict each other on
   every scan. */
#define VERDICTS 2048 /* 2^11: the top 11 bits of the key pick the first slot */
#define VERDICT_WAYS 4
static struct verdict {
	uintptr_t address;
	const void *headers;
	const char *name;
	unsigned long long name_hash;
} not_nvidia[VERDICTS + VERDICT_WAYS];

static size_t first_slot(const struct dl_phdr_info *info, unsigned long long name_hash)
{
	unsigned long long key = (name_hash ^ (uintptr_t)info->dlpi_phdr) * 0x9e3779b97f4a7c15ull; /* Fibonacci hashing */
	return (size_t)(key >> 53);
}

static bool known_not_nvidia(const struct dl_phdr_info *info, unsigned long long name_hash)
{
	const struct verdict *slot = &not_nvidia[first_slot(info, name_hash)];
	for (size_t i = 0; i < VERDICT_WAYS; i++, slot++)
		if (slot->headers == info->dlpi_phdr && slot->address == info->dlpi_addr && slot->name == info->dlpi_name &&
		    slot->name_hash == name_hash)
			return true;
	return false;
}

static void note_not_nvidia(const struct dl_phdr_info *info, unsigned long long name_hash)
{
	struct verdict *slot = &not_nvidia[first_slot(info, name_hash)], *pick = slot;
	for (size_t i = 0; i < VERDICT_WAYS; i++, slot++)
		if (!slot->headers) {
			pick = slot;
			break;
		}
	*pick = (struct verdict){ .address = info->dlpi_addr, .headers = info->dlpi_phdr, .name = info->dlpi_name, .name_hash = name_hash };
}

/* Runs with the loader's list lock held: it allocates nothing, calls into no loader function and
   logs nothing (a full stderr pipe would stall every thread's dl_iterate_phdr meanwhile). */
static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *scan = arg;
	(void)size;
	if (scan->first) {
		scan->first = false;
		scan->adds = info->dlpi_adds;
		scan->subs = info->dlpi_subs;
		if (scan->adds == atomic_load(&seen_adds) && scan->subs == atomic_load(&seen_subs))
			return 1; /* nothing loaded or unloaded since the last scan */
		scan->changed = true;
		scan->generation = atomic_fetch_add(&scan_generation, 1) + 1;
	}
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0; /* the main program */
	const char *base = libnames_basename(info->dlpi_name);
	unsigned long long name_hash = hash_name(base);
	if (known_not_nvidia(info, name_hash))
		return 0;
	struct dynamic_facts facts;
	dynamic_read_loaded(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &facts);
	int family = libnames_match_linux(base, NULL);
	if (family < 0 && facts.soname)
		family = libnames_match_linux(facts.soname, NULL);
	if (family < 0) {
		note_not_nvidia(info, name_hash);
		return 0;
	}
	/* Without a DT_SONAME, the loader matches a bare name only against the name the object was
	   loaded under, which the index does not keep: no soname at all then. */
	const char *soname = facts.soname ? facts.soname : "";
	const char *path = info->dlpi_name;
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	struct entry *entry = find_entry(path, soname, n);
	if (!entry)
		entry = append_entry(family, path, soname);
	if (!entry)
		return 0;
	atomic_store_explicit(&entry->object.generation, scan->generation, memory_order_release);
	return 0;
}

void loaded_sync(void)
{
	struct scan scan = { .first = true };
	walk_loaded_objects(scan_object, &scan);
	if (atomic_load(&index_full) && !atomic_flag_test_and_set(&full_reported))
		log_message(LOG_WARN, "the index of loaded NVIDIA libraries is full (%d objects); later ones are left to the plain loader",
			    LOADED_MAX_OBJECTS);
	if (!scan.changed)
		return;
	/* Publish: generations only grow, so a scan that finishes late cannot hide a newer one. */
	unsigned long current = atomic_load(&loaded_current_generation);
	while (current < scan.generation && !atomic_compare_exchange_weak(&loaded_current_generation, &current, scan.generation))
		;
	atomic_store(&seen_adds, scan.adds);
	atomic_store(&seen_subs, scan.subs);
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (atomic_load(&entries[i].object.generation) == scan.generation)
			register_origin(&entries[i]);
}

/* Seen by the newest finished scan, or by one still running (which has not published yet). */
static bool is_loaded(const struct entry *entry) { return loaded_still_loaded(&entry->object); }

const struct loaded_object *loaded_find_soname(const char *soname)
{
	size_t length = strlen(soname);
	if (length == 0)
		return NULL;
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (entries[i].soname_length == length && memcmp(entries[i].object.soname, soname, length) == 0 && is_loaded(&entries[i]))
			return &entries[i].object;
	return NULL;
}

const struct loaded_object *loaded_find_path(const char *path)
{
	/* The loader matches a repeated name against the name it loaded the object as, relative or
	   not; a name it does not match it opens and compares by file. Entries share long folder
	   prefixes: a length and a last character tell most apart. */
	size_t length = strlen(path);
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	for (size_t i = 0; length && i < n; i++) {
		const struct entry *entry = &entries[i];
		if (entry->path_length != length || entry->object.path[length - 1] != path[length - 1])
			continue;
		if (memcmp(entry->object.path, path, length) == 0 && is_loaded(entry))
			return &entry->object;
	}
	return NULL;
}

const struct loaded_object *loaded_find(const char *file, bool by_path)
{
	return by_path ? loaded_find_path(file) : loaded_find_soname(file);
}

bool loaded_has_path(const char *path) { return loaded_find_path(path) != NULL; }


bool loaded_has_family(int family)
{
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (entries[i].object.family == family && is_loaded(&entries[i]))
			return true;
	return false;
}

void loaded_foreach(bool (*visit)(const struct loaded_object *object, void *arg), void *arg)
{
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (is_loaded(&entries[i]) && visit(&entries[i].object, arg))
			return;
}
