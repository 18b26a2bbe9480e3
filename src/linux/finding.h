/* What a walk of the places (search.h) found for one name: the loader's copy, the runtime's first
   copy it may load, and the places tried. Each candidate is read once, and the one taken keeps
   what the read found (its header, SONAME, DT_NEEDED, whether the loader can map it whole), so
   nothing is read again on the way down. A miss and a mixed origin are reported from findings. */
#pragma once

#include "dynamic.h"
#include "log.h"
#include "plan.h"
#include "policy.h"
#include "search.h"

#include <limits.h>
#include <stdbool.h>

#define FINDING_LOOKED_MAX 256

struct finding {
	enum policy_loader_answer loader;
	char loader_path[PATH_MAX]; /* the loader's copy, when it is POLICY_LOADER_FINDS */
	bool found;                 /* a copy in the runtime's places */
	char path[PATH_MAX];
	enum search_step step;
	struct dynamic_file *file;  /* that copy as read */
	/* For a DT_NEEDED name: the SONAME a copy must have. The loader takes a loaded object for a
	   DT_NEEDED name by its SONAME (or a name it was loaded under, which for the runtime's loads
	   is a path). A copy without it would be loaded for nothing. */
	const char *soname;
	/* The places tried, in order, each once, when a miss may be reported; NULL otherwise. */
	struct log_looked *looked;
	size_t looked_count;
};

/* A finding before its walk. */
void finding_init(struct finding *finding, const char *soname);
void finding_free(struct finding *finding);

/* Walks request's places into finding. It stops at the loader's copy or at the runtime's first
   copy it may load. */
void finding_walk(struct finding *finding, const struct search_request *request);

/* The asker's own copy: in its folder or its wheel siblings (the coherent policy's places). True
   when one was found. */
bool finding_walk_own(struct finding *own, const char *name, const char *folder);

/* One name's question in progress: the policy's facts and the findings they come from. On the
   heap, since two findings are two paths each. */
struct findings {
	struct policy_question question;
	const struct plan_request *request;
	const char *asker_folder; /* the folder whose copy is the asker's own, and the first place */
	bool heard;               /* a miss would be shown or recorded */
	struct finding loader;    /* the loader's search and, with places, the runtime's after it */
	struct finding own;       /* the asker's folder and its wheel siblings */
	/* The plan's walk of the loader's search for the name: it fills walk (its loader part) and
	   calls finding_walk. False when the search cannot be known. */
	bool (*walk_loader)(struct findings *findings, struct search_request *walk);
	void *plan;
};

/* Starts the findings of request. soname: a DT_NEEDED name, which a copy must have as its SONAME. */
void findings_init(struct findings *findings, const struct plan_request *request, const char *soname);
/* Asks the policy until it has the facts it needs and learns them, then settles what comes of the
   answer. A walk is made only when a copy may come of it, or a miss somebody listens for. A miss
   is reported, with the places the walk tried. The finding whose copy the answer takes (its read
   kept, for the copy's own needs), or NULL. */
const struct finding *findings_settle(struct findings *findings, struct policy_answer *answer);
/* Fills load with the copy taken, as answer decided. False when the name does not fit a load. */
bool findings_fill_load(const struct findings *findings, const struct finding *taken, const struct policy_answer *answer,
			struct plan_load *load);
void findings_free(struct findings *findings);

/* Where the runtime cannot tell whether the loader finds a name, it leaves the name to the loader.
   At debug level it says so, since a failure that follows is then not the runtime's choice. */
void finding_report_unknown(const char *name, const char *asker, const char *why);
