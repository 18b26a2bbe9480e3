/* libFuzzer target: the loader's dynamic string tokens (src/loader/dst.c). The input is a search
   list, then $ORIGIN's, $LIB's and $PLATFORM's values, cut at NUL bytes (a missing one has no
   value). Promises: a count of elements, or -1 only when memory runs out; as many strings stored
   as there is room for; no known token left in an element when every token has a value that
   cannot complete one; $ORIGIN of a path within its buffer, or false. */
#include "fuzz_text.h"
#include "loader/dst.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAPACITY 8

/* A value that cannot complete a token with the literal text around it: not empty ("${LIB$LIB}"
   with an empty $LIB leaves the literal "${LIB}", as glibc's single pass does), and no '$', brace
   or capital letter (the tokens' names are capitals). */
static bool plain(const char *value)
{
	for (const char *s = value; *s; s++)
		if (*s == '$' || *s == '{' || *s == '}' || (*s >= 'A' && *s <= 'Z'))
			return false;
	return value[0] != '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_parts parts;
	fuzz_parts_of(data, size, 4, &parts);
	const char *list = parts.part[0], *origin = parts.part[1], *lib = parts.part[2], *platform = parts.part[3];
	char *elements[CAPACITY];
	int count = dst_expand_search_path(list, origin, lib, platform, elements, CAPACITY);
	if (count < 0)
		abort();
	bool plain_values = origin && lib && platform && plain(origin) && plain(lib) && plain(platform);
	for (int i = 0; i < count && i < CAPACITY; i++) {
		if (!elements[i])
			abort();
		if (plain_values && (dst_uses_token(elements[i], "ORIGIN") || dst_uses_token(elements[i], "LIB") ||
				     dst_uses_token(elements[i], "PLATFORM")))
			abort();
		free(elements[i]);
	}
	/* The element count never exceeds the separators plus one. */
	size_t separators = 0;
	for (const char *s = list; *s; s++)
		separators += *s == ':';
	if ((size_t)count > separators + 1)
		abort();
	char folder[64];
	if (dst_origin_of(list, folder, sizeof(folder)) && !memchr(folder, '\0', sizeof(folder)))
		abort();
	fuzz_parts_free(&parts);
	return 0;
}
