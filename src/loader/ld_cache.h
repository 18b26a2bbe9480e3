/* /etc/ld.so.cache as glibc's loader reads it. The format is "glibc-ld.so.cache1.1", alone or after
   the old "ld.so-1.7.0" one. It is searched the loader's way, a binary search in the file's own order
   with digits compared as numbers, and only the entries for this process's kind of library count
   (class, machine, ABI, as the loader's _dl_cache_check_flags says). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ld_cache_entry {
	const char *path;   /* the file the loader opens */
	const char *hwcaps; /* the glibc-hwcaps subfolder the entry is for ("x86-64-v3"), or NULL */
	bool legacy_hwcap;  /* an old-style hwcap mask the inspector does not evaluate */
};

struct ld_cache {
	char *data; /* the whole file */
	size_t size;
	size_t base;      /* where the new format's header starts: its strings are relative to it */
	uint32_t count;   /* entries */
	const char **hwcaps; /* the glibc-hwcaps subfolder names of the extension section */
	size_t hwcaps_count;
};

/* Reads the cache at path. 0, or -1 with a one-line message when it is absent, unreadable or not a
   cache the loader would use (the loader then goes on without one, and so does the inspector). */
int ld_cache_read(const char *path, struct ld_cache *cache, char *message, size_t size);
void ld_cache_free(struct ld_cache *cache);

/* The name of entry index (below cache->count) when the entry is one for this process's kind of
   library, else NULL: a walk over every name the cache holds. */
const char *ld_cache_name_at(const struct ld_cache *cache, uint32_t index);

/* The usable entries for name, in the order the loader meets them: up to capacity in entries;
   returns how many there are. */
size_t ld_cache_lookup(const struct ld_cache *cache, const char *name, struct ld_cache_entry *entries, size_t capacity);
