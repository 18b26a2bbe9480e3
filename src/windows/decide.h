/* One NVIDIA DLL name asked for on an asker's behalf, decided on Windows: the policy function
   (policy.h) with the facts asked here (whether a module of that name is loaded, where the loader's
   search path finds it, the asker's own copy, the runtime's first copy and the places tried), and
   what comes of the answer said once through the outcome call (report.h). Loading a copy is the
   caller's: the hooks load one for a bare name, the import walk (imports.c) one for an import.
   Not under the loader lock: it reads files and logs. */
#pragma once

#include "policy.h"
#include "report.h"

#include <stdbool.h>
#include <windows.h>

#define DECIDE_PATH_MAX 4352 /* a path's UTF-16 characters; its UTF-8 bytes fit in three times that */

struct decide_request {
	const char *name;            /* the DLL name (NVIDIA's names are ASCII) */
	const wchar_t *wide_name;
	int family;
	enum policy_request request; /* POLICY_DLOPEN: LoadLibrary by bare name; POLICY_NEEDED: an import */
	const char *asker;           /* the module or file that asked (the events' caller); NULL: unknown */
	const char *asker_words;     /* the log's words for the asker, when not asker ("the application") */
	const char *asker_folder;    /* the asker's folder when it is an NVIDIA DLL, else NULL */
	const wchar_t *search_path;  /* the loader's search path for name (loader_path.h); NULL: unknown */
	/* The load that failed, when the loader was asked already: it went looking and missed (or found
	   a file it could not use). 0 when the loader has not been asked. */
	DWORD loader_error;
};

struct decision {
	const struct decide_request *request;
	struct policy_question question;
	struct policy_answer answer;
	enum report_miss_weight weight;            /* how loud a miss of it is (report_miss_weight) */
	bool loader_found;                        /* the loader's search path holds a DLL of that name */
	wchar_t loader_file[DECIDE_PATH_MAX];      /* and that file */
	wchar_t copy[DECIDE_PATH_MAX];             /* LOAD_OWN, LOAD_FALLBACK: the copy to load */
	char copy_utf8[DECIDE_PATH_MAX * 3];
	struct log_looked *looked;                 /* the places tried, for a miss; NULL when none is wanted */
	size_t looked_count;
};

/* Decides for request, asking each fact the policy asks for, into a decision (malloc'd; free it
   with decide_free). NULL when memory is short: the caller then leaves the call to the loader. */
struct decision *decide(const struct decide_request *request);
void decide_free(struct decision *decision);

/* What came of it, said once (the log line, the event, the report's line): the copy loaded, or a
   miss with the places tried and the loader's error. A copy that did not load is said at warn. */
void decide_report_loaded(const struct decision *decision);
void decide_report_not_loaded(const struct decision *decision, DWORD error);
void decide_report_miss(const struct decision *decision);
/* USE_LOADED with check_mixed_origin: the loaded module's file against the asker's own copy, once
   for each name in a process (report_mixed_origin_first). */
void decide_check_mixed_origin(const struct decision *decision, HMODULE loaded);
