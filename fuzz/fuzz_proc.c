/* libFuzzer target: the inspector's parsers of a process (inspect/what_if.c): the text of
   /proc/PID/maps, of /proc/PID/environ (NUL-separated entries, given by length) and of
   /proc/PID/status, after one byte that says which. Promises: each mapped file once, a path that
   starts with '/' and is no " (deleted)" one; an environment value that lies in the text after its
   "NAME="; effective ids and at most PLATFORM_MAX_GROUPS groups, true only with Uid: and Gid:. */
#define _GNU_SOURCE
#include "fuzz_text.h"
#include "what_if.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	size_t count;
	char *paths[64];
};

static void visit(const char *path, void *arg)
{
	struct seen *seen = arg;
	size_t n = strlen(path);
	if (path[0] != '/' || (n > 10 && strcmp(path + n - 10, " (deleted)") == 0))
		abort();
	for (size_t i = 0; i < seen->count; i++)
		if (strcmp(seen->paths[i], path) == 0)
			abort();
	if (seen->count < 64)
		seen->paths[seen->count++] = strdup(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t which = data[0] % 3;
	data++, size--;
	if (which == 0) {
		struct fuzz_parts parts;
		fuzz_parts_of(data, size, 1, &parts);
		struct seen seen = { 0 };
		what_if_mapped_files(parts.part[0], visit, &seen);
		for (size_t i = 0; i < seen.count; i++)
			free(seen.paths[i]);
		fuzz_parts_free(&parts);
	} else if (which == 1) {
		char *text = fuzz_bytes(data, size);
		static const char *const names[] = { "LD_LIBRARY_PATH", "NVINTERPOSE_PATH", "" };
		for (size_t i = 0; i < 3; i++) {
			char *value = what_if_environment_value(text, size, names[i]);
			if (value) {
				/* It is the tail of an entry "NAME=VALUE" in the text. */
				char *entry = malloc(strlen(names[i]) + strlen(value) + 2);
				strcpy(entry, names[i]);
				strcat(entry, "=");
				strcat(entry, value);
				if (!memmem(text, size, entry, strlen(entry)))
					abort();
				free(entry);
				free(value);
			}
		}
		free(text);
	} else {
		struct fuzz_parts parts;
		fuzz_parts_of(data, size, 1, &parts);
		struct platform_identity who;
		bool known = what_if_parse_status(parts.part[0], &who);
		if (known != who.known || who.group_count > PLATFORM_MAX_GROUPS || (known && (!strstr(parts.part[0], "Uid:") || !strstr(parts.part[0], "Gid:"))))
			abort();
		fuzz_parts_free(&parts);
	}
	return 0;
}
