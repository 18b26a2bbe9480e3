/* A Graphviz graph of every tree: one node an object (or a missing name), one edge a DT_NEEDED entry
   labelled with how it was found; `dot -Tsvg` draws it. */
#include "render.h"

#include "libnames.h"

#include <stdlib.h>
#include <string.h>

/* A DOT string's inside: quotes and backslashes escaped, control bytes as '?'. */
static void dot_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
	}
}

static void node(struct render_context *context, const struct tree *tree, const struct object *object)
{
	FILE *out = context->out;
	fprintf(out, "  f%zu_o%zu [label=\"", context->file_index, object->index);
	const char *name = object->facts && object->facts->soname ? object->facts->soname : libnames_basename(object->path);
	dot_text(out, name);
	fputs("\\n", out);
	dot_text(out, object->path);
	fputc('"', out);
	if (object == tree->root)
		fputs(", penwidth=2", out);
	if (object->family >= 0)
		fputs(", style=filled, fillcolor=\"#d9f2d9\"", out);
	fputs("];\n", out);
}

static void render_dot_begin(struct render_context *context)
{
	fputs("digraph nvinterpose_inspect {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n", context->out);
}

static void render_dot_file(struct render_context *context, const struct tree *tree, const char *error)
{
	FILE *out = context->out;
	if (error || !tree->root)
		return;
	/* The edges first (DOT takes a node's attributes after its edges): objects that no entry names
	   (the interpreter, a process's other libraries) stay out. */
	bool *named = calloc(tree->object_count, sizeof(bool));
	if (!named)
		return;
	named[0] = true;
	size_t missing = 0;
	for (size_t i = 0; i < tree->object_count; i++) {
		const struct object *o = tree->objects[i];
		/* --max-depth: the entries of an object at that depth are left out. */
		if (context->max_depth && o->depth >= context->max_depth)
			continue;
		for (size_t k = 0; k < object_entry_count(o); k++) {
			const struct dependency *d = object_entry(o, k);
			if (d->object) {
				named[d->object->index] = true;
				fprintf(out, "  f%zu_o%zu -> f%zu_o%zu [label=\"%s%s\"%s%s];\n", context->file_index, i, context->file_index,
					d->object->index, d->run_time ? "run time: " : "", how_name(d->how),
					d->how == HOW_ALREADY_LOADED || d->run_time ? ", style=dashed" : "",
					d->action != RUNTIME_NONE ? ", color=magenta, fontcolor=magenta" : "");
				continue;
			}
			const char *color = d->run_time && !d->required ? "orange" : "red";
			fprintf(out, "  f%zu_m%zu [label=\"", context->file_index, missing);
			dot_text(out, d->name);
			fprintf(out, "\\n%s\", color=%s, fontcolor=%s];\n", d->not_followed ? "not followed" : d->how == HOW_ERROR ? "error" : "not found",
				color, color);
			fprintf(out, "  f%zu_o%zu -> f%zu_m%zu [label=\"%s%s\", color=red];\n", context->file_index, i, context->file_index,
				missing, d->run_time ? "run time: " : "", how_name(d->how));
			missing++;
		}
	}
	for (size_t i = 0; i < tree->object_count; i++)
		if (named[i])
			node(context, tree, tree->objects[i]);
	free(named);
}

static void render_dot_end(struct render_context *context, size_t missing, int status)
{
	(void)missing, (void)status;
	fputs("}\n", context->out);
}

const struct renderer render_dot = { .begin = render_dot_begin, .file = render_dot_file, .end = render_dot_end };
