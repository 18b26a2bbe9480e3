/* What the runtime did in this process, for the exit report (NVINTERPOSE_REPORT) and the
   "summary" event, and the one way every front reports a miss. */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <stddef.h>

/* An NVIDIA library the runtime looked at and nobody could supply. */
struct report_miss {
	const char *name;   /* the name asked for */
	const char *caller; /* the object that asked */
	int family;
	bool driver;        /* a driver library: said at info, not warn */
	/* A shorter version of name in a folder looked in (cuDNN asks for libcudnn_graph.so.9.19.0, then
	   .so.9.19, then takes the .so.9 that is there): the caller is probably probing; said at info. */
	const char *other;
	const char *reason; /* how it was asked for ("dlopen by bare name", "DT_NEEDED") */
	const struct log_looked *looked; /* every place tried, in order */
	size_t looked_count;
};

/* True when a miss of this kind would be shown or recorded: only then is "looked" worth making. */
bool report_misses_wanted(bool driver);
/* The warning (info for a driver library), the "miss" event and the report's line, once for each
   (name, folder of the caller) in a process: a miss of a pair already reported is only counted,
   and the report's line says how many times it happened. Past REPORT_MISS_PAIRS pairs, misses
   are counted only, as one line says once. */
#define REPORT_MISS_PAIRS 256
void report_miss(const struct report_miss *miss);
/* True when a miss of name asked by caller was reported before: it is then counted, as
   report_miss would, and the caller need not look again. */
bool report_miss_repeated(const char *name, const char *caller);

/* The other things the report counts (origins_register and the fronts call them). */
void report_origin(const char *family, const char *folder, const char *name);
void report_redirect(const char *event, const char *name, const char *path, const char *caller);
void report_mixed_origin(const char *name, const char *loaded, const char *own, const char *caller);

/* At exit: the "summary" event (when there is an event log and a report was asked for) and, in
   the process NVINTERPOSE_REPORT names, the report on stderr. */
void report_at_exit(void);
/* Names the front whose figures this copy of the runtime counts, for its report's first line
   ("process 4242 (audit front), ..."): a copy loaded as an audit library has data of its own. */
void report_name_front(const char *front);

/* A forked child starts its own figures. */
void report_init(void);
