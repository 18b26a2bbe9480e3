/* The three ways to print trees: a tree for a person (text), one JSON document, a Graphviz graph.
   Each is one renderer, and the command picks one. */
#pragma once

#include "loader/ld_cache.h"
#include "loader_host.h"
#include "tree.h"
#include "what_if.h"

#include <stdbool.h>
#include <stdio.h>

/* What every renderer may show about the run as a whole. */
struct render_context {
	FILE *out;
	bool color;                       /* text: ANSI colours (a terminal, NO_COLOR unset) */
	const struct loader_host *host;   /* NULL when the loader could not be asked */
	const char *cache_path;           /* NULL when no cache was read */
	const char *cache_problem;        /* why the cache was not read, or NULL */
	const struct what_if *what_if;    /* NULL without --policy */
	const char *nvinterpose_path;     /* the what-if's NVINTERPOSE_PATH, or NULL */
	size_t file_index;                /* which file this is, from 0 */
	size_t max_depth;                 /* text and dot show no entry deeper than this; 0 shows all */
	bool all;                         /* text: system libraries are shown, not folded */
	bool cut;                         /* some tree of the run was cut at its bound */
	const char *error;                /* why the run could not be done (no files then), or NULL */
};

/* One way to print a run. A member left NULL writes nothing. */
struct renderer {
	void (*begin)(struct render_context *context);
	/* A file's tree, or the message of a file that could not be inspected (tree may then hold
	   only the root's facts, or nothing). */
	void (*file)(struct render_context *context, const struct tree *tree, const char *error);
	/* The run's end: how many dependencies were missing, and its exit status. */
	void (*end)(struct render_context *context, size_t missing, int status);
	/* A run that could not be done at all (context->error says why), where the format has a place
	   for it: a tool reading JSON always gets a document. */
	void (*fail)(struct render_context *context);
};

extern const struct renderer render_text, render_json, render_dot;

/* nvinterpose-inspect --families: the table's families. */
void render_families(FILE *out, bool json);

/* Helpers the renderers share. */
/* Text from a file or the environment (a path, a SONAME, what a python printed) for a person: every
   control character, and each byte that starts no UTF-8 character, shown as \xNN (log_text_escape,
   the rule of every message on stderr), so that none reaches the terminal as an escape sequence. */
void render_text_safe(FILE *out, const char *s);
void render_json_string(FILE *out, const char *s); /* a JSON string, or null for NULL */
/* Starts a member of the object being written: the comma before all but the first, and its name. */
void render_json_member(FILE *out, bool *first, const char *name);
void render_json_string_member(FILE *out, bool *first, const char *name, const char *value);
/* What the runtime would do for a dependency, in words ("preload", "coherent"; "audit-answer" for
   the audit front's answer to a DT_NEEDED search), or NULL. */
const char *render_action_name(const struct tree *tree, const struct dependency *d);
