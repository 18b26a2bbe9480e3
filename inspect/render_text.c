/* The tree for a person: one line a dependency, how it was found, its NVIDIA family; under a missing
   one, every place looked. Colour only on a terminal, and never with NO_COLOR. */
#define _GNU_SOURCE /* fwrite_unlocked: the inspector has one thread */
#include "render.h"

#include "elf_names.h"
#include "libnames.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

#define RESET "\033[0m"
#define BOLD "\033[1m"
#define DIM "\033[2m"
#define RED "\033[1;31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define CYAN "\033[36m"
#define MAGENTA "\033[35m"

void render_text_safe(FILE *out, const char *s)
{
	if (!s)
		return;
	/* \xNN is four bytes for one. */
	size_t size = 4 * strlen(s) + 1;
	char small[512], *text = size <= sizeof(small) ? small : malloc(size);
	if (!text)
		return;
	log_text_escape(text, size, s);
	fputs_unlocked(text, out);
	if (text != small)
		free(text);
}

static void paint(const struct render_context *context, const char *color, const char *s)
{
	if (context->color)
		fputs(color, context->out);
	render_text_safe(context->out, s);
	if (context->color)
		fputs(RESET, context->out);
}

static void header(const struct render_context *context, const struct tree *tree)
{
	FILE *out = context->out;
	const struct elf_facts *f = tree->root->facts;
	char machine[32];
	paint(context, BOLD, tree->file);
	fprintf(out, ": %s %s %s %s", elf_class_name(f->elf_class), elf_data_name(f->data),
		elf_machine_name(f->machine, machine, sizeof(machine)), elf_type_name(f->type));
	const char *labels[] = { "PT_INTERP", "SONAME", "RPATH", "RUNPATH" };
	const char *values[] = { f->interp, f->soname, f->rpath, f->runpath };
	for (int i = 0; i < 4; i++)
		if (values[i]) {
			fprintf(out, ", %s ", labels[i]);
			render_text_safe(out, values[i]);
		}
	if (f->nodeflib)
		fputs(", NODEFLIB", out);
	if (tree->root->family >= 0) {
		fputs(" ", out);
		paint(context, GREEN, libnames[tree->root->family].family);
	}
	fputc('\n', out);
}

/* The tree's left margin, grown and shrunk as the walk goes down and up. */
struct margin {
	char *text;
	size_t length, capacity;
};

static bool margin_push(struct margin *margin, const char *segment)
{
	size_t n = strlen(segment);
	if (margin->length + n + 1 > margin->capacity) {
		size_t capacity = 2 * (margin->length + n + 1) + 64;
		char *grown = realloc(margin->text, capacity);
		if (!grown)
			return false;
		margin->text = grown;
		margin->capacity = capacity;
	}
	memcpy(margin->text + margin->length, segment, n + 1);
	margin->length += n;
	return true;
}

static void margin_pop(struct margin *margin, size_t length)
{
	margin->length = length;
	margin->text[length] = '\0';
}

/* One walk over a tree: what is folded, what waits to be continued, what was left out. */
struct walk {
	const struct render_context *context;
	const struct tree *tree;
	bool *foldable;            /* by object: a system library whose whole subtree is found and system */
	size_t *queue;             /* objects whose dependencies continue in a block of their own */
	size_t *queue_depth;
	size_t queued, queue_capacity;
	size_t folded;             /* entries folded away */
	const char *folded_names[8];
	size_t folded_name_count;
	size_t hidden;             /* objects whose entries lie below --max-depth */
	struct margin margin;
};

/* A tree deeper than this continues in a block of its own ("continued below as #ID"): the margin
   stays short, so the output grows with the number of entries, not with the square of the depth. */
#define INDENT_LEVELS 16

static bool entry_folds(const struct walk *walk, const struct dependency *d)
{
	return !walk->context->all && d->object && !d->run_time && d->object->system &&
	       (!d->loads || walk->foldable[d->object->index]);
}

/* Children are created after their parent, so one pass from the last object up decides. */
static void decide_folding(struct walk *walk)
{
	const struct tree *tree = walk->tree;
	for (size_t i = tree->object_count; i-- > 0;) {
		const struct object *o = tree->objects[i];
		bool fold = o->system && o->runtime_count == 0;
		for (size_t k = 0; k < o->needed_count && fold; k++) {
			const struct dependency *d = &o->needed[k];
			fold = d->object && !d->not_followed && (!d->loads || (d->object->index > i && walk->foldable[d->object->index]));
		}
		walk->foldable[i] = fold;
	}
}

static void note_folded(struct walk *walk, const char *name)
{
	walk->folded++;
	for (size_t i = 0; i < walk->folded_name_count; i++)
		if (strcmp(walk->folded_names[i], name) == 0)
			return;
	if (walk->folded_name_count < sizeof(walk->folded_names) / sizeof(walk->folded_names[0]))
		walk->folded_names[walk->folded_name_count++] = name;
}

static size_t shown_count(struct walk *walk, const struct object *object)
{
	size_t n = object->runtime_count;
	for (size_t i = 0; i < object->needed_count; i++)
		if (!entry_folds(walk, &object->needed[i]))
			n++;
	return n;
}

static void attempt_lines(const struct render_context *context, const char *margin, const struct dependency *d)
{
	FILE *out = context->out;
	for (size_t i = 0; i < d->attempt_count; i++) {
		const struct attempt *a = &d->attempts[i];
		fputs(margin, out);
		fputs(d->object || d->not_followed ? "  passed over " : "  looked: ", out);
		render_text_safe(out, a->path);
		fputs(" (", out);
		paint(context, DIM, how_name(a->step));
		fputs("): ", out);
		render_text_safe(out, a->result);
		fputc('\n', out);
	}
}

static void entry_line(struct walk *walk, const struct dependency *d)
{
	const struct render_context *context = walk->context;
	FILE *out = context->out;
	if (!d->object && !d->not_followed) {
		paint(context, d->run_time && !d->required ? YELLOW : RED, d->name);
		paint(context, d->run_time && !d->required ? YELLOW : RED, d->how == HOW_ERROR ? " error: " : " not found");
		if (d->error)
			paint(context, RED, d->error);
	} else {
		paint(context, d->how == HOW_ALREADY_LOADED ? DIM : BOLD, d->name);
		fputs(" => ", out);
		render_text_safe(out, d->object ? d->object->path : d->path);
		fputs(" [", out);
		paint(context, CYAN, how_name(d->how));
		if (d->hwcaps) {
			fputs(", glibc-hwcaps/", out);
			render_text_safe(out, d->hwcaps);
		}
		fputc(']', out);
	}
	bool found = d->object || d->not_followed;
	if (d->family >= 0 || d->run_time) {
		fputs(found ? " " : " (", out);
		if (d->family >= 0)
			paint(context, GREEN, libnames[d->family].family);
		if (d->run_time) {
			fputs(found ? " (run time, " : "; run time, ", out);
			fputs(d->required ? "required" : "optional", out);
			if (found)
				fputc(')', out);
		}
		if (!found)
			fputc(')', out);
	}
	if (d->not_followed)
		paint(context, YELLOW, " not followed: the bound of objects was reached");
	if (d->action != RUNTIME_NONE) {
		fputc(' ', out);
		paint(context, MAGENTA, d->action == RUNTIME_COHERENT ? "<- the runtime's coherent choice"
					: walk->tree->audit_front && !d->run_time ? "<- the audit front gives the loader it"
									    : "<- the runtime loads it first");
		if (d->action == RUNTIME_COHERENT) {
			fputs(", the loader alone: ", out);
			render_text_safe(out, d->loader_path ? d->loader_path : "none");
		}
	}
}

static void queue_object(struct walk *walk, const struct object *object, size_t depth)
{
	if (walk->queued == walk->queue_capacity) {
		size_t capacity = walk->queue_capacity ? 2 * walk->queue_capacity : 16;
		size_t *grown = realloc(walk->queue, capacity * sizeof(*grown));
		size_t *depths = grown ? realloc(walk->queue_depth, capacity * sizeof(*depths)) : NULL;
		if (grown)
			walk->queue = grown;
		if (!depths)
			return;
		walk->queue_depth = depths;
		walk->queue_capacity = capacity;
	}
	walk->queue[walk->queued] = object->index;
	walk->queue_depth[walk->queued++] = depth;
}

static void children(struct walk *walk, const struct object *object, size_t depth, size_t level);

/* One entry at depth (the root's own are at 1), level lines of margin in. */
static void dependency_lines(struct walk *walk, const struct dependency *d, bool last, size_t depth, size_t level)
{
	const struct render_context *context = walk->context;
	FILE *out = context->out;
	fputs(walk->margin.text, out);
	fputs(last ? "└── " : "├── ", out);
	entry_line(walk, d);
	bool more = d->loads && shown_count(walk, d->object) > 0;
	bool below_max = context->max_depth && depth >= context->max_depth;
	if (more && below_max)
		fprintf(out, " (%zu more below --max-depth)", shown_count(walk, d->object));
	else if (more && level + 1 >= INDENT_LEVELS) {
		fprintf(out, " (continued below as #%zu)", d->object->index);
		queue_object(walk, d->object, depth);
	}
	fputc('\n', out);
	size_t length = walk->margin.length;
	if (!margin_push(&walk->margin, last ? "    " : "│   "))
		return;
	attempt_lines(context, walk->margin.text, d);
	if (more && !below_max && level + 1 < INDENT_LEVELS)
		children(walk, d->object, depth, level + 1);
	else if (more && below_max)
		walk->hidden++;
	margin_pop(&walk->margin, length);
}

static void children(struct walk *walk, const struct object *object, size_t depth, size_t level)
{
	size_t shown = shown_count(walk, object), done = 0;
	for (size_t i = 0; i < object_entry_count(object); i++) {
		const struct dependency *d = object_entry(object, i);
		if (i < object->needed_count && entry_folds(walk, d)) {
			note_folded(walk, d->name);
			continue;
		}
		dependency_lines(walk, d, ++done == shown, depth + 1, level);
	}
}

/* What lies below --max-depth and matters: every entry not found, with the object that needs it. */
static void missing_below(struct walk *walk)
{
	const struct render_context *context = walk->context;
	const struct tree *tree = walk->tree;
	if (!context->max_depth)
		return;
	for (size_t i = 0; i < tree->object_count; i++) {
		const struct object *o = tree->objects[i];
		if (o->depth < context->max_depth)
			continue;
		for (size_t k = 0; k < object_entry_count(o); k++) {
			const struct dependency *d = object_entry(o, k);
			if (d->object || d->not_followed)
				continue;
			fprintf(context->out, "below --max-depth %zu: ", context->max_depth);
			entry_line(walk, d);
			fputs(", needed by ", context->out);
			render_text_safe(context->out, o->path);
			fputc('\n', context->out);
		}
	}
}

static void runtime_summary(const struct render_context *context, const struct tree *tree)
{
	FILE *out = context->out;
	const struct what_if *w = context->what_if;
	fprintf(out, "what-if, policy %s", config_policy_name(w->policy));
	for (size_t i = 0; i < w->origin_count; i++) {
		fputs(i ? ", " : ", origins ", out);
		render_text_safe(out, w->origins[i]);
	}
	if (w->pid && !w->order_problem[0])
		fprintf(out, " (from process %d, in the order it loaded them)", w->pid);
	else if (w->pid) {
		fprintf(out, " (from process %d, in the order of its mappings: ", w->pid);
		render_text_safe(out, w->order_problem);
		fputc(')', out);
	}
	if (tree->audit_front)
		fputs(", audit front (nvinterpose-run --audit)", out);
	fputs(tree->action_count ? ": the runtime would\n" : ": the runtime would change nothing here\n", out);
	for (size_t i = 0; i < tree->object_count; i++) {
		const struct object *o = tree->objects[i];
		for (size_t k = 0; k < object_entry_count(o); k++) {
			const struct dependency *d = object_entry(o, k);
			if (d->action == RUNTIME_NONE || !(d->object || d->not_followed))
				continue;
			fputs(d->action == RUNTIME_PRELOAD ? d->run_time ? "  supply " : tree->audit_front ? "  give the loader " : "  load " : "  take ", out);
			render_text_safe(out, d->object ? d->object->path : d->path);
			fprintf(out, " (%s) for ", how_name(d->how));
			render_text_safe(out, o->path);
			if (d->run_time)
				fputs(d->action == RUNTIME_PRELOAD ? "'s dlopen of " : ", at its dlopen of ", out);
			if (d->run_time)
				render_text_safe(out, d->name);
			if (d->action == RUNTIME_COHERENT) {
				fputs(", in place of ", out);
				render_text_safe(out, d->loader_path ? d->loader_path : "nothing");
			}
			fputc('\n', out);
		}
	}
}

static void render_text_file(struct render_context *context, const struct tree *tree, const char *error)
{
	FILE *out = context->out;
	if (error) /* said on stderr by the caller */
		return;
	if (context->file_index)
		fputc('\n', out);
	struct walk walk = { .context = context, .tree = tree, .foldable = calloc(tree->object_count + 1, sizeof(bool)) };
	if (!walk.foldable || !margin_push(&walk.margin, ""))
		goto out;
	decide_folding(&walk);
	header(context, tree);
	children(&walk, tree->root, 0, 0);
	/* Each block continues one deep object, its margin from the left again; blocks may queue more. */
	for (size_t i = 0; i < walk.queued; i++) {
		const struct object *o = tree->objects[walk.queue[i]];
		fprintf(out, "#%zu ", o->index);
		paint(context, BOLD, o->path);
		fputs(", continued:\n", out);
		children(&walk, o, walk.queue_depth[i], 0);
	}
	missing_below(&walk);
	if (walk.hidden)
		fprintf(out, "note: the dependencies of %zu %s at depth %zu are not shown (--max-depth)\n", walk.hidden,
			walk.hidden == 1 ? "library" : "libraries", context->max_depth);
	if (walk.folded) {
		fprintf(out, "note: %zu entries for system libraries folded (", walk.folded);
		for (size_t i = 0; i < walk.folded_name_count; i++) {
			fputs(i ? ", " : "", out);
			render_text_safe(out, walk.folded_names[i]);
		}
		fputs(walk.folded_name_count == sizeof(walk.folded_names) / sizeof(walk.folded_names[0]) ? ", ...); --all shows them\n"
													: "); --all shows them\n", out);
	}
	for (size_t i = 0; i < tree->note_count; i++) {
		fputs("note: ", out);
		render_text_safe(out, tree->notes[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < tree->would_supply_count; i++) {
		const struct supply *s = &tree->would_supply[i];
		fputs("note: under the default policy the runtime would supply ", out);
		render_text_safe(out, s->name);
		fputs(" for ", out);
		render_text_safe(out, s->asker);
		fputs(" from ", out);
		render_text_safe(out, s->path);
		fprintf(out, " (%s); --policy=fallback shows it\n", how_name(s->how));
	}
	for (size_t i = 0; i < tree->warning_count; i++) {
		paint(context, YELLOW, "warning: ");
		render_text_safe(out, tree->warnings[i].text);
		fputc('\n', out);
	}
	if (context->what_if)
		runtime_summary(context, tree);
	if (tree->missing) {
		char line[64];
		snprintf(line, sizeof(line), tree->missing == 1 ? "%zu dependency not found" : "%zu dependencies not found",
			 tree->missing);
		paint(context, RED, line);
		fputc('\n', out);
	}
	if (tree->optional_missing) {
		char line[96];
		snprintf(line, sizeof(line), tree->optional_missing == 1 ? "%zu optional run-time dependent not found"
									   : "%zu optional run-time dependents not found",
			 tree->optional_missing);
		paint(context, YELLOW, line);
		fputc('\n', out);
	}
out:
	free(walk.margin.text);
	free(walk.foldable);
	free(walk.queue);
	free(walk.queue_depth);
}

const struct renderer render_text = { .file = render_text_file };
