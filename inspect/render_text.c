/* The tree for a person: one line a dependency, how it was found, its NVIDIA family; under a missing
   one, every place looked. Colour only on a terminal, and never with NO_COLOR. */
#define _GNU_SOURCE /* fwrite_unlocked: the inspector has one thread */
#include "render.h"

#include "elf_names.h"
#include "libnames.h"

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

/* Strings from a file may hold terminal escapes: printed with every control byte as '?'. */
static void print_safe(FILE *out, const char *s)
{
	while (s && *s) {
		size_t n = 0;
		while (s[n] && (unsigned char)s[n] >= 0x20 && s[n] != 0x7f)
			n++;
		fwrite_unlocked(s, 1, n, out);
		s += n;
		if (*s) {
			fputc_unlocked('?', out);
			s++;
		}
	}
}

static void paint(const struct render_context *context, const char *color, const char *s)
{
	if (context->color)
		fputs(color, context->out);
	print_safe(context->out, s);
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
			print_safe(out, values[i]);
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

static void attempt_lines(const struct render_context *context, const char *margin, const struct dependency *d)
{
	FILE *out = context->out;
	for (size_t i = 0; i < d->attempt_count; i++) {
		const struct attempt *a = &d->attempts[i];
		fputs(margin, out);
		fputs(d->object ? "  passed over " : "  looked: ", out);
		print_safe(out, a->path);
		fputs(" (", out);
		paint(context, DIM, how_name(a->step));
		fputs("): ", out);
		print_safe(out, a->result);
		fputc('\n', out);
	}
}

static void dependency_lines(const struct render_context *context, const struct dependency *d, struct margin *margin, bool last);

static void children(const struct render_context *context, const struct object *object, struct margin *margin)
{
	for (size_t i = 0; i < object->needed_count; i++)
		dependency_lines(context, &object->needed[i], margin, i + 1 == object->needed_count);
}

static void dependency_lines(const struct render_context *context, const struct dependency *d, struct margin *margin, bool last)
{
	FILE *out = context->out;
	fputs(margin->text, out);
	fputs(last ? "└── " : "├── ", out);
	if (!d->object) {
		paint(context, RED, d->name);
		paint(context, RED, d->how == HOW_ERROR ? " error: " : " not found");
		if (d->error)
			paint(context, RED, d->error);
	} else {
		paint(context, d->how == HOW_ALREADY_LOADED ? DIM : BOLD, d->name);
		fputs(" => ", out);
		print_safe(out, d->object->path);
		fputs(" [", out);
		paint(context, CYAN, how_name(d->how));
		if (d->hwcaps) {
			fputs(", glibc-hwcaps/", out);
			print_safe(out, d->hwcaps);
		}
		fputc(']', out);
	}
	if (d->family >= 0) {
		fputs(d->object ? " " : " (", out);
		paint(context, GREEN, libnames[d->family].family);
		if (!d->object)
			fputc(')', out);
	}
	if (d->action != RUNTIME_NONE) {
		fputc(' ', out);
		paint(context, MAGENTA, d->action == RUNTIME_PRELOAD ? "<- the runtime loads it first" : "<- the runtime's coherent choice");
		if (d->action == RUNTIME_COHERENT) {
			fputs(", the loader alone: ", out);
			print_safe(out, d->loader_path ? d->loader_path : "none");
		}
	}
	fputc('\n', out);
	size_t length = margin->length;
	if (!margin_push(margin, last ? "    " : "│   "))
		return;
	attempt_lines(context, margin->text, d);
	if (d->loads)
		children(context, d->object, margin);
	margin_pop(margin, length);
}

static void runtime_summary(const struct render_context *context, const struct tree *tree)
{
	FILE *out = context->out;
	const struct what_if *w = context->what_if;
	fprintf(out, "what-if, policy %s", config_policy_name(w->policy));
	for (size_t i = 0; i < w->origin_count; i++) {
		fputs(i ? ", " : ", origins ", out);
		print_safe(out, w->origins[i]);
	}
	if (w->pid)
		fprintf(out, " (from process %d)", w->pid);
	fputs(tree->action_count ? ": the runtime would\n" : ": the runtime would change nothing here\n", out);
	for (size_t i = 0; i < tree->object_count; i++) {
		const struct object *o = tree->objects[i];
		for (size_t k = 0; k < o->needed_count; k++) {
			const struct dependency *d = &o->needed[k];
			if (d->action == RUNTIME_NONE || !d->object)
				continue;
			fputs(d->action == RUNTIME_PRELOAD ? "  load " : "  take ", out);
			print_safe(out, d->object->path);
			fprintf(out, " (%s) for ", how_name(d->how));
			print_safe(out, o->path);
			if (d->action == RUNTIME_COHERENT) {
				fputs(", in place of ", out);
				print_safe(out, d->loader_path ? d->loader_path : "nothing");
			}
			fputc('\n', out);
		}
	}
}

void render_text_file(struct render_context *context, const struct tree *tree, const char *error)
{
	FILE *out = context->out;
	struct margin margin = { NULL, 0, 0 };
	if (error) /* said on stderr by the caller */
		return;
	if (context->file_index)
		fputc('\n', out);
	header(context, tree);
	if (margin_push(&margin, ""))
		children(context, tree->root, &margin);
	free(margin.text);
	for (size_t i = 0; i < tree->note_count; i++) {
		fputs("note: ", out);
		print_safe(out, tree->notes[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < tree->warning_count; i++) {
		paint(context, YELLOW, "warning: ");
		print_safe(out, tree->warnings[i]);
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
}
