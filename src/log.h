/* The human log (stderr) and the JSON-lines event log (NVINTERPOSE_LOG_FILE). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* One place a miss was looked for: a folder and the step it belongs to (the loader's "rpath",
   "ld_library_path", "runpath", "listed", "default"; "cache" with no folder, the loader's
   ld.so.cache, whose entries the runtime cannot see; the runtime's "caller_folder",
   "registered_origin", "wheel_sibling", "nvinterpose_path"). */
struct log_looked {
	const char *folder;
	const char *step;
};

/* The figures of a "summary" event. */
struct log_summary {
	long long report_pid; /* the process the exit report is printed for */
	long long origins, redirects, misses, mixed_origins;
};

/* One event. Which fields a line carries is fixed by its kind (the table in log.c, which
   docs/event-log.md and nvinterpose(7) show): a field of the kind that is NULL here is written as null. */
struct log_event {
	const char *event;  /* register, redirect, coherent, needed, attach-load, mixed-origin, miss, ... */
	const char *name;   /* the name asked for, or the library's own name */
	const char *path;   /* a file: the one loaded, or the one already loaded */
	const char *folder; /* a folder: the one registered */
	const char *caller; /* the object that asked */
	const char *family;
	const char *policy; /* the policy the event was decided under */
	const char *reason;
	const char *own;    /* mixed-origin: the copy the caller's own installation holds */
	const struct log_looked *looked; /* miss: every place tried, in order */
	size_t looked_count;
	const struct log_summary *summary;
};

/* The longest event line, its newline included; longer ones are cut (log.c says how). */
#define LOG_LINE_MAX 8192

void log_set_level(enum log_level level);
bool log_enabled(enum log_level level);
#ifdef _WIN32
#define LOG_FORMAT gnu_printf /* the C99 printf of __USE_MINGW_ANSI_STDIO, not msvcrt's */
#else
#define LOG_FORMAT printf
#endif
void log_message(enum log_level level, const char *format, ...) __attribute__((format(LOG_FORMAT, 2, 3)));
/* A warning said at every level, the default (error) included: a failure about to happen that the
   user can act on only knowing of it (a required library nobody has, a mixed origin). */
void log_warning_by_default(const char *format, ...) __attribute__((format(LOG_FORMAT, 1, 2)));
/* A line of the exit report: on stderr whatever the level. */
void log_report(const char *format, ...) __attribute__((format(LOG_FORMAT, 1, 2)));

/* Sets the event log: path made absolute now (a later change of working folder does not move
   it), checked and created when missing as every event will open it. False (and an error message)
   when it cannot be the event log; there is then none. */
bool log_open_event_file(const char *path);
/* True when there is an event log. */
bool log_events_enabled(void);
/* One event, one line: the file is opened, appended to and closed for each event (platform.h),
   so no descriptor of the runtime's stays in the process. Does nothing without an event log; an
   event of a kind the table does not hold is not written. Safe from any thread; allocation-free,
   so safe where the loader holds its locks. */
void log_event(const struct log_event *event);

/* The kinds of event the log writes (i from 0; NULL past the last). */
const char *log_event_kind(size_t i);
/* Field j of kind i, after time, pid and event, in the order its lines hold them (j from 0; NULL
   past the last). The marks of a cut ("truncated", "looked_omitted") and FIELD_hex twins come only
   where they apply and are not listed. */
const char *log_event_field(size_t i, size_t j);

/* Writes s as the inside of a JSON string into out (size bytes): control characters escaped,
   valid UTF-8 kept, every byte of an invalid sequence replaced by U+FFFD. Stops before a character
   that would not fit, never inside one. Returns the length written. */
size_t log_json_escape(char *out, size_t size, const char *s);
/* Writes s as text for a terminal into out (size bytes, NUL-terminated): valid UTF-8 kept, every
   control character (C0, DEL, C1) and every byte that starts no character shown as \xNN (a
   backslash otherwise stays as it is). Stops before a character that would not fit. Returns the
   length written. Every message on stderr goes through it. */
size_t log_text_escape(char *out, size_t size, const char *s);
/* True when s is valid UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF). */
bool log_is_utf8(const char *s);
