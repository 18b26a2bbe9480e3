/* Dynamic string tokens, as glibc's _dl_dst_substitute and fillin_rpath apply them to RPATH and
   RUNPATH elements. */
#include "loader/dst.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The length of the token named name at s (just after a '$'), in either spelling, or 0. */
static size_t token_length(const char *s, size_t limit, const char *name)
{
	size_t n = strlen(name);
	if (limit >= n + 2 && s[0] == '{' && strncmp(s + 1, name, n) == 0 && s[n + 1] == '}')
		return n + 2;
	if (limit >= n && strncmp(s, name, n) == 0 && (limit == n || !is_name_char(s[n])))
		return n;
	return 0;
}

/* Expands one element of length length; NULL with *dropped set when a known token has no value. */
static char *expand_element(const char *element, size_t length, const char *const names[3], const char *const values[3],
			    bool *dropped)
{
	size_t size = 1;
	/* First pass: the expanded length. */
	for (int pass = 0; pass < 2; pass++) {
		char *out = pass ? malloc(size) : NULL;
		size_t used = 0;
		if (pass && !out)
			return NULL;
		for (size_t i = 0; i < length;) {
			size_t token = 0;
			int which = -1;
			if (element[i] == '$')
				for (int k = 0; k < 3 && !token; k++)
					if ((token = token_length(element + i + 1, length - i - 1, names[k])))
						which = k;
			if (token) {
				if (!values[which]) {
					*dropped = true;
					free(out);
					return NULL;
				}
				size_t n = strlen(values[which]);
				if (pass)
					memcpy(out + used, values[which], n);
				used += n;
				i += token + 1;
			} else {
				if (pass)
					out[used] = element[i];
				used++;
				i++;
			}
		}
		if (pass) {
			out[used] = '\0';
			return out;
		}
		size = used + 1;
	}
	return NULL;
}

int dst_expand_search_path(const char *list, const char *origin, const char *lib, const char *platform,
			   char **elements, size_t capacity)
{
	static const char *const names[3] = { "ORIGIN", "LIB", "PLATFORM" };
	const char *values[3] = { origin, lib, platform };
	size_t count = 0;
	if (list && !list[0])
		return 0; /* an empty RPATH or RUNPATH names no folder at all */
	for (const char *s = list; s;) {
		const char *end = strchr(s, ':');
		size_t length = end ? (size_t)(end - s) : strlen(s);
		bool dropped = false;
		char *expanded = expand_element(s, length, names, values, &dropped);
		if (expanded && length && !expanded[0]) {
			/* Tokens that expand to nothing leave no element (glibc drops it), unlike an
			   element written empty. */
			free(expanded);
			expanded = NULL;
			dropped = true;
		}
		if (!expanded && !dropped) {
			for (size_t i = 0; i < count && i < capacity; i++)
				free(elements[i]);
			return -1;
		}
		if (expanded) {
			if (count < capacity)
				elements[count] = expanded;
			else
				free(expanded);
			count++;
		}
		s = end ? end + 1 : NULL;
	}
	return (int)count;
}

bool dst_uses_token(const char *list, const char *name)
{
	for (const char *s = list ? strchr(list, '$') : NULL; s; s = strchr(s + 1, '$'))
		if (token_length(s + 1, strlen(s + 1), name))
			return true;
	return false;
}

bool dst_origin_of(const char *path, char *folder, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t length = slash ? (size_t)(slash - path) : 0;
	size_t used = 0;
	if (path[0] != '/') {
		if (!getcwd(folder, size))
			return false;
		used = strlen(folder);
		if (length && used + 1 < size && !(used == 1 && folder[0] == '/'))
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
