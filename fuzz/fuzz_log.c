/* libFuzzer target: the JSON escaper, the terminal escaper and the event writer (src/log.c). The
   input: a byte that sizes the escapers' buffers, a byte that picks the kind of event, then its text fields and the places of
   a miss's "looked", cut at NUL bytes. The event goes to a log file of the fuzzer's own and comes
   back as one line. Promises: the escaper stays in its buffer, terminates, returns the length it
   wrote, writes valid UTF-8 and reads back as a prefix of its input with each byte of an invalid
   sequence as U+FFFD, never half a character; the terminal escaper stays in its buffer, writes
   valid UTF-8 with no control character (C0, DEL, C1) and reads back as a prefix of its input
   with each control and each byte that starts no character as \xNN, cut only where the next
   piece would not fit; every line is one valid UTF-8 JSON object no longer
   than LOG_LINE_MAX, of the event's kind; a field given reads back as its bytes when it is valid
   UTF-8, or else has a FIELD_hex twin whose hex is its bytes, unless the line lists it in
   "truncated". */
#define _GNU_SOURCE
#include "fuzz_text.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TEXT_FIELDS 8
static const char *const keys[TEXT_FIELDS] = { "name", "path", "folder", "caller", "family", "policy", "reason", "own" };

/* ---- a small JSON reader ---------------------------------------------------------------------- */

struct reader {
	const char *s, *end;
};

static bool at(struct reader *r, char c)
{
	if (r->s < r->end && *r->s == c) {
		r->s++;
		return true;
	}
	return false;
}

static int hex_digit(char h) { return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1; }

/* A string: its decoded bytes into out (size bytes; NULL to skip), their count in *length. */
static bool read_string(struct reader *r, char *out, size_t size, size_t *length)
{
	size_t n = 0;
	if (!at(r, '"'))
		return false;
	while (r->s < r->end && *r->s != '"') {
		unsigned char c = (unsigned char)*r->s++;
		char bytes[4];
		size_t k = 1;
		if (c < 0x20)
			return false;
		bytes[0] = (char)c;
		if (c == '\\') {
			if (r->s >= r->end)
				return false;
			char e = *r->s++;
			if (e == 'u') {
				unsigned value = 0;
				for (int i = 0; i < 4; i++) {
					int d = r->s < r->end ? hex_digit(*r->s++) : -1;
					if (d < 0)
						return false;
					value = value * 16 + (unsigned)d;
				}
				if (value >= 0x80)
					return false; /* the writer escapes control characters only */
				bytes[0] = (char)value;
			} else if (e == '"' || e == '\\' || e == '/') {
				bytes[0] = e;
			} else if (e == 'n' || e == 't' || e == 'r' || e == 'b' || e == 'f') {
				bytes[0] = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : '\f';
			} else {
				return false;
			}
		}
		for (size_t i = 0; i < k; i++, n++)
			if (out && n < size)
				out[n] = bytes[i];
	}
	if (length)
		*length = n;
	return at(r, '"');
}

static bool read_value(struct reader *r, int depth);

static bool read_members(struct reader *r, int depth, char close, bool keyed)
{
	if (at(r, close))
		return true;
	do {
		if (keyed && (!read_string(r, NULL, 0, NULL) || !at(r, ':')))
			return false;
		if (!read_value(r, depth + 1))
			return false;
	} while (at(r, ','));
	return at(r, close);
}

static bool read_value(struct reader *r, int depth)
{
	if (depth > 8 || r->s >= r->end)
		return false;
	if (*r->s == '"')
		return read_string(r, NULL, 0, NULL);
	if (at(r, '{'))
		return read_members(r, depth, '}', true);
	if (at(r, '['))
		return read_members(r, depth, ']', false);
	if (r->end - r->s >= 4 && memcmp(r->s, "null", 4) == 0) {
		r->s += 4;
		return true;
	}
	const char *start = r->s;
	while (r->s < r->end && ((*r->s >= '0' && *r->s <= '9') || *r->s == '.' || *r->s == '-'))
		r->s++;
	return r->s > start;
}

/* The decoded string value of top-level key in the object (malloc'd), or NULL (absent or null). */
static char *member(const char *line, size_t length, const char *key, size_t *value_length)
{
	struct reader r = { line, line + length };
	if (!at(&r, '{'))
		return NULL;
	while (r.s < r.end && *r.s != '}') {
		char name[32];
		size_t name_length;
		if (!read_string(&r, name, sizeof(name), &name_length) || !at(&r, ':'))
			return NULL;
		if (name_length == strlen(key) && memcmp(name, key, name_length) == 0 && r.s < r.end && *r.s == '"') {
			struct reader copy = r;
			size_t n;
			read_string(&copy, NULL, 0, &n);
			char *value = malloc(n + 1);
			read_string(&r, value, n, &n);
			value[n] = '\0';
			*value_length = n;
			return value;
		}
		if (!read_value(&r, 1))
			return NULL;
		at(&r, ',');
	}
	return NULL;
}

/* ---- the expected text of a value: each byte of an invalid sequence as U+FFFD ---------------- */

static char *with_replacements(const char *s, size_t *length)
{
	size_t n = strlen(s), used = 0;
	char *out = malloc(3 * n + 1);
	for (size_t i = 0; i < n;) {
		size_t k = fuzz_utf8_char_length(s + i, n - i);
		if (k) {
			memcpy(out + used, s + i, k);
			used += k, i += k;
		} else {
			memcpy(out + used, "\xef\xbf\xbd", 3);
			used += 3, i++;
		}
	}
	out[used] = '\0';
	*length = used;
	return out;
}

/* What escape wrote of s into room bytes, checked to stay there, end in a NUL, be as long as it
   says and be UTF-8; NULL for room 0 (which must get nothing). */
static char *escaped(size_t (*escape)(char *out, size_t size, const char *s), const char *s, size_t room, size_t *length)
{
	char *out = malloc(room ? room : 1);
	size_t n = escape(out, room, s);
	if (room == 0) {
		if (n != 0)
			abort();
		free(out);
		return NULL;
	}
	if (n >= room || out[n] != '\0' || strlen(out) != n || !log_is_utf8(out))
		abort();
	*length = n;
	return out;
}

static void check_escape(const char *s, size_t room)
{
	size_t n;
	char *out = escaped(log_json_escape, s, room, &n);
	if (!out)
		return;
	char *quoted = malloc(n + 2);
	quoted[0] = '"';
	memcpy(quoted + 1, out, n);
	quoted[n + 1] = '"';
	struct reader r = { quoted, quoted + n + 2 };
	size_t expected_length, length;
	char *expected = with_replacements(s, &expected_length);
	char *decoded = malloc(expected_length + 1);
	if (!read_string(&r, decoded, expected_length, &length) || r.s != r.end || length > expected_length ||
	    memcmp(decoded, expected, length) != 0 || (length < expected_length && fuzz_utf8_char_length(expected + length, expected_length - length) == 0))
		abort();
	free(decoded);
	free(expected);
	free(quoted);
	free(out);
}

static void check_text_escape(const char *s, size_t room)
{
	size_t n, i = 0;
	char *out = escaped(log_text_escape, s, room, &n);
	if (!out)
		return;
	for (size_t j = 0; j < n;) {
		unsigned char c = (unsigned char)out[j];
		if (c < 0x20 || c == 0x7f || (c == 0xc2 && (unsigned char)out[j + 1] < 0xa0))
			abort();
		if (c == '\\' && out[j + 1] == 'x' && s[i] != '\\') {
			if (j + 4 > n || hex_digit(out[j + 2]) < 0 || hex_digit(out[j + 3]) < 0 ||
			    hex_digit(out[j + 2]) * 16 + hex_digit(out[j + 3]) != (unsigned char)s[i])
				abort();
			j += 4;
		} else if (out[j++] != s[i])
			abort();
		i++;
	}
	/* A piece is at most 8 bytes (a C1 control's two, shown): what is left out would not fit. */
	if (s[i] && n + 8 < room - 1)
		abort();
	free(out);
}

/* ---- the target ------------------------------------------------------------------------------ */

static char log_path[256];

static void open_log(void)
{
	if (log_path[0])
		return;
	snprintf(log_path, sizeof(log_path), "%s/fuzz-event-log-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	int fd = mkstemp(log_path);
	if (fd < 0 || !log_open_event_file(log_path))
		abort();
	close(fd);
}

static bool listed_as_cut(const char *line, size_t length, const char *key)
{
	char quoted[40];
	snprintf(quoted, sizeof(quoted), "\"%s\"", key);
	const char *truncated = memmem(line, length, "\"truncated\":[", 13);
	if (!truncated)
		return false;
	const char *end = memchr(truncated, ']', (size_t)(line + length - truncated));
	return end && memmem(truncated, (size_t)(end - truncated), quoted, strlen(quoted));
}

static void check_field(const char *line, size_t length, const char *key, const char *value)
{
	size_t n;
	char *read = member(line, length, key, &n);
	if (!read)
		return; /* not a field of this kind */
	if (!listed_as_cut(line, length, key)) {
		size_t expected_length;
		char *expected = with_replacements(value, &expected_length);
		if (n != expected_length || memcmp(read, expected, n) != 0)
			abort();
		free(expected);
	}
	free(read);
	if (log_is_utf8(value))
		return;
	char hex_key[40];
	snprintf(hex_key, sizeof(hex_key), "%s_hex", key);
	char *hex = member(line, length, hex_key, &n);
	if (!hex)
		abort(); /* text that is not UTF-8 has its exact bytes beside it */
	if (!listed_as_cut(line, length, hex_key)) {
		size_t bytes = strlen(value);
		if (n != 2 * bytes)
			abort();
		for (size_t i = 0; i < bytes; i++)
			if (hex_digit(hex[2 * i]) * 16 + hex_digit(hex[2 * i + 1]) != (unsigned char)value[i])
				abort();
	}
	free(hex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	open_log();
	size_t kinds = 0;
	while (log_event_kind(kinds))
		kinds++;
	const char *kind = log_event_kind(data[1] % kinds);
	struct fuzz_parts parts;
	fuzz_parts_of(data + 2, size - 2, FUZZ_MAX_PARTS, &parts);
	for (size_t i = 0; i < parts.count; i++) {
		check_escape(parts.part[i], data[0]);
		check_text_escape(parts.part[i], data[0]);
	}
	const char *field[TEXT_FIELDS] = { 0 };
	for (size_t i = 0; i < TEXT_FIELDS && i < parts.count; i++)
		field[i] = parts.part[i];
	struct log_looked looked[4];
	size_t looked_count = 0;
	for (size_t i = TEXT_FIELDS; i + 1 < parts.count && looked_count < 4; i += 2)
		looked[looked_count++] = (struct log_looked){ parts.part[i], parts.part[i + 1] };
	struct log_summary summary = { 1, 2, 3, 4, 5 };
	if (truncate(log_path, 0) != 0)
		abort();
	log_event(&(struct log_event){ .event = kind, .name = field[0], .path = field[1], .folder = field[2], .caller = field[3],
				       .family = field[4], .policy = field[5], .reason = field[6], .own = field[7],
				       .looked = looked, .looked_count = looked_count, .summary = &summary });
	static char line[LOG_LINE_MAX + 2];
	FILE *f = fopen(log_path, "rb");
	size_t got = f ? fread(line, 1, sizeof(line), f) : 0;
	if (f)
		fclose(f);
	if (got == 0) /* "not written whole": allowed only when it could not fit */
		goto out;
	if (got > LOG_LINE_MAX || line[got - 1] != '\n' || memchr(line, '\n', got - 1) || !fuzz_valid_utf8(line, got))
		abort();
	struct reader r = { line, line + got - 1 };
	size_t n;
	char *event = member(line, got - 1, "event", &n);
	if (!read_value(&r, 0) || r.s != r.end || !event || strcmp(event, kind) != 0)
		abort();
	free(event);
	for (size_t i = 0; i < TEXT_FIELDS; i++)
		if (field[i])
			check_field(line, got - 1, keys[i], field[i]);
out:
	fuzz_parts_free(&parts);
	return 0;
}
