/* The human log (stderr) and the JSON-lines event log (NVINTERPOSE_LOG_FILE). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

struct log_event {
	const char *event;  /* register, redirect, attach-load, ... */
	const char *name;   /* the name asked for, or the object's name */
	const char *path;   /* the file or folder the event is about */
	const char *caller; /* the object that asked */
	const char *family;
	const char *policy; /* the policy the event was decided under */
	const char *reason;
};

void log_set_level(enum log_level level);
bool log_enabled(enum log_level level);
#ifdef _WIN32
#define LOG_FORMAT gnu_printf /* the C99 printf of __USE_MINGW_ANSI_STDIO, not msvcrt's */
#else
#define LOG_FORMAT printf
#endif
void log_message(enum log_level level, const char *format, ...) __attribute__((format(LOG_FORMAT, 2, 3)));

/* Opens the event log for appending; false (and an error message) when it cannot. */
bool log_open_event_file(const char *path);
/* True when events are written somewhere (an event log, or the human log at debug): what an event
   costs to describe is then worth paying. */
bool log_events_enabled(void);
/* One event, one line, one write(2). Does nothing without an event log. Safe from any thread;
   allocation-free, so safe where the loader holds its locks. */
void log_event(const struct log_event *event);

/* Writes s as the inside of a JSON string into out (size bytes); returns the length written. */
size_t log_json_escape(char *out, size_t size, const char *s);
