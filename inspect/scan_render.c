/* The scan's report: one JSON document, or text for a person. */
#define _GNU_SOURCE
#include "scan_model.h"

#include "libnames.h"
#include "log.h"
#include "nvinterpose.h"
#include "render.h"

#include <string.h>

static void found_in_list(FILE *out, unsigned found_in, bool json)
{
	bool first = true;
	for (int kind = 0; kind < PLACE_KINDS; kind++)
		if (found_in & (1u << kind)) {
			fputs(first ? "" : json ? "," : ", ", out);
			if (json)
				render_json_string(out, place_names[kind]);
			else
				fputs(place_names[kind], out);
			first = false;
		}
}

static const char *finding_kind_name(enum finding_kind kind)
{
	return kind == FINDING_MIXED_ORIGIN ? "mixed-origin" : kind == FINDING_MISSING ? "missing" : "cut";
}

void scan_write_json(const struct scan *scan, FILE *out, size_t counted, int status)
{
	bool first = true;
	fputc('{', out);
	render_json_string_member(out, &first, "inspector", "nvinterpose-inspect");
	render_json_string_member(out, &first, "version", NVI_VERSION);
	fputs(",\"schema\":2,\"scan\":{", out);
	bool inner = true;
	render_json_string_member(out, &inner, "python", scan->python_executable);
	render_json_string_member(out, &inner, "python_problem", scan->python_problem);
	fputs(",\"places\":[", out);
	for (size_t i = 0; i < scan->place_count; i++) {
		const struct place *p = &scan->places[i];
		bool f = true;
		fputs(i ? ",{" : "{", out);
		render_json_string_member(out, &f, "kind", place_names[p->kind]);
		render_json_string_member(out, &f, "folder", p->folder);
		render_json_string_member(out, &f, "note", p->note);
		fprintf(out, ",\"copies\":%zu}", p->copies);
	}
	fputs("]},\"libraries\":[", out);
	for (size_t i = 0; i < scan->library_count; i++) {
		const struct library *l = &scan->libraries[i];
		bool f = true;
		fputs(i ? ",{" : "{", out);
		render_json_string_member(out, &f, "name", l->name);
		render_json_string_member(out, &f, "family", l->family >= 0 ? libnames[l->family].family : NULL);
		fprintf(out, ",\"installations\":%zu,\"duplicate\":%s,\"copies\":[", l->installations, l->installations > 1 ? "true" : "false");
		for (size_t k = 0; k < l->copy_count; k++) {
			const struct copy *c = &scan->copies[l->copies[k]];
			bool g = true;
			fputs(k ? ",{" : "{", out);
			render_json_string_member(out, &g, "path", c->path);
			render_json_string_member(out, &g, "real_path", c->real_path);
			render_json_string_member(out, &g, "version", c->version);
			render_json_string_member(out, &g, "version_from", c->version_from);
			render_json_string_member(out, &g, "installation", c->installation);
			fputs(",\"found_in\":[", out);
			found_in_list(out, c->found_in, true);
			fputs("],\"names\":[", out);
			for (size_t n = 0; n < c->name_count; n++) {
				fputs(n ? "," : "", out);
				render_json_string(out, c->names[n]);
			}
			fputs("]}", out);
		}
		fputs("]}", out);
	}
	fputs("],\"findings\":[", out);
	for (size_t i = 0; i < scan->finding_count; i++) {
		const struct finding *f = &scan->findings[i];
		bool g = true;
		fputs(i ? ",{" : "{", out);
		render_json_string_member(out, &g, "kind", finding_kind_name(f->kind));
		render_json_string_member(out, &g, "library", f->library);
		render_json_string_member(out, &g, "dependency", f->dependency);
		render_json_string_member(out, &g, "got", f->got);
		render_json_string_member(out, &g, "own", f->own);
		render_json_string_member(out, &g, "how", f->kind == FINDING_CUT ? NULL : how_name(f->how));
		fprintf(out, ",\"run_time\":%s,\"required\":%s", f->run_time ? "true" : "false",
			f->kind == FINDING_MISSING && !f->required ? "false" : "true");
		render_json_string_member(out, &g, "text", f->text);
		render_json_string_member(out, &g, "hint", f->hint);
		fputc('}', out);
	}
	fprintf(out, "],\"findings_counted\":%zu,\"status\":%d}\n", counted, status);
}

/* Every text from a file, the environment or the python goes out through render_text_safe. */
void scan_write_text(const struct scan *scan, FILE *out, size_t counted)
{
	bool color = scan->request->color;
	fprintf(out, "%sScanned%s", color ? "\033[1m" : "", color ? "\033[0m" : "");
	if (scan->python_executable) {
		fputs(" (python ", out);
		render_text_safe(out, scan->python_executable);
		fputc(')', out);
	}
	fputs(":\n", out);
	for (size_t i = 0; i < scan->place_count; i++) {
		const struct place *p = &scan->places[i];
		fprintf(out, "  %-16s ", place_names[p->kind]);
		render_text_safe(out, p->folder);
		if (p->note) {
			fputs(p->folder ? " (" : "(", out);
			render_text_safe(out, p->note);
			fputc(')', out);
		} else
			fprintf(out, ": %zu NVIDIA %s", p->copies, p->copies == 1 ? "file" : "files");
		fputc('\n', out);
	}
	if (!scan->library_count)
		fputs("\nno NVIDIA library found\n", out);
	for (size_t i = 0; i < scan->library_count; i++) {
		const struct library *l = &scan->libraries[i];
		fprintf(out, "\n%s", color ? "\033[1m" : "");
		render_text_safe(out, l->name);
		fputs(color ? "\033[0m" : "", out);
		if (l->family >= 0)
			fprintf(out, " (%s)", libnames[l->family].family);
		fprintf(out, ": %zu %s", l->copy_count, l->copy_count == 1 ? "copy" : "copies");
		if (l->installations > 1)
			fprintf(out, " %sin %zu installations%s", color ? "\033[33m" : "", l->installations, color ? "\033[0m" : "");
		fputc('\n', out);
		for (size_t k = 0; k < l->copy_count; k++) {
			const struct copy *c = &scan->copies[l->copies[k]];
			char version[64];
			log_text_escape(version, sizeof(version), c->version ? c->version : "-");
			fprintf(out, "  %-12s ", version);
			render_text_safe(out, c->path);
			fputs(" [", out);
			found_in_list(out, c->found_in, false);
			fputc(']', out);
			if (strcmp(c->real_path, c->path) != 0) {
				fputs(" -> ", out);
				render_text_safe(out, c->real_path);
			}
			fputc('\n', out);
		}
	}
	fputs("\nEach NVIDIA library resolved as if loaded by path here:\n", out);
	if (!scan->finding_count)
		fputs("  every dependency comes from the library's own installation, and every required one is found\n", out);
	for (size_t i = 0; i < scan->finding_count; i++) {
		const struct finding *f = &scan->findings[i];
		fputs("  ", out);
		render_text_safe(out, f->text);
		if (f->hint) {
			fputs("\n    hint: ", out);
			render_text_safe(out, f->hint);
		}
		fputc('\n', out);
	}
	if (counted)
		fprintf(out, "%zu %s\n", counted, counted == 1 ? "finding" : "findings");
}

