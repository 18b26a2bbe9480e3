/* Logging without allocation: every line is formatted on the stack and leaves in one write, so
   lines from threads and processes sharing a file never interleave and the loader's locks may be
   held around it.

   An event line is one JSON object whose fields are fixed by its kind (the table below, which
   docs/event-log.md and nvinterpose(7) show, held to it by a test): every field of the kind is there, null when it has no value, or the line is not
   written. Text is valid UTF-8 whatever the bytes were: an invalid byte becomes U+FFFD, and the
   field then has a twin, FIELD_hex, with its exact bytes. A line longer than LOG_LINE_MAX has its
   text cut, each value to the same largest length that lets the line fit (a short value stays
   whole), on a character boundary, and lists the fields it cut in "truncated"; places of a miss's
   "looked" that leave no room are dropped from its end and counted in "looked_omitted". */
#include "log.h"

#include "platform.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static _Atomic int threshold = LOG_ERROR;
static _Atomic bool event_log_on;
static char event_path[4352]; /* set once, before event_log_on */

static const char *const level_words[] = { "error", "warning", "info", "debug" };

void log_set_level(enum log_level level) { atomic_store(&threshold, level); }

bool log_enabled(enum log_level level) { return (int)level <= atomic_load_explicit(&threshold, memory_order_relaxed); }

bool log_events_enabled(void) { return atomic_load_explicit(&event_log_on, memory_order_acquire); }


/* Every message leaves through here, its values already in it: the whole text is escaped once
   (log_text_escape), so no value (a folder's name, a setting) can start a line of its own or reach
   the terminal as an escape sequence, whichever call site printed it. */
static void write_line(const char *prefix, const char *format, va_list args)
{
	int saved_errno = errno;
	char text[1024], line[1024];
	if (vsnprintf(text, sizeof(text), format, args) < 0)
		text[0] = '\0';
	int n = snprintf(line, sizeof(line), "nvinterpose: %s", prefix);
	size_t length = (size_t)n + log_text_escape(line + n, sizeof(line) - (size_t)n - 1, text);
	line[length++] = '\n';
	platform_write_stderr(line, length);
	errno = saved_errno;
}

void log_message(enum log_level level, const char *format, ...)
{
	if (!log_enabled(level))
		return;
	char prefix[16];
	snprintf(prefix, sizeof(prefix), "%s: ", level_words[level]);
	va_list args;
	va_start(args, format);
	write_line(prefix, format, args);
	va_end(args);
}

void log_warning_by_default(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	write_line("warning: ", format, args);
	va_end(args);
}

void log_report(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	write_line("report: ", format, args);
	va_end(args);
}

static const char *open_error(int error)
{
	switch (error) {
	case EINVAL: return "not a regular file";
	case EXDEV: return "a file of the kernel's (procfs, sysfs, cgroupfs, debugfs and the like), not a file of data";
	case ELOOP:
		return platform_is_privileged()
			       ? "reached through a symbolic link, which a privileged process (root, or one that holds "
				 "CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH or CAP_FOWNER) never follows to its event log"
			       : "a symbolic link (the event log is never reached through one)";
	case EPERM: return "owned by another user (it must belong to the effective user or root)";
	case EMLINK: return "it has other names (hard links)";
	default: return strerror(error);
	}
}

bool log_open_event_file(const char *path)
{
	char absolute[sizeof(event_path)];
	int error = platform_absolute_path(path, absolute, sizeof(absolute)) ? platform_append_line(absolute, NULL, 0) : -errno;
	if (error < 0) {
		log_message(LOG_ERROR, "NVINTERPOSE_LOG_FILE='%s' cannot be opened for appending: %s; no event log", path,
			    open_error(-error));
		atomic_store(&event_log_on, false);
		return false;
	}
	atomic_store(&event_log_on, false);
	strcpy(event_path, absolute);
	atomic_store_explicit(&event_log_on, true, memory_order_release);
	return true;
}

/* ---- UTF-8 and JSON strings ------------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when the byte there starts none. */
static size_t utf8_length(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	unsigned char low = 0x80, high = 0xbf; /* the range of the second byte */
	size_t length;
	if (c >= 0xc2 && c <= 0xdf)
		length = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		length = 3;
		low = c == 0xe0 ? 0xa0 : 0x80; /* no overlong form */
		high = c == 0xed ? 0x9f : 0xbf; /* no surrogate */
	} else if (c >= 0xf0 && c <= 0xf4) {
		length = 4;
		low = c == 0xf0 ? 0x90 : 0x80;
		high = c == 0xf4 ? 0x8f : 0xbf; /* nothing past U+10FFFF */
	} else
		return 0;
	if (s[1] < low || s[1] > high)
		return 0;
	for (size_t i = 2; i < length; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return length;
}

bool log_is_utf8(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
		size_t n = utf8_length(p);
		if (!n)
			return false;
		p += n;
	}
	return true;
}

/* Writes (or, with out NULL, counts) the escaped s, at most limit bytes, whole characters only;
   *cut says whether some of s was left out. */
static size_t escape(char *out, size_t limit, const char *s, bool *cut)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	*cut = false;
	for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
		char piece[6];
		size_t k = 0, consumed = utf8_length(p);
		const char *from = piece;
		if (*p == '"' || *p == '\\') {
			piece[k++] = '\\';
			piece[k++] = (char)*p;
		} else if (*p < 0x20 || *p == 0x7f) {
			memcpy(piece, "\\u00", 4);
			piece[4] = hex[*p >> 4];
			piece[5] = hex[*p & 15];
			k = 6;
		} else if (consumed) {
			from = (const char *)p;
			k = consumed;
		} else {
			from = "\xef\xbf\xbd"; /* U+FFFD for a byte that starts no character */
			k = 3;
			consumed = 1;
		}
		if (consumed == 0)
			consumed = 1;
		if (n + k > limit) {
			*cut = true;
			break;
		}
		if (out)
			memcpy(out + n, from, k);
		n += k;
		p += consumed;
	}
	return n;
}

size_t log_json_escape(char *out, size_t size, const char *s)
{
	bool cut;
	if (!size)
		return 0;
	size_t n = escape(out, size - 1, s, &cut);
	out[n] = '\0';
	return n;
}

size_t log_text_escape(char *out, size_t size, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	if (!size)
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
		size_t length = utf8_length(p);
		/* C0 and C1 controls and DEL (a C1 control is two bytes in UTF-8, c2 80 to c2 9f); a
		   byte that starts no character is shown too, as a terminal of another encoding could
		   read it as a control. */
		bool shown = *p < 0x20 || *p == 0x7f || length == 0 || (*p == 0xc2 && p[1] < 0xa0);
		size_t k = shown ? 4 * (length ? length : 1) : length;
		if (n + k > size - 1)
			break;
		for (size_t i = 0; shown && i < k / 4; i++) {
			memcpy(out + n + 4 * i, "\\x", 2);
			out[n + 4 * i + 2] = hex[p[i] >> 4];
			out[n + 4 * i + 3] = hex[p[i] & 15];
		}
		if (!shown)
			memcpy(out + n, p, k);
		n += k;
		p += shown ? k / 4 : k;
	}
	out[n] = '\0';
	return n;
}

/* ---- event lines ----------------------------------------------------------------------------- */

enum field {
	FIELD_NAME,
	FIELD_PATH,
	FIELD_FOLDER,
	FIELD_OWN,
	FIELD_CALLER,
	FIELD_FAMILY,
	FIELD_POLICY,
	FIELD_REASON,
	FIELD_LOOKED,
	FIELD_SUMMARY, /* report_pid, origins, redirects, misses, mixed_origins */
	FIELD_EVENT,
	FIELD_COUNT
};
#define HEX_BIT(field) (1u << (16 + (field))) /* the cut of a field's hex twin */

#define WITH(field) (1u << FIELD_##field)
#define LOADED (WITH(NAME) | WITH(PATH) | WITH(CALLER) | WITH(FAMILY) | WITH(POLICY) | WITH(REASON))

/* The kinds of event and their fields, in the order a line holds them (the order of enum field).
   The one table: log_event_kind and log_event_field give it to the tests that hold the documents
   and the lines to it. */
static const struct event_kind {
	const char *event;
	unsigned fields;
} event_kinds[] = {
	{ "register", WITH(NAME) | WITH(PATH) | WITH(FOLDER) | WITH(CALLER) | WITH(FAMILY) | WITH(POLICY) | WITH(REASON) },
	{ "redirect", LOADED },
	{ "coherent", LOADED },
	{ "needed", LOADED },
	{ "attach-load", LOADED },
	{ "audit-answer", LOADED },
	{ "mixed-origin", LOADED | WITH(OWN) },
	{ "miss", WITH(NAME) | WITH(CALLER) | WITH(FAMILY) | WITH(POLICY) | WITH(REASON) | WITH(LOOKED) },
	{ "add-dll-directory", WITH(FOLDER) | WITH(FAMILY) | WITH(POLICY) | WITH(REASON) },
	{ "patch", WITH(NAME) | WITH(PATH) | WITH(POLICY) | WITH(REASON) },
	{ "patch-skipped", WITH(NAME) | WITH(PATH) | WITH(POLICY) | WITH(REASON) },
	{ "summary", WITH(POLICY) | WITH(REASON) | WITH(SUMMARY) },
};

static const char *const field_keys[] = {
	[FIELD_NAME] = "name",     [FIELD_PATH] = "path",     [FIELD_FOLDER] = "folder", [FIELD_OWN] = "own",
	[FIELD_CALLER] = "caller", [FIELD_FAMILY] = "family", [FIELD_POLICY] = "policy", [FIELD_REASON] = "reason",
	[FIELD_LOOKED] = "looked", [FIELD_EVENT] = "event",
};
/* FIELD_SUMMARY's numbers, in their order. */
static const char *const summary_keys[] = { "report_pid", "origins", "redirects", "misses", "mixed_origins" };
#define SUMMARY_KEYS (sizeof(summary_keys) / sizeof(summary_keys[0]))

static const struct event_kind *kind_of(const char *event)
{
	for (size_t i = 0; event && i < sizeof(event_kinds) / sizeof(event_kinds[0]); i++)
		if (strcmp(event_kinds[i].event, event) == 0)
			return &event_kinds[i];
	return NULL;
}

const char *log_event_kind(size_t i)
{
	return i < sizeof(event_kinds) / sizeof(event_kinds[0]) ? event_kinds[i].event : NULL;
}

const char *log_event_field(size_t i, size_t j)
{
	if (!log_event_kind(i))
		return NULL;
	for (enum field f = 0; f < FIELD_EVENT; f++) {
		if (!(event_kinds[i].fields & (1u << f)))
			continue;
		size_t keys = f == FIELD_SUMMARY ? SUMMARY_KEYS : 1;
		if (j < keys)
			return f == FIELD_SUMMARY ? summary_keys[j] : field_keys[f];
		j -= keys;
	}
	return NULL;
}

static const char *text_of(const struct log_event *event, enum field field)
{
	switch (field) {
	case FIELD_NAME: return event->name;
	case FIELD_PATH: return event->path;
	case FIELD_FOLDER: return event->folder;
	case FIELD_OWN: return event->own;
	case FIELD_CALLER: return event->caller;
	case FIELD_FAMILY: return event->family;
	case FIELD_POLICY: return event->policy;
	case FIELD_REASON: return event->reason;
	default: return NULL;
	}
}

/* A line being written, or (out NULL) only measured. Every text value is cut at cap bytes. */
struct line {
	char *out;
	size_t used, size; /* size bounds what is written, never what is measured */
	size_t cap;        /* the cut of every text value but the places of "looked", which are whole or left out */
	unsigned cut;      /* the fields cut: bit f, and HEX_BIT(f) for the hex twin of f */
	bool full;         /* the line went past size */
	const char *head;  /* {"time":...,"pid":..., taken once for every measure */
};

static void put(struct line *line, const char *text, size_t length)
{
	if (line->out && line->used + length <= line->size)
		memcpy(line->out + line->used, text, length);
	else if (line->out)
		line->full = true;
	line->used += length;
}

static void put_text(struct line *line, const char *text) { put(line, text, strlen(text)); }

static void put_number(struct line *line, const char *key, long long value)
{
	char text[64];
	int n = snprintf(text, sizeof(text), ",\"%s\":%lld", key, value);
	put(line, text, (size_t)n);
}

/* "value" (escaped and cut at the cap) or null; FIELD_hex after it when value is not UTF-8. A cut
   is recorded as the field's (a place of "looked": as "looked"'s). */
static void put_string(struct line *line, const char *key, const char *value, enum field field, bool first)
{
	static const char hex[] = "0123456789abcdef";
	put_text(line, first ? "\"" : ",\"");
	put_text(line, key);
	put_text(line, "\":");
	if (!value) {
		put_text(line, "null");
		return;
	}
	bool cut;
	put_text(line, "\"");
	size_t room = line->out && line->size > line->used ? line->size - line->used : 0;
	size_t cap = field == FIELD_LOOKED ? SIZE_MAX : line->cap;
	size_t n = escape(NULL, cap, value, &cut);
	if (line->out && n <= room)
		escape(line->out + line->used, cap, value, &cut);
	else if (line->out)
		line->full = true;
	line->used += n;
	if (cut)
		line->cut |= 1u << field;
	put_text(line, "\"");
	if (log_is_utf8(value))
		return;
	put_text(line, ",\"");
	put_text(line, key);
	put_text(line, "_hex\":\"");
	size_t length = strlen(value), fits = cap / 2 < length ? cap / 2 : length;
	for (size_t i = 0; i < fits; i++) {
		char pair[2] = { hex[(unsigned char)value[i] >> 4], hex[(unsigned char)value[i] & 15] };
		put(line, pair, 2);
	}
	if (fits < length)
		line->cut |= HEX_BIT(field);
	put_text(line, "\"");
}

/* The whole line for event, with kept places of its "looked". */
static void render(struct line *line, const struct log_event *event, const struct event_kind *kind, size_t kept)
{
	put_text(line, line->head);
	put_string(line, "event", event->event, FIELD_EVENT, true);
	for (enum field f = 0; f < FIELD_LOOKED; f++)
		if (kind->fields & (1u << f))
			put_string(line, field_keys[f], text_of(event, f), f, false);
	if (kind->fields & WITH(LOOKED)) {
		put_text(line, ",\"looked\":[");
		for (size_t i = 0; i < kept; i++) {
			const struct log_looked *place = &event->looked[i];
			put_text(line, i ? ",{" : "{");
			put_string(line, "folder", place->folder, FIELD_LOOKED, true);
			put_string(line, "step", place->step, FIELD_LOOKED, false);
			put_text(line, "}");
		}
		put_text(line, "]");
	}
	if (kind->fields & WITH(SUMMARY)) {
		const struct log_summary none = { 0 }, *s = event->summary ? event->summary : &none;
		const long long values[SUMMARY_KEYS] = { s->report_pid, s->origins, s->redirects, s->misses, s->mixed_origins };
		for (size_t i = 0; i < SUMMARY_KEYS; i++)
			put_number(line, summary_keys[i], values[i]);
	}
	size_t total = kind->fields & WITH(LOOKED) ? event->looked_count : 0;
	if (line->cut || kept < total) {
		put_text(line, ",\"truncated\":[");
		bool first = true;
		for (unsigned bit = 0; bit < 16 + FIELD_COUNT; bit++) {
			bool looked = bit == FIELD_LOOKED && kept < total;
			if ((bit >= FIELD_COUNT && bit < 16) || (!(line->cut & (1u << bit)) && !looked))
				continue;
			put_text(line, first ? "\"" : ",\"");
			put_text(line, field_keys[bit % 16]);
			put_text(line, bit >= 16 ? "_hex\"" : "\"");
			first = false;
		}
		put_text(line, "]");
		if (kept < total)
			put_number(line, "looked_omitted", (long long)(total - kept));
	}
	put_text(line, "}\n");
}

/* The line's length for a cap, measured. */
static size_t measure(const char *head, const struct log_event *event, const struct event_kind *kind, size_t kept,
		      size_t cap)
{
	struct line line = { .cap = cap, .head = head };
	render(&line, event, kind, kept);
	return line.used;
}

/* Formats the event into out (LOG_LINE_MAX bytes): its length, or 0 when it cannot be written whole. */
static size_t format_event(char *out, const struct log_event *event, const struct event_kind *kind)
{
	char head[96];
	long long seconds;
	long microseconds;
	platform_wall_clock(&seconds, &microseconds);
	snprintf(head, sizeof(head), "{\"time\":%lld.%06ld,\"pid\":%ld,", seconds, microseconds, platform_process_id());
	size_t kept = kind->fields & WITH(LOOKED) ? event->looked_count : 0;
	size_t cap = SIZE_MAX / 4;
	if (measure(head, event, kind, kept, cap) > LOG_LINE_MAX) {
		/* The text values first, with half the line when there are places to list: the largest
		   cap that fits (they may need less); then as many whole places as the rest holds. */
		size_t budget = kept ? LOG_LINE_MAX / 2 : LOG_LINE_MAX;
		if (measure(head, event, kind, 0, cap) > budget) {
			size_t low = 0, high = LOG_LINE_MAX;
			while (low < high) {
				size_t middle = (low + high + 1) / 2;
				if (measure(head, event, kind, 0, middle) <= budget)
					low = middle;
				else
					high = middle - 1;
			}
			cap = low;
		}
		while (kept > 0 && measure(head, event, kind, kept, cap) > LOG_LINE_MAX)
			kept--;
	}
	struct line line = { .out = out, .size = LOG_LINE_MAX, .cap = cap, .head = head };
	render(&line, event, kind, kept);
	return line.full ? 0 : line.used;
}

/* The debug line: the event's parts that have a value, and no empty ones. */
static void debug_line(const struct log_event *event)
{
	char text[900];
	int n = snprintf(text, sizeof(text), "event %s", event->event ? event->event : "?");
	const struct {
		const char *before, *value, *after;
	} parts[] = {
		{ " ", event->name, "" },	      { " -> ", event->path, "" },	   { " in ", event->folder, "" },
		{ " for ", event->caller, "" },	      { " (", event->reason, ")" },
	};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (parts[i].value && parts[i].value[0] && n >= 0 && (size_t)n < sizeof(text))
			n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%s%s", parts[i].before, parts[i].value, parts[i].after);
	log_message(LOG_DEBUG, "%s", text);
}

void log_event(const struct log_event *event)
{
	const struct event_kind *kind = kind_of(event->event);
	if (log_enabled(LOG_DEBUG))
		debug_line(event);
	if (!kind || !log_events_enabled())
		return;
	int saved_errno = errno;
	char line[LOG_LINE_MAX];
	size_t length = format_event(line, event, kind);
	if (length)
		platform_append_line(event_path, line, length);
	errno = saved_errno;
}
