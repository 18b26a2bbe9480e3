/* The NVIDIA libraries a folder holds and those ld.so.cache names, by family: where a run-time
   dependent, which the table names only by its family, may be found. Each folder is listed once a
   run, and only the names the table recognizes are kept. */
#pragma once

#include "loader/ld_cache.h"
#include "string_map.h"

#include <stdbool.h>
#include <stddef.h>

struct family_names {
	char **names;
	int *families;
	size_t count;
};

/* Adds a name of family (nothing when memory is short); frees them all. */
void family_names_add(struct family_names *names, const char *name, int family);
void family_names_free(struct family_names *names);

struct family_files {
	const struct ld_cache *cache; /* NULL: none */
	struct string_map folders;    /* "\ndevice:inode" of a folder -> struct family_names (owned) */
	struct string_map aliases;    /* folder as named -> its entry in folders */
	struct family_names cached;   /* the cache's names, once listed */
	bool cache_listed;
};

void family_files_init(struct family_files *files, const struct ld_cache *cache);
void family_files_free(struct family_files *files);

/* The NVIDIA file names in folder (none when it cannot be read). */
const struct family_names *family_files_in_folder(struct family_files *files, const char *folder);
/* The NVIDIA names ld.so.cache holds for this process's kind of library. */
const struct family_names *family_files_in_cache(struct family_files *files);
