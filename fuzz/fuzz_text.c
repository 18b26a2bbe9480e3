#include "fuzz_text.h"

#include <stdlib.h>
#include <string.h>

static char *copy(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fuzz_parts_of(const uint8_t *data, size_t size, size_t max, struct fuzz_parts *parts)
{
	memset(parts, 0, sizeof(*parts));
	if (max > FUZZ_MAX_PARTS)
		max = FUZZ_MAX_PARTS;
	size_t start = 0;
	while (parts->count < max) {
		const uint8_t *nul = parts->count + 1 < max ? memchr(data + start, '\0', size - start) : NULL;
		size_t end = nul ? (size_t)(nul - data) : size;
		parts->length[parts->count] = end - start;
		parts->part[parts->count++] = copy(data + start, end - start);
		if (!nul)
			break;
		start = end + 1;
	}
}

void fuzz_parts_free(struct fuzz_parts *parts)
{
	for (size_t i = 0; i < parts->count; i++)
		free(parts->part[i]);
	memset(parts, 0, sizeof(*parts));
}

char *fuzz_bytes(const uint8_t *data, size_t size)
{
	char *s = malloc(size ? size : 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	return s;
}

long fuzz_utf8_decode(const char *text, size_t length, size_t *used)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n;
	unsigned long min, code;
	if (length == 0)
		return -1;
	unsigned c = s[0];
	if (c < 0x80) {
		*used = 1;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 1, min = 0x80, code = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, min = 0x800, code = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, min = 0x10000, code = c & 0x07;
	else
		return -1;
	if (length <= n)
		return -1;
	for (size_t i = 1; i <= n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		code = code << 6 | (s[i] & 0x3f);
	}
	if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
		return -1;
	*used = n + 1;
	return (long)code;
}

size_t fuzz_utf8_char_length(const char *text, size_t length)
{
	size_t used;
	return fuzz_utf8_decode(text, length, &used) < 0 ? 0 : used;
}

int fuzz_valid_utf8(const char *text, size_t length)
{
	for (size_t i = 0; i < length;) {
		size_t k = fuzz_utf8_char_length(text + i, length - i);
		if (k == 0)
			return 0;
		i += k;
	}
	return 1;
}
