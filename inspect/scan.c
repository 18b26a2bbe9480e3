/* nvinterpose-inspect --scan (scan.h): the places are scanned (scan_places.c), each copy found is
   resolved as if loaded by path here, and what it would mix or miss is a finding with a hint; then
   the report (scan_render.c). */
#define _GNU_SOURCE
#include "scan_model.h"

#include "exit_status.h"
#include "libnames.h"
#include "mixed_origin.h"
#include "render.h"

#include <stdlib.h>
#include <string.h>

static void add_finding(struct scan *scan, const struct finding *finding)
{
	for (size_t i = 0; i < scan->finding_count; i++)
		if (strcmp(scan->findings[i].text, finding->text) == 0)
			return;
	struct finding *added;
	if (!APPEND(scan->findings, scan->finding_count, added))
		return;
	*added = *finding;
	added->library = copy_of(finding->library);
	added->dependency = copy_of(finding->dependency);
	added->got = copy_of(finding->got);
	added->own = copy_of(finding->own);
	added->text = copy_of(finding->text);
	added->hint = copy_of(finding->hint);
}

static char *mix_hint(const struct warning *w)
{
	char *hint = NULL;
	char *got_folder = folder_part(w->got);
	int n;
	if (!w->own)
		n = asprintf(&hint, "its own installation holds no %s: install the matching component beside it, or make sure %s is of the "
				    "same release", w->dependency, w->got);
	else if (w->how == HOW_LD_LIBRARY_PATH)
		n = asprintf(&hint, "LD_LIBRARY_PATH names %s before the library's own folder: drop it there, or run under nvinterpose with "
				    "the coherent policy (nvinterpose-run --policy=coherent), which takes %s", got_folder, w->own);
	else if (w->how == HOW_CACHE || w->how == HOW_DEFAULT)
		n = asprintf(&hint, "the loader takes %s from %s, as nothing before it holds the name: run under nvinterpose with the coherent "
				    "policy (nvinterpose-run --policy=coherent), which takes %s", w->got,
			     w->how == HOW_CACHE ? "ld.so.cache" : "the system folders", w->own);
	else if (w->how == HOW_ALREADY_LOADED)
		n = asprintf(&hint, "%s is loaded first from %s and reused by its SONAME: load the library's own copy %s first", w->dependency,
			     got_folder, w->own);
	else
		n = asprintf(&hint, "a search path of the library's own (%s) names %s: run under nvinterpose with the coherent policy "
				    "(nvinterpose-run --policy=coherent), which takes %s", how_name(w->how), got_folder, w->own);
	free(got_folder);
	return n >= 0 ? hint : NULL;
}

/* True when versions a and b have one major (their first component); an unversioned name asks
   for none. */
static bool same_major(const char *asked, const char *copy)
{
	size_t major = strcspn(asked, ".");
	return !major || (strncmp(asked, copy, major) == 0 && (copy[major] == '.' || copy[major] == '\0'));
}

/* Where a copy of the library asked for (its family, .alt-ness and major) lies in this
   environment; NULL when nowhere. A copy of another major is no answer: cuFFT 10 of CUDA 11 is not
   helped by CUDA 13's nvJitLink. */
static const struct copy *other_copy(const struct scan *scan, int family, const struct libname_match *asked)
{
	for (size_t i = 0; i < scan->copy_count; i++) {
		const struct library *l = &scan->libraries[scan->copies[i].library];
		struct libname_match match;
		if (l->family == family && libnames_match_linux(libnames_basename(l->name), &match) >= 0 && match.alt == asked->alt &&
		    same_major(asked->version, match.version))
			return &scan->copies[i];
	}
	return NULL;
}

static char *missing_hint(const struct scan *scan, const struct object *asker, const struct dependency *d)
{
	char *hint = NULL;
	enum how how;
	char *runtime = d->family >= 0 ? what_if_candidate(scan->request->resolver->probe, d->name, asker->origin, false, &how, NULL) : NULL;
	struct libname_match match = { .version = "" };
	libnames_match_linux(libnames_basename(d->name), &match);
	const struct copy *elsewhere = d->family >= 0 ? other_copy(scan, d->family, &match) : NULL;
	int n;
	if (runtime)
		n = asprintf(&hint, "run under nvinterpose (nvinterpose-run): it finds %s (%s)", runtime, how_name(how));
	else if (elsewhere) {
		char *folder = folder_part(elsewhere->path);
		n = asprintf(&hint, "a copy of %s lies in %s: run under nvinterpose with NVINTERPOSE_PATH=%s (nvinterpose-run --path=%s), or "
				    "install it beside %s", libnames[d->family].family, folder, folder, folder, asker->path);
		free(folder);
	} else {
		n = asprintf(&hint, "no copy of %s in this environment: install it beside %s", d->family >= 0 ? libnames[d->family].family : d->name,
			     asker->path);
	}
	free(runtime);
	return n >= 0 ? hint : NULL;
}

static void predict(struct scan *scan, const struct copy *copy)
{
	const struct resolver *r = scan->request->resolver;
	struct tree tree;
	char message[4096];
	if (resolve_tree(r, copy->path, &tree, message, sizeof(message)) != 0) {
		tree_free(&tree);
		return;
	}
	mixed_origin_check(&tree, r->probe);
	for (size_t i = 0; i < tree.warning_count; i++) {
		const struct warning *w = &tree.warnings[i];
		if (w->kind == WARNING_LOADER)
			continue;
		struct finding finding = {
			.kind = w->kind == WARNING_CUT ? FINDING_CUT : FINDING_MIXED_ORIGIN,
			.library = w->kind == WARNING_CUT ? copy->path : w->library,
			.dependency = w->dependency,
			.got = w->got,
			.own = w->own,
			.how = w->how,
			.run_time = w->run_time,
			.text = w->text,
		};
		if (w->kind == WARNING_CUT)
			scan->cut = true;
		else
			finding.hint = mix_hint(w);
		add_finding(scan, &finding);
		free(finding.hint);
	}
	for (size_t i = 0; i < tree.object_count; i++) {
		const struct object *o = tree.objects[i];
		for (size_t k = 0; k < object_entry_count(o); k++) {
			const struct dependency *d = object_entry(o, k);
			if (d->object || d->not_followed)
				continue;
			struct finding finding = { .kind = FINDING_MISSING, .library = o->path, .dependency = d->name, .how = d->how,
						   .run_time = d->run_time, .required = !d->run_time || d->required };
			if (asprintf(&finding.text, "missing: %s needs %s%s, which the loader does not find", o->path, d->name,
				     d->run_time ? d->required ? " at run time (required)" : " at run time (optional)" : "") < 0)
				continue;
			finding.hint = missing_hint(scan, o, d);
			add_finding(scan, &finding);
			free(finding.text);
			free(finding.hint);
		}
	}
	tree_free(&tree);
}

static int compare_libraries(const void *a, const void *b)
{
	return strcmp(((const struct library *)a)->name, ((const struct library *)b)->name);
}

static void count_installations(struct scan *scan)
{
	for (size_t i = 0; i < scan->library_count; i++) {
		struct library *l = &scan->libraries[i];
		l->installations = 0;
		for (size_t k = 0; k < l->copy_count; k++) {
			bool again = false;
			for (size_t j = 0; j < k && !again; j++)
				again = strcmp(scan->copies[l->copies[j]].installation, scan->copies[l->copies[k]].installation) == 0;
			l->installations += !again;
		}
	}
}

/* Each copy of an NVIDIA library resolved as if loaded by path here. A run-time dependent is named
   from the copies found anywhere here, not only where its asker looks: a missing one is then named
   as the file its asker would want. */
static void predict_all(struct scan *scan)
{
	const struct scan_request *request = scan->request;
	struct family_names known = { 0 };
	known.names = calloc(scan->library_count + 1, sizeof(char *));
	known.families = calloc(scan->library_count + 1, sizeof(int));
	for (size_t i = 0; known.names && known.families && i < scan->library_count; i++) {
		known.names[known.count] = scan->libraries[i].name;
		known.families[known.count++] = scan->libraries[i].family;
	}
	request->resolver->known_names = &known;
	for (size_t i = 0; i < scan->library_count; i++) {
		const struct library *l = &scan->libraries[i];
		if (l->family < 0 || libnames_is_driver(l->family))
			continue;
		for (size_t k = 0; k < l->copy_count; k++)
			predict(scan, &scan->copies[l->copies[k]]);
	}
	request->resolver->known_names = NULL;
	free(known.names);
	free(known.families);
}

/* The libraries sorted by name; the copies keep their library's index, so it is remapped. */
static void sort_libraries(struct scan *scan)
{
	if (scan->library_count == 0)
		return;
	struct library *sorted = malloc(scan->library_count * sizeof(*sorted));
	if (!sorted)
		return;
	memcpy(sorted, scan->libraries, scan->library_count * sizeof(*sorted));
	qsort(sorted, scan->library_count, sizeof(*sorted), compare_libraries);
	for (size_t i = 0; i < scan->library_count; i++)
		for (size_t k = 0; k < sorted[i].copy_count; k++)
			scan->copies[sorted[i].copies[k]].library = i;
	free(scan->libraries);
	scan->libraries = sorted;
}

static void free_findings(struct scan *scan)
{
	for (size_t i = 0; i < scan->finding_count; i++) {
		struct finding *f = &scan->findings[i];
		free(f->library);
		free(f->dependency);
		free(f->got);
		free(f->own);
		free(f->text);
		free(f->hint);
	}
	free(scan->findings);
}

int scan_run(const struct scan_request *request, FILE *out)
{
	struct scan scan = { .request = request };
	scan_places(&scan);
	sort_libraries(&scan);
	count_installations(&scan);
	predict_all(&scan);
	size_t counted = 0;
	for (size_t i = 0; i < scan.finding_count; i++)
		counted += scan.findings[i].kind != FINDING_CUT && (scan.findings[i].kind != FINDING_MISSING || scan.findings[i].required);
	int status = counted ? EXIT_FINDINGS : scan.cut ? EXIT_CUT : 0;
	if (request->json)
		scan_write_json(&scan, out, counted, status);
	else
		scan_write_text(&scan, out, counted);
	free_findings(&scan);
	scan_free_places(&scan);
	return status;
}
