#define _GNU_SOURCE
#include "family_files.h"

#include "libnames.h"
#include "platform.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void family_files_init(struct family_files *files, const struct ld_cache *cache)
{
	memset(files, 0, sizeof(*files));
	files->cache = cache;
}

void family_names_free(struct family_names *names)
{
	for (size_t i = 0; i < names->count; i++)
		free(names->names[i]);
	free(names->names);
	free(names->families);
	memset(names, 0, sizeof(*names));
}

static void free_listing(void *value)
{
	family_names_free(value);
	free(value);
}

void family_files_free(struct family_files *files)
{
	string_map_clear(&files->folders, free_listing);
	string_map_clear(&files->aliases, NULL);
	family_names_free(&files->cached);
}

void family_names_add(struct family_names *names, const char *name, int family)
{
	char **grown = realloc(names->names, (names->count + 1) * sizeof(char *));
	if (grown)
		names->names = grown;
	int *families = grown ? realloc(names->families, (names->count + 1) * sizeof(int)) : NULL;
	if (families)
		names->families = families;
	if (!grown || !families || !(names->names[names->count] = strdup(name)))
		return;
	names->families[names->count++] = family;
}

const struct family_names *family_files_in_folder(struct family_files *files, const char *folder)
{
	struct family_names *names = string_map_get(&files->aliases, folder);
	if (names)
		return names;
	/* One listing a folder, whatever names it (/lib and /usr/lib are often one); a folder that
	   cannot be read lists nothing, under its name. */
	struct stat st;
	char key[PATH_MAX + 64];
	if (stat(folder[0] ? folder : ".", &st) == 0)
		snprintf(key, sizeof(key), "\n%llx:%llx", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	else
		snprintf(key, sizeof(key), "%s", folder);
	if (!(names = string_map_get(&files->folders, key))) {
		if (!(names = calloc(1, sizeof(*names))))
			return NULL;
		/* "" is the current folder, as in a search list; names in byte order, as the runtime's. */
		char **listed = NULL;
		int n = platform_list_folder(folder[0] ? folder : ".", &listed);
		for (int i = 0; i < n; i++) {
			int family = libnames_match_linux(listed[i], NULL);
			if (family >= 0)
				family_names_add(names, listed[i], family);
		}
		platform_free_names(listed, n);
		if (!string_map_put(&files->folders, key, names)) {
			free_listing(names);
			return NULL;
		}
	}
	string_map_put(&files->aliases, folder, names);
	return names;
}

const struct family_names *family_files_in_cache(struct family_files *files)
{
	if (files->cache_listed || !files->cache)
		return &files->cached;
	files->cache_listed = true;
	const char *last = NULL;
	for (uint32_t i = 0; i < files->cache->count; i++) {
		const char *name = ld_cache_name_at(files->cache, i);
		if (!name || (last && strcmp(name, last) == 0)) /* one name, several entries (hwcaps) */
			continue;
		last = name;
		int family = libnames_match_linux(name, NULL);
		if (family >= 0)
			family_names_add(&files->cached, name, family);
	}
	return &files->cached;
}
