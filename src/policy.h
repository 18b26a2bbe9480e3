/* The policy as one decision: the facts about one NVIDIA name asked for go in, what the runtime
   does goes out. Every way in asks it (the hooks' bare names and DT_NEEDED, the audit front, the
   attach scan, the Windows front) and so does the inspector's what-if, so the two cannot answer
   one question differently.

   It is pure. It reads no file, asks no loader and keeps no state. A fact that costs a walk or a
   loader call may come in unknown. The answer then asks for it, and the caller asks again once it
   knows. So a fact nobody needs is never paid for, and the rules stay here. */
#pragma once

#include "config.h"
#include "search.h"

#include <stdbool.h>

/* The runtime helps the DT_NEEDED of a library it loaded this deep (the library loaded by path is
   depth 0). Deeper chains are left to the loader. The inspector's what-if keeps the same bound. */
#define POLICY_NEEDED_MAX_DEPTH 8

enum policy_request {
	POLICY_DLOPEN, /* a bare name the real caller dlopens (the hooks; LoadLibrary on Windows) */
	POLICY_NEEDED, /* a DT_NEEDED of an NVIDIA library about to be loaded by path */
	POLICY_AUDIT,  /* the audit front's la_objsearch, asked from inside the loader */
	POLICY_ATTACH, /* a run-time dependent the attach scan loads for a library loaded before it */
};

enum policy_fact {
	POLICY_UNKNOWN, /* not asked yet */
	POLICY_NO,
	POLICY_YES,
};

enum policy_loader_answer {
	POLICY_LOADER_UNKNOWN,  /* not walked yet */
	POLICY_LOADER_MISSES,   /* no folder of its search holds a copy it takes */
	POLICY_LOADER_FINDS,    /* it takes the copy at a known path */
	POLICY_LOADER_MAY_FIND, /* a copy lies where the runtime cannot rank it (an hwcap subfolder) */
};

struct policy_question {
	enum policy policy;
	bool secure; /* secure-execution mode: the runtime only observes */
	bool driver; /* the family is a driver library, which is recorded and never supplied */
	enum policy_request request;
	/* First loaded wins. For a name, the loader holds an object of it. For the attach scan, an
	   object of the family is loaded. */
	bool loaded;
	bool asker_is_nvidia; /* the asker is an NVIDIA library, so it has an installation of its own */
	bool asker_nodeflib;  /* the asker is marked NODEFLIB: the loader skips ld.so.cache for it */
	enum policy_loader_answer loader;
	/* The asker's folder or its wheel siblings hold a copy the runtime may load (coherent). */
	enum policy_fact own;
	bool own_is_loaders; /* that copy is the very file the loader takes */
	/* The loader holds the name now, asked just before the asker's own copy is loaded: another
	   thread may have loaded it since the request began. */
	enum policy_fact loaded_now;
	/* One of the runtime's places holds a copy it may load (a registered origin, a wheel sibling,
	   NVINTERPOSE_PATH, the NVIDIA caller's folder). */
	enum policy_fact fallback;
	enum search_step fallback_step;
};

enum policy_action {
	POLICY_LEAVE,          /* the loader has the call as it is */
	POLICY_USE_LOADED,     /* the object loaded first is used, wherever it came from */
	POLICY_LOAD_OWN,       /* the asker's own copy is loaded (coherent) */
	POLICY_LOAD_FALLBACK,  /* the runtime's first copy is loaded */
	POLICY_ASK_LOADER,     /* walk the loader's search (and the runtime's places with it) */
	POLICY_ASK_OWN,        /* look in the asker's folder and its wheel siblings */
	POLICY_ASK_LOADED_NOW, /* ask the loader whether it holds the name now */
	POLICY_ASK_FALLBACK,   /* look in the runtime's places */
};

enum policy_reason {
	POLICY_BECAUSE_OFF,         /* the policy is off, or the process runs in secure mode */
	POLICY_BECAUSE_LOADED,      /* first loaded wins */
	POLICY_BECAUSE_DRIVER,      /* a driver library is never supplied */
	POLICY_BECAUSE_NOBODY,      /* neither the loader nor the runtime has a copy */
	POLICY_BECAUSE_ARRIVED,     /* the loader took the name meanwhile: first loaded wins */
	POLICY_BECAUSE_LOADER,      /* the loader finds it, and the policy keeps its choice */
	POLICY_BECAUSE_COHERENT,    /* the asker's own installation has it */
	POLICY_BECAUSE_FALLBACK,    /* only the runtime's places have it */
	POLICY_BECAUSE_UNKNOWN,     /* a fact is missing: the answer asks for it */
};

struct policy_answer {
	enum policy_action action;
	enum policy_reason reason;
	/* What the runtime writes as the reason of what it did (the log, the event, the report): the
	   place of the copy, or the coherent rule. NULL for an answer that loads nothing. */
	const char *text;
	/* POLICY_ASK_LOADER: the walk goes on into the runtime's places (one walk, each folder once). */
	bool with_places;
	/* POLICY_LOAD_FALLBACK: ask the loader for the name first, from the runtime's own frame. Its
	   ld.so.cache, which no search list shows, may hold the name, and the loader then takes that. */
	bool by_name_first;
	/* POLICY_USE_LOADED: the object loaded first may come from another installation than the
	   asker's (policy_watches_mixed_origins). */
	bool check_mixed_origin;
	/* The miss record: nobody finds the name, and the request is one whose misses are reported.
	   The walk lists the places it tried. */
	bool miss;
	const char *miss_reason; /* how it was asked for: "dlopen by bare name", "DT_NEEDED" */
};

/* Whether mixed origins are looked for under this policy: under every policy that acts (coherent
   prevents those it can, fallback keeps the loader's choice and says so). The hot path of a
   repeated load asks this alone, inline, before it builds a question. */
static inline bool policy_watches_mixed_origins(enum policy policy) { return policy != POLICY_OFF; }

/* True for the requests whose misses are reported: the hooks' bare names and DT_NEEDED. The audit
   front answers from inside the loader, which reports its own failure, and the attach scan loads
   only what it finds. */
bool policy_reports_misses(enum policy_request request);

/* The one decision. Reads nothing but question. */
struct policy_answer policy_decide(const struct policy_question *question);

/* Words for the reason, for debug lines and the inspector. */
const char *policy_reason_name(enum policy_reason reason);
