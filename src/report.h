/* What the runtime did in this process. The exit report (NVINTERPOSE_REPORT) and the "summary"
   event count it, and every front reports each outcome through one call. */
#pragma once

#include "log.h"
#include "nvinterpose.h"
#include "policy.h"

#include <stdbool.h>
#include <stddef.h>

/* How loud a miss is, by what the asker needs the name for (the table's rows, libnames_need):
   REQUIRED, a warning said at every level, the default included, for what the asker cannot work
   without (a DT_NEEDED or an import, NVRTC's builtins); ASKED, a warning at warn, for a name asked
   for by an object the table does not say needs it (a program, a Python module); QUIET, at info, for
   an optional run-time dependent and a driver library. A probe for a more exact version of a file
   that is there is said at info whatever its weight. */
enum report_miss_weight { REPORT_MISS_REQUIRED, REPORT_MISS_ASKED, REPORT_MISS_QUIET };

/* What a request came to, said once. One call writes the log line, the event and the report's
   line, as origins_register does for a registration. Every front reports through it. */
enum outcome_kind {
	OUTCOME_LOADED,       /* the runtime loaded a copy, or the audit front gave the loader its path */
	OUTCOME_MIXED_ORIGIN, /* first loaded wins, and the asker's own installation holds another copy */
	OUTCOME_MISSED,       /* nobody could supply the name */
};

struct outcome {
	enum outcome_kind kind;
	enum policy_request request;        /* how it was asked for: names the event */
	const struct policy_answer *answer; /* LOADED and MISSED: the decision carried out */
	const char *name;                   /* the name asked for */
	int family;
	enum report_miss_weight weight;     /* MISSED: how loud it is said (report_miss_weight) */
	const char *caller;                 /* the object that asked, as events name it; NULL: unknown */
	const char *caller_words;           /* the log line's words for the caller, when not caller */
	const char *path;                   /* LOADED: the copy; MIXED_ORIGIN: the object loaded */
	const char *own;                    /* MIXED_ORIGIN: the copy the asker's installation holds, or NULL */
	bool already_loaded;                /* MIXED_ORIGIN: loaded before the asker asked (first loaded wins) */
	/* MISSED. A shorter version of the name in a folder looked in (cuDNN asks for
	   libcudnn_graph.so.9.19.0, then .so.9.19, then takes the .so.9 that is there). The caller is
	   then probably probing, and the miss is said at info. */
	const char *other;
	const struct log_looked *looked;    /* MISSED: every place tried, in order */
	size_t looked_count;
};

/* Reports one outcome. A miss is reported once for each (name, folder of the caller) in a
   process. A miss of a pair already reported is only counted, and the report's line says how many
   times it happened. Past REPORT_MISS_PAIRS pairs, misses are counted only, as one line says
   once. Not under the loader's locks: it logs. */
#define REPORT_MISS_PAIRS 256
void report_outcome(const struct outcome *outcome);

/* caller: the asker as events name it (a path), or NULL when not known. */
enum report_miss_weight report_miss_weight(enum policy_request request, const char *caller, int family, bool driver);
/* True when a miss of this weight would be shown or recorded. Only then is "looked" worth making. */
bool report_misses_wanted(enum report_miss_weight weight);
/* True when the asker of a load is read: by a line or event that names it, the report, or the check
   for mixed origins at registration. */
bool report_askers_wanted(void);
/* True when a miss of name asked by caller was reported before, or the table of pairs is full. It
   counts nothing. A walk need then not list its places, since the report will only count the miss. */
bool report_miss_known(const char *name, const char *caller);
/* True the first time it is asked for a soname in this process. A mixed origin is looked for once
   for each soname, so the walk it takes is not repeated on every load. Allocation-free; a forked
   child takes its lock anew. */
bool report_mixed_origin_first(const char *name);

/* A folder registered (origins_register calls it). */
void report_origin(const char *family, const char *folder, const char *name);

/* At exit: the "summary" event (when there is an event log and a report was asked for) and, in
   the process NVINTERPOSE_REPORT names (platform_reports_for), the report on stderr. A Linux
   destructor runs while the other threads still do, and waits for the report's lock
   (REPORT_EXIT_WAIT). Windows' DLL_PROCESS_DETACH at exit runs after they are gone, and one may
   have ended holding it, so it tries the lock once (REPORT_EXIT_TRY_LOCK); when that fails there is
   no report, and a line says so. */
enum report_exit { REPORT_EXIT_WAIT, REPORT_EXIT_TRY_LOCK };
void report_at_exit(enum report_exit how);
/* Names the front whose figures this copy of the runtime counts, for its report's first line
   ("process 4242 (audit front), ..."): a copy loaded as an audit library has data of its own. */
void report_name_front(const char *front);

/* nvi_report (include/nvinterpose.h): the figures, and up to capacity of the lines kept, in the
   order they were counted; returns how many lines are kept in all. The strings point into the
   store, which only grows until a fork. */
int report_list(struct nvi_report_totals *totals, struct nvi_report_entry *entries, size_t capacity);

/* A forked child starts its own figures. */
void report_init(void);
