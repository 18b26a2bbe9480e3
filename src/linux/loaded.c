/* The loaded-objects index. Entries are appended, never removed (a reloaded library reuses its
   entry), so readers need no lock; a per-entry flag says whether the object is loaded now. One
   thread at a time rebuilds the flags; another thread arriving meanwhile keeps the last answer,
   which the front treats as a hint only (a stale "loaded" leaves the call to the plain loader). */
#define _GNU_SOURCE
#include "loaded.h"

#include "dynamic.h"
#include "libnames.h"
#include "log.h"
#include "registry.h"

#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOADED_TEXT_BYTES (256 * 1024)

struct entry {
	struct loaded_object object;
	const char *base;     /* the basename of object.path */
	size_t soname_length; /* lengths tell most entries apart before any string compare */
	size_t base_length;
	_Atomic unsigned long generation; /* the sync that last saw it loaded */
};

static struct entry entries[LOADED_MAX_OBJECTS];
static _Atomic size_t entry_count;
static char text[LOADED_TEXT_BYTES];
static size_t text_used;
static _Atomic unsigned long long seen_adds = (unsigned long long)-1, seen_subs = (unsigned long long)-1;
static _Atomic unsigned long current_generation;
static atomic_flag syncing = ATOMIC_FLAG_INIT;
static atomic_flag full_reported = ATOMIC_FLAG_INIT;

static void take_sync_lock(void)
{
	while (atomic_flag_test_and_set_explicit(&syncing, memory_order_acquire))
		sched_yield();
}

static void release_sync_lock(void) { atomic_flag_clear_explicit(&syncing, memory_order_release); }

/* A sync runs dl_iterate_phdr, which holds the loader's list lock; glibc's fork does not reset that
   lock in the child, so a fork during a sync would leave the child unable to load anything. Forks
   wait for the sync in progress, and the child starts with the lock free. */
void loaded_init(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set(&done))
		pthread_atfork(take_sync_lock, release_sync_lock, release_sync_lock);
}

bool loaded_folder_of(const char *path, char *folder, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t length = slash ? (size_t)(slash - path) : 0;
	size_t used = 0;
	if (path[0] != '/') {
		/* The loader resolves $ORIGIN of a relative path against the working directory. */
		if (!getcwd(folder, size))
			return false;
		used = strlen(folder);
		if (length && used + 1 < size)
			folder[used++] = '/';
	} else if (length == 0) {
		length = 1; /* "/libx.so" lives in "/" */
	}
	if (used + length >= size)
		return false;
	memcpy(folder + used, path, length);
	folder[used + length] = '\0';
	return true;
}

struct scan {
	unsigned long generation;
	unsigned long long adds, subs;
	bool first;
};

static struct entry *find_entry(const char *path, const char *soname, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(entries[i].object.path, path) == 0 && strcmp(entries[i].object.soname, soname) == 0)
			return &entries[i];
	return NULL;
}

static struct entry *append_entry(int family, const char *path, const char *soname, const struct dynamic_facts *facts)
{
	size_t n = atomic_load_explicit(&entry_count, memory_order_relaxed);
	size_t length = strlen(path) + 1;
	if (n == LOADED_MAX_OBJECTS || text_used + length > sizeof(text) || strlen(soname) >= LOADED_SONAME_MAX) {
		if (!atomic_flag_test_and_set(&full_reported))
			log_message(LOG_WARN, "the index of loaded NVIDIA libraries is full; %s and later ones are left to the plain loader", path);
		return NULL;
	}
	struct entry *entry = &entries[n];
	entry->object.family = family;
	strcpy(entry->object.soname, soname);
	entry->object.path = memcpy(text + text_used, path, length);
	entry->base = libnames_basename(entry->object.path);
	entry->soname_length = strlen(soname);
	entry->base_length = strlen(entry->base);
	entry->object.has_runpath = facts->has_runpath;
	entry->object.has_rpath = facts->has_rpath;
	text_used += length;
	atomic_store_explicit(&entry_count, n + 1, memory_order_release);
	return entry;
}

static void register_origin(const struct loaded_object *object)
{
	char folder[PATH_MAX];
	if (!loaded_folder_of(object->path, folder, sizeof(folder)))
		return;
	const char *family = libnames[object->family].family;
	switch (registry_add_origin(object->family, folder)) {
	case REGISTRY_ADDED:
		log_message(LOG_INFO, "%s loaded from %s: registered", family, folder);
		log_event(&(struct log_event){ .event = "register", .name = object->soname, .path = folder, .family = family });
		break;
	case REGISTRY_KNOWN:
		break;
	case REGISTRY_ERROR:
		log_message(LOG_WARN, "%s loaded from %s: cannot register the folder: %m", family, folder);
		break;
	}
}

/* Runs with the loader's list lock held: no allocation, no loader calls. */
static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *scan = arg;
	(void)size;
	if (scan->first) {
		scan->adds = info->dlpi_adds;
		scan->subs = info->dlpi_subs;
		scan->first = false;
	}
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0; /* the main program and the vDSO */
	struct dynamic_facts facts;
	dynamic_read_loaded(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &facts);
	const char *base = libnames_basename(info->dlpi_name);
	int family = libnames_match_linux(base, NULL);
	if (family < 0 && facts.soname)
		family = libnames_match_linux(facts.soname, NULL);
	if (family < 0)
		return 0;
	const char *soname = facts.soname ? facts.soname : base;
	char absolute[PATH_MAX];
	const char *path = info->dlpi_name;
	if (path[0] != '/') {
		char folder[PATH_MAX];
		if (!loaded_folder_of(path, folder, sizeof(folder)) ||
		    snprintf(absolute, sizeof(absolute), "%s/%s", folder, base) >= (int)sizeof(absolute))
			return 0;
		path = absolute;
	}
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	struct entry *entry = find_entry(path, soname, n);
	if (!entry)
		entry = append_entry(family, path, soname, &facts);
	if (!entry)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			entry->object.address = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
			break;
		}
	atomic_store_explicit(&entry->generation, scan->generation, memory_order_release);
	register_origin(&entry->object);
	return 0;
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *counters = arg;
	(void)size;
	counters[0] = info->dlpi_adds;
	counters[1] = info->dlpi_subs;
	return 1;
}

void loaded_sync(bool wait)
{
	if (wait)
		take_sync_lock();
	else if (atomic_flag_test_and_set_explicit(&syncing, memory_order_acquire))
		return; /* another thread is bringing it up to date now */
	unsigned long long counters[2] = { 0, 0 };
	dl_iterate_phdr(read_counters, counters);
	if (counters[0] != atomic_load_explicit(&seen_adds, memory_order_relaxed) ||
	    counters[1] != atomic_load_explicit(&seen_subs, memory_order_relaxed)) {
		struct scan scan = { .generation = atomic_load(&current_generation) + 1, .first = true };
		dl_iterate_phdr(scan_object, &scan);
		atomic_store_explicit(&current_generation, scan.generation, memory_order_release);
		atomic_store_explicit(&seen_adds, scan.adds, memory_order_relaxed);
		atomic_store_explicit(&seen_subs, scan.subs, memory_order_relaxed);
	}
	release_sync_lock();
}

static bool is_loaded(const struct entry *entry)
{
	return atomic_load_explicit(&entry->generation, memory_order_acquire) ==
	       atomic_load_explicit(&current_generation, memory_order_acquire);
}

bool loaded_has_soname(const char *soname)
{
	size_t length = strlen(soname);
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (entries[i].soname_length == length && memcmp(entries[i].object.soname, soname, length) == 0 && is_loaded(&entries[i]))
			return true;
	return false;
}

bool loaded_has_path(const char *path)
{
	char absolute[PATH_MAX];
	if (path[0] != '/') {
		char folder[PATH_MAX];
		if (!loaded_folder_of(path, folder, sizeof(folder)) ||
		    snprintf(absolute, sizeof(absolute), "%s/%s", folder, libnames_basename(path)) >= (int)sizeof(absolute))
			return false;
		path = absolute;
	}
	/* Entries share long folder prefixes: their basenames tell them apart sooner. */
	const char *base = libnames_basename(path);
	size_t length = strlen(base);
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (entries[i].base_length == length && strcmp(entries[i].object.path, path) == 0 && is_loaded(&entries[i]))
			return true;
	return false;
}

bool loaded_path_of_soname(const char *soname, char *path, size_t size)
{
	size_t n = atomic_load_explicit(&entry_count, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (strcmp(entries[i].object.soname, soname) == 0 && is_loaded(&entries[i]) && strlen(entries[i].object.path) < size) {
			strcpy(path, entries[i].object.path);
			return true;
		}
	return false;
}

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
