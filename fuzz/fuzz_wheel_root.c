/* libFuzzer target: the wheel-root rule (search_wheel_root in src/search.c), Linux and Windows
   (fuzz/search_windows.c). The first byte is the size of the buffer given. Promises: true only for
   ".../nvidia/PKG/LEAF" with a package name, writing the prefix up to ".../nvidia" (which fits) and
   the leaf; false writes nothing past the buffer. */
#include "fuzz_text.h"
#include "search.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
bool search_wheel_root_windows(const char *folder, char *parent, size_t size, const char **leaf);

static void check(bool windows, const char *folder, size_t room)
{
	char *parent = malloc(room ? room : 1);
	const char *leaf = NULL;
	bool found = windows ? search_wheel_root_windows(folder, parent, room, &leaf) : search_wheel_root(folder, parent, room, &leaf);
	if (found) {
		char separator = windows ? '\\' : '/';
		size_t n = strlen(parent);
		int (*compare)(const char *, const char *, size_t) = windows ? strncasecmp : strncmp;
		if (n >= room || strncmp(folder, parent, n) != 0 || n < 7 || parent[n - 7] != separator ||
		    compare(parent + n - 6, "nvidia", 6) != 0 || folder[n] != separator || !leaf ||
		    strcmp(leaf, windows ? "bin" : "lib") != 0)
			abort();
		/* PKG then the leaf, then nothing but separators. */
		const char *package = folder + n + 1, *slash = strchr(package, separator);
		if (!slash || slash == package || compare(slash + 1, leaf, 3) != 0)
			abort();
		for (const char *s = slash + 4; *s; s++)
			if (*s != separator)
				abort();
	}
	free(parent);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	struct fuzz_parts parts;
	fuzz_parts_of(data + 1, size - 1, 1, &parts);
	check(false, parts.part[0], data[0]);
	check(true, parts.part[0], data[0]);
	fuzz_parts_free(&parts);
	return 0;
}
