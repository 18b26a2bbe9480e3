/* One JSON document for the whole run. Each file's objects are one flat list in load order, each
   with an "id" (its index), its DT_NEEDED entries ("needed") and run-time dependents ("runtime"),
   each entry naming the object it resolved to by id. So the document's depth is the same for any
   graph (docs/inspector.md, the JSON document). */
#define _GNU_SOURCE /* fwrite_unlocked: the inspector has one thread */
#include "render.h"

#include "exit_status.h"

#include "elf_names.h"
#include "libnames.h"
#include "nvinterpose.h"

#include <string.h>

const char *render_action_name(const struct tree *tree, const struct dependency *d)
{
	if (d->action == RUNTIME_PRELOAD)
		return tree->audit_front && !d->run_time ? "audit-answer" : "preload";
	return d->action == RUNTIME_COHERENT ? "coherent" : NULL;
}

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_length(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 && s[0] < 0xf0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void render_json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs_unlocked("null", out);
		return;
	}
	fputc_unlocked('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		/* Plain ASCII, the whole of nearly every path, goes out in one write. */
		size_t run = 0;
		while (c[run] >= 0x20 && c[run] < 0x7f && c[run] != '"' && c[run] != '\\')
			run++;
		if (run) {
			fwrite_unlocked(c, 1, run, out);
			c += run;
		} else if (*c == '"' || *c == '\\') {
			fputc_unlocked('\\', out);
			fputc_unlocked(*c++, out);
		} else if (*c < 0x20 || *c == 0x7f) {
			fprintf(out, "\\u%04x", *c++);
		} else {
			/* A file's strings are bytes and a JSON document is UTF-8: a byte outside a valid
			   sequence becomes U+FFFD. */
			size_t n = utf8_length(c);
			if (n) {
				fwrite_unlocked(c, 1, n, out);
				c += n;
			} else {
				fputs_unlocked("\\ufffd", out);
				c++;
			}
		}
	}
	fputc_unlocked('"', out);
}

void render_json_member(FILE *out, bool *first, const char *name)
{
	if (!*first)
		fputc_unlocked(',', out);
	fputc_unlocked('"', out);
	fputs_unlocked(name, out);
	fputs_unlocked("\":", out);
	*first = false;
}

/* A count, without printf's machinery: the document holds thousands. */
static void number(FILE *out, size_t n)
{
	char digits[24];
	size_t i = sizeof(digits);
	do
		digits[--i] = (char)('0' + n % 10);
	while ((n /= 10) && i > 0);
	fwrite_unlocked(digits + i, 1, sizeof(digits) - i, out);
}

void render_json_string_member(FILE *out, bool *first, const char *name, const char *value)
{
	render_json_member(out, first, name);
	render_json_string(out, value);
}

static void bool_member(FILE *out, bool *first, const char *name, bool value)
{
	render_json_member(out, first, name);
	fputs_unlocked(value ? "true" : "false", out);
}

static void string_array(FILE *out, char *const *strings, size_t count)
{
	fputc_unlocked('[', out);
	for (size_t i = 0; i < count; i++) {
		if (i)
			fputc_unlocked(',', out);
		render_json_string(out, strings[i]);
	}
	fputc_unlocked(']', out);
}

static const char *family_name(int family) { return family >= 0 ? libnames[family].family : NULL; }

static void facts_object(FILE *out, const struct elf_facts *f)
{
	char machine[32];
	bool first = true;
	fputc_unlocked('{', out);
	render_json_string_member(out, &first, "class", elf_class_name(f->elf_class));
	render_json_string_member(out, &first, "data", elf_data_name(f->data));
	render_json_string_member(out, &first, "machine", elf_machine_name(f->machine, machine, sizeof(machine)));
	render_json_string_member(out, &first, "type", elf_type_name(f->type));
	render_json_member(out, &first, "osabi");
	fprintf(out, "%u", f->osabi);
	render_json_string_member(out, &first, "interp", f->interp);
	render_json_string_member(out, &first, "soname", f->soname);
	render_json_string_member(out, &first, "rpath", f->rpath);
	render_json_string_member(out, &first, "runpath", f->runpath);
	bool_member(out, &first, "nodeflib", f->nodeflib);
	render_json_member(out, &first, "dt_needed");
	string_array(out, f->needed, f->needed_count);
	fputc_unlocked('}', out);
}

static void attempts_array(FILE *out, const struct attempt *attempts, size_t count)
{
	fputc_unlocked('[', out);
	for (size_t i = 0; i < count; i++) {
		bool first = true;
		fputs_unlocked(i ? ",{" : "{", out);
		render_json_string_member(out, &first, "path", attempts[i].path);
		render_json_string_member(out, &first, "how", how_name(attempts[i].step));
		render_json_string_member(out, &first, "result", attempts[i].result);
		fputc_unlocked('}', out);
	}
	fputc_unlocked(']', out);
}

static void id_member(FILE *out, bool *first, const char *name, const struct object *object)
{
	render_json_member(out, first, name);
	if (object)
		number(out, object->index);
	else
		fputs_unlocked("null", out);
}

static void entry_object(FILE *out, const struct tree *tree, const struct dependency *d)
{
	bool first = true;
	fputc_unlocked('{', out);
	/* "name" then "path", always adjacent: a reader may match the pair as one string. */
	render_json_string_member(out, &first, "name", d->name);
	render_json_string_member(out, &first, "path", d->object ? d->object->path : d->path);
	render_json_string_member(out, &first, "how", how_name(d->how));
	render_json_string_member(out, &first, "family", family_name(d->family));
	id_member(out, &first, "object", d->object);
	if (d->run_time)
		bool_member(out, &first, "required", d->required);
	if (d->hwcaps)
		render_json_string_member(out, &first, "hwcaps", d->hwcaps);
	if (d->error)
		render_json_string_member(out, &first, "error", d->error);
	if (d->attempt_count) {
		render_json_member(out, &first, d->object || d->not_followed ? "passed_over" : "looked");
		attempts_array(out, d->attempts, d->attempt_count);
	}
	if (d->action != RUNTIME_NONE) {
		render_json_string_member(out, &first, "action", render_action_name(tree, d));
		render_json_string_member(out, &first, "instead_of", d->loader_path);
	}
	if (d->not_followed)
		bool_member(out, &first, "not_followed", true);
	fputc_unlocked('}', out);
}

static void entries(FILE *out, const struct tree *tree, const struct dependency *list, size_t count)
{
	fputc_unlocked('[', out);
	for (size_t i = 0; i < count; i++) {
		if (i)
			fputc_unlocked(',', out);
		entry_object(out, tree, &list[i]);
	}
	fputc_unlocked(']', out);
}

static const char *object_kind(const struct tree *tree, const struct object *o)
{
	return o == tree->root ? "root" : o->interpreter ? "interpreter" : o->preloaded ? "preloaded" : o->dlopened ? "run_time" : "needed";
}

static void object_member(FILE *out, const struct tree *tree, const struct object *o)
{
	bool first = true;
	fputc_unlocked('{', out);
	render_json_member(out, &first, "id");
	number(out, o->index);
	render_json_string_member(out, &first, "path", o->path);
	render_json_string_member(out, &first, "soname", o->facts ? o->facts->soname : NULL);
	render_json_string_member(out, &first, "family", family_name(o->family));
	render_json_string_member(out, &first, "origin", o->origin);
	render_json_string_member(out, &first, "kind", object_kind(tree, o));
	id_member(out, &first, "loaded_by", o->loader);
	render_json_member(out, &first, "depth");
	number(out, o->depth);
	bool_member(out, &first, "system", o->system);
	render_json_member(out, &first, "needed");
	entries(out, tree, o->needed, o->needed_count);
	render_json_member(out, &first, "runtime");
	entries(out, tree, o->runtime, o->runtime_count);
	fputc_unlocked('}', out);
}

static void runtime_actions(FILE *out, const struct tree *tree)
{
	bool any = false;
	fputc_unlocked('[', out);
	for (size_t i = 0; i < tree->object_count; i++) {
		const struct object *o = tree->objects[i];
		for (size_t k = 0; k < object_entry_count(o); k++) {
			const struct dependency *d = object_entry(o, k);
			bool first = true;
			if (d->action == RUNTIME_NONE)
				continue;
			fputs_unlocked(any ? ",{" : "{", out);
			any = true;
			render_json_string_member(out, &first, "name", d->name);
			id_member(out, &first, "needed_by", o);
			render_json_string_member(out, &first, "action", render_action_name(tree, d));
			render_json_string_member(out, &first, "path", d->object ? d->object->path : d->path);
			render_json_string_member(out, &first, "how", how_name(d->how));
			render_json_string_member(out, &first, "instead_of", d->loader_path);
			bool_member(out, &first, "run_time", d->run_time);
			fputc_unlocked('}', out);
		}
	}
	fputc_unlocked(']', out);
}

static void would_supply_array(FILE *out, const struct tree *tree)
{
	fputc_unlocked('[', out);
	for (size_t i = 0; i < tree->would_supply_count; i++) {
		const struct supply *s = &tree->would_supply[i];
		bool first = true;
		fputs_unlocked(i ? ",{" : "{", out);
		render_json_string_member(out, &first, "name", s->name);
		render_json_string_member(out, &first, "for", s->asker);
		render_json_string_member(out, &first, "path", s->path);
		render_json_string_member(out, &first, "how", how_name(s->how));
		bool_member(out, &first, "run_time", s->run_time);
		fputc_unlocked('}', out);
	}
	fputc_unlocked(']', out);
}

static void warnings_array(FILE *out, const struct tree *tree)
{
	fputc_unlocked('[', out);
	for (size_t i = 0; i < tree->warning_count; i++) {
		const struct warning *w = &tree->warnings[i];
		bool first = true;
		fputs_unlocked(i ? ",{" : "{", out);
		render_json_string_member(out, &first, "kind", warning_kind_name(w->kind));
		render_json_string_member(out, &first, "library", w->library);
		render_json_string_member(out, &first, "dependency", w->dependency);
		render_json_string_member(out, &first, "got", w->got);
		render_json_string_member(out, &first, "own", w->own);
		render_json_string_member(out, &first, "how", w->kind == WARNING_MIXED_ORIGIN ? how_name(w->how) : NULL);
		bool_member(out, &first, "run_time", w->run_time);
		render_json_string_member(out, &first, "text", w->text);
		fputc_unlocked('}', out);
	}
	fputc_unlocked(']', out);
}

static void render_json_begin(struct render_context *context)
{
	FILE *out = context->out;
	const struct loader_host *host = context->host;
	bool first = true, inner = true;
	fputc_unlocked('{', out);
	render_json_string_member(out, &first, "inspector", "nvinterpose-inspect");
	render_json_string_member(out, &first, "version", NVI_VERSION);
	render_json_member(out, &first, "schema");
	fputs_unlocked("2", out);
	render_json_member(out, &first, "loader");
	if (host) {
		fputc_unlocked('{', out);
		render_json_string_member(out, &inner, "interpreter", host->interpreter);
		render_json_member(out, &inner, "default_folders");
		string_array(out, host->default_dirs, host->default_count);
		render_json_string_member(out, &inner, "ld_library_path", host->library_path);
		render_json_string_member(out, &inner, "cache", context->cache_path);
		render_json_string_member(out, &inner, "cache_problem", context->cache_problem);
		render_json_string_member(out, &inner, "lib", host->lib);
		render_json_string_member(out, &inner, "platform", host->platform);
		fputc_unlocked('}', out);
	} else {
		fputs_unlocked("null", out);
	}
	render_json_member(out, &first, "what_if");
	if (context->what_if) {
		const struct what_if *w = context->what_if;
		inner = true;
		fputc_unlocked('{', out);
		render_json_string_member(out, &inner, "policy", config_policy_name(w->policy));
		render_json_member(out, &inner, "origins");
		string_array(out, w->origins, w->origin_count);
		render_json_member(out, &inner, "pid");
		if (w->pid)
			fprintf(out, "%d", w->pid);
		else
			fputs_unlocked("null", out);
		/* --pid: the origins in the order the process loaded them, or (when its list of loaded
		   objects cannot be read) in the order of its mappings. */
		render_json_string_member(out, &inner, "origin_order", !w->pid ? NULL : w->order_problem[0] ? "address" : "load");
		render_json_string_member(out, &inner, "origin_order_problem", w->pid && w->order_problem[0] ? w->order_problem : NULL);
		render_json_string_member(out, &inner, "root", w->root[0] ? w->root : NULL);
		render_json_string_member(out, &inner, "nvinterpose_path", context->nvinterpose_path);
		fputc_unlocked('}', out);
	} else {
		fputs_unlocked("null", out);
	}
	render_json_member(out, &first, "files");
	fputc_unlocked('[', out);
}

static void render_json_file(struct render_context *context, const struct tree *tree, const char *error)
{
	FILE *out = context->out;
	bool first = true;
	bool resolved = tree->root && !error;
	fputs_unlocked(context->file_index ? ",{" : "{", out);
	render_json_string_member(out, &first, "file", tree->file);
	render_json_string_member(out, &first, "error", error);
	render_json_member(out, &first, "elf");
	if (tree->root)
		facts_object(out, tree->root->facts);
	else
		fputs_unlocked("null", out);
	render_json_string_member(out, &first, "family", tree->root ? family_name(tree->root->family) : NULL);
	render_json_string_member(out, &first, "origin", resolved ? tree->root->origin : NULL);
	id_member(out, &first, "root", resolved ? tree->root : NULL);
	render_json_member(out, &first, "objects");
	fputc_unlocked('[', out);
	for (size_t i = 0; resolved && i < tree->object_count; i++) {
		if (i)
			fputc_unlocked(',', out);
		object_member(out, tree, tree->objects[i]);
	}
	fputc_unlocked(']', out);
	render_json_member(out, &first, "missing");
	fprintf(out, "%zu", tree->missing);
	render_json_member(out, &first, "optional_missing");
	fprintf(out, "%zu", tree->optional_missing);
	bool_member(out, &first, "cut", tree->cut);
	render_json_member(out, &first, "actions");
	runtime_actions(out, tree);
	render_json_member(out, &first, "would_supply");
	would_supply_array(out, tree);
	render_json_member(out, &first, "warnings");
	warnings_array(out, tree);
	render_json_member(out, &first, "notes");
	string_array(out, tree->notes, tree->note_count);
	fputc_unlocked('}', out);
}

static void render_json_end(struct render_context *context, size_t missing, int status)
{
	const struct loader_host *host = context->host;
	/* The hwcaps subfolders are known only once a searched folder had a glibc-hwcaps subfolder. */
	fputs_unlocked("],\"glibc_hwcaps\":", context->out);
	if (host && host->hwcaps_knowledge == HWCAPS_KNOWN)
		string_array(context->out, (char **)host->hwcaps, host->hwcaps_count);
	else
		fputs_unlocked("null", context->out);
	fprintf(context->out, ",\"missing\":%zu,\"cut\":%s,\"error\":", missing, context->cut ? "true" : "false");
	render_json_string(context->out, context->error);
	fprintf(context->out, ",\"status\":%d}\n", status);
}

/* Where the wheels of a CUDA major put a family, under site-packages ("" when no wheel holds it). */
static void wheel_folder(const struct libname_row *row, int cuda_major, char *folder, size_t size)
{
	if (!row->wheel_folder[0] || (row->flags & LIBNAME_DRIVER))
		snprintf(folder, size, "%s", "");
	else if (cuda_major >= 13 && (row->flags & LIBNAME_CU13))
		snprintf(folder, size, "nvidia/cu%d/lib", cuda_major);
	else
		snprintf(folder, size, strchr(row->wheel_folder, '/') ? "nvidia/%s" : "nvidia/%s/lib", row->wheel_folder);
}

struct dependents_text {
	FILE *out; /* NULL: only count */
	bool json, required;
	size_t count;
};

/* One run-time dependent: in JSON every one, in text those of one kind ("required" or not). */
static bool print_dependent(int family, bool required, void *arg)
{
	struct dependents_text *t = arg;
	if (t->json) {
		fputs_unlocked(t->count++ ? ",{\"family\":" : "{\"family\":", t->out);
		render_json_string(t->out, libnames[family].family);
		fprintf(t->out, ",\"required\":%s}", required ? "true" : "false");
	} else if (required == t->required) {
		if (t->out)
			fprintf(t->out, "%s%s", t->count ? " " : "", libnames[family].family);
		t->count++;
	}
	return false;
}

void render_families(FILE *out, bool json)
{
	char cuda12[64], cuda13[64];
	if (json) {
		fputc_unlocked('[', out);
		for (size_t i = 0; i < libnames_count; i++) {
			const struct libname_row *row = &libnames[i];
			bool first = true;
			fputs_unlocked(i ? ",{" : "{", out);
			render_json_string_member(out, &first, "family", row->family);
			render_json_string_member(out, &first, "linux_stem", row->linux_stem);
			render_json_string_member(out, &first, "windows_prefix", row->windows_prefix);
			wheel_folder(row, 12, cuda12, sizeof(cuda12));
			wheel_folder(row, 13, cuda13, sizeof(cuda13));
			render_json_string_member(out, &first, "wheel_folder", cuda12[0] ? cuda12 : NULL);
			render_json_string_member(out, &first, "cu13_wheel_folder", cuda13[0] ? cuda13 : NULL);
			render_json_string_member(out, &first, "needed", row->needed);
			render_json_member(out, &first, "runtime");
			fputc_unlocked('[', out);
			libnames_foreach_dependent(row->runtime, print_dependent, &(struct dependents_text){ out, true, false, 0 });
			fputc_unlocked(']', out);
			bool_member(out, &first, "driver", row->flags & LIBNAME_DRIVER);
			fputc_unlocked('}', out);
		}
		fputs_unlocked("]\n", out);
		return;
	}
	fprintf(out, "%-31s %-34s %-28s %-16s %s\n", "FAMILY", "LINUX NAME", "CUDA 12 WHEELS", "CUDA 13 WHEELS", "NEEDS; LOADS AT RUN TIME");
	for (size_t i = 0; i < libnames_count; i++) {
		const struct libname_row *row = &libnames[i];
		char stem[128];
		snprintf(stem, sizeof(stem), row->flags & LIBNAME_UNVERSIONED ? "%s.so" : "%s.so.N", row->linux_stem);
		wheel_folder(row, 12, cuda12, sizeof(cuda12));
		wheel_folder(row, 13, cuda13, sizeof(cuda13));
		const char *none = row->flags & LIBNAME_DRIVER ? "(driver)" : "-";
		/* No padding after the last column. */
		fprintf(out, row->needed[0] || row->runtime[0] ? "%-31s %-34s %-28s %-16s" : "%-31s %-34s %-28s %s", row->family, stem,
			cuda12[0] ? cuda12 : none, cuda13[0] ? cuda13 : none);
		if (row->needed[0])
			fprintf(out, " needs %s", row->needed);
		struct dependents_text optional = { NULL, false, false, 0 };
		libnames_foreach_dependent(row->runtime, print_dependent, &optional);
		if (row->runtime[0]) {
			fputs_unlocked(row->needed[0] ? "; loads " : " loads ", out);
			struct dependents_text required = { out, false, true, 0 };
			libnames_foreach_dependent(row->runtime, print_dependent, &required);
			if (optional.count) {
				fputs_unlocked(required.count ? ", and when used " : "when used ", out);
				optional.out = out;
				optional.count = 0;
				libnames_foreach_dependent(row->runtime, print_dependent, &optional);
			}
		}
		fputc_unlocked('\n', out);
	}
}

/* The document of a run that could not be done: its "error", no files, the usage status. */
static void render_json_fail(struct render_context *context)
{
	render_json_begin(context);
	render_json_end(context, 0, EXIT_USAGE);
}

const struct renderer render_json = { .begin = render_json_begin, .file = render_json_file, .end = render_json_end,
				      .fail = render_json_fail };
