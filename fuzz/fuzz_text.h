/* The fuzzers' input as text: parsers of strings take NUL-terminated copies, several at once cut
   from one input at its NUL bytes, each in a malloc'd block of its own exact size, so that a read
   one byte past any of them is AddressSanitizer's to see. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define FUZZ_MAX_PARTS 16

struct fuzz_parts {
	size_t count;
	char *part[FUZZ_MAX_PARTS]; /* NULL past count */
	size_t length[FUZZ_MAX_PARTS];
};

/* Cuts data at NUL bytes into at most max parts (the last takes the rest, NULs and all, as its
   length says); frees them with fuzz_parts_free. */
void fuzz_parts_of(const uint8_t *data, size_t size, size_t max, struct fuzz_parts *parts);
void fuzz_parts_free(struct fuzz_parts *parts);

/* A copy of exactly size bytes, not terminated (for parsers given a length). */
char *fuzz_bytes(const uint8_t *data, size_t size);

/* The code point of the valid UTF-8 character at s (at most length bytes; RFC 3629), its length in
   *used; -1 for an invalid one. */
long fuzz_utf8_decode(const char *s, size_t length, size_t *used);

/* The length of the valid UTF-8 character at s (at most length bytes), or 0 for an invalid byte. */
size_t fuzz_utf8_char_length(const char *s, size_t length);

/* True when the length bytes at s are valid UTF-8 (RFC 3629: no overlongs, surrogates or code
   points past U+10FFFF). */
int fuzz_valid_utf8(const char *s, size_t length);
