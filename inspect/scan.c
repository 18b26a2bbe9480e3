/* The places an environment keeps NVIDIA libraries, in the order they are scanned: the python's
   site-packages (wheels: nvidia/PKG/lib for CUDA 12, nvidia/cu13/lib for CUDA 13, and packages that
   bundle their own copies), CONDA_PREFIX, CUDA_HOME and CUDA_PATH (a toolkit's lib64, its targets,
   nvvm and CUPTI folders), every LD_LIBRARY_PATH folder, and ld.so.cache's entries. A file reached
   from several places, or under several names, is one copy. */
#define _GNU_SOURCE
#include "scan.h"

#include "libnames.h"
#include "log.h"
#include "mixed_origin.h"
#include "nvinterpose.h"
#include "platform.h"
#include "python_paths.h"
#include "render.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_FINDINGS 1
#define EXIT_CUT 3
/* site-packages/nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so.4 is four folders down. */
#define SITE_PACKAGES_DEPTH 4

enum place_kind { PLACE_SITE_PACKAGES, PLACE_CONDA, PLACE_CUDA_HOME, PLACE_CUDA_PATH, PLACE_LD_LIBRARY_PATH, PLACE_CACHE, PLACE_KINDS };

static const char *const place_names[] = {
	[PLACE_SITE_PACKAGES] = "site-packages", [PLACE_CONDA] = "CONDA_PREFIX", [PLACE_CUDA_HOME] = "CUDA_HOME",
	[PLACE_CUDA_PATH] = "CUDA_PATH", [PLACE_LD_LIBRARY_PATH] = "LD_LIBRARY_PATH", [PLACE_CACHE] = "ld.so.cache",
};

struct place {
	enum place_kind kind;
	char *folder;  /* the folder scanned (the cache's file for PLACE_CACHE), or NULL when there is none */
	char *note;    /* why it was not scanned, or NULL */
	size_t copies; /* NVIDIA files found there */
};

struct copy {
	char *path;        /* as first found */
	char *real_path;
	char **names;      /* every path it was found as */
	size_t name_count;
	unsigned found_in; /* bit per place kind */
	char *version;     /* NULL when neither its file name nor a wheel's RECORD says */
	char *version_from;
	char *installation;
	const char *site_packages; /* the site-packages folder it lies in, or NULL */
	dev_t device;
	ino_t inode;
	size_t library;    /* index in scan->libraries */
};

struct library {
	char *name; /* its SONAME, else its file name */
	int family;
	size_t *copies;
	size_t copy_count;
	size_t installations;
};

enum finding_kind { FINDING_MIXED_ORIGIN, FINDING_MISSING, FINDING_CUT };

struct finding {
	enum finding_kind kind;
	char *library, *dependency, *got, *own;
	enum how how;
	bool run_time, required;
	char *text, *hint;
};

struct scan {
	const struct scan_request *request;
	char *python_executable;
	char *python_problem;
	struct place *places;
	size_t place_count;
	struct copy *copies;
	size_t copy_count;
	struct library *libraries;
	size_t library_count;
	struct string_map by_inode;   /* "dev:ino" -> copy index + 1 */
	struct string_map by_name;    /* library name -> library index + 1 */
	struct string_map records;    /* site-packages folder -> its RECORD map (path -> "version\tdist") */
	struct finding *findings;
	size_t finding_count;
	bool cut;
};

/* Room for one more element at the end of an array of count (a scan holds hundreds at most). */
static void *append(void *array, size_t *count, size_t size, void **element)
{
	char *grown = realloc(array, (*count + 1) * size);
	*element = grown ? grown + (*count)++ * size : NULL;
	return grown ? grown : array;
}

#define APPEND(array, count, element) ((array) = append((array), &(count), sizeof(*(array)), (void **)&(element)), (element))

static void add_place(struct scan *scan, enum place_kind kind, const char *folder, const char *note)
{
	struct place *place;
	if (!APPEND(scan->places, scan->place_count, place))
		return;
	*place = (struct place){ .kind = kind, .folder = folder ? strdup(folder) : NULL, .note = note ? strdup(note) : NULL };
}

/* ---- the python's site-packages ---------------------------------------------------------------- */

/* ---- copies -------------------------------------------------------------------------------------- */

static char *copy_of(const char *s) { return s ? strdup(s) : NULL; }

/* The folder of a path ("/" for a file at the root). */
static char *folder_part(const char *path)
{
	const char *base = libnames_basename(path);
	return strndup(path, base > path + 1 ? (size_t)(base - path - 1) : 1);
}

static bool has_name(const struct copy *copy, const char *path)
{
	for (size_t i = 0; i < copy->name_count; i++)
		if (strcmp(copy->names[i], path) == 0)
			return true;
	return false;
}

/* The NVIDIA files the wheels of one site-packages folder installed, from their RECORDs. */
struct records {
	struct string_map by_path; /* path relative to site-packages -> "version\tdist" */
	char **values;
	size_t value_count;
};

static void read_records(struct records *records, const char *site_packages)
{
	DIR *dir = opendir(site_packages);
	for (struct dirent *entry; dir && (entry = readdir(dir));) {
		size_t n = strlen(entry->d_name);
		char *dash = strchr(entry->d_name, '-');
		/* name-version.dist-info */
		if (n < 11 || strcmp(entry->d_name + n - 10, ".dist-info") != 0 || !dash)
			continue;
		char record_path[PATH_MAX], *value = NULL, **slot;
		snprintf(record_path, sizeof(record_path), "%s/%s/RECORD", site_packages, entry->d_name);
		FILE *f = fopen(record_path, "re");
		if (!f)
			continue;
		if (asprintf(&value, "%.*s\t%.*s", (int)(n - 10 - (size_t)(dash + 1 - entry->d_name)), dash + 1,
			     (int)(dash - entry->d_name), entry->d_name) < 0 ||
		    !APPEND(records->values, records->value_count, slot)) {
			free(value);
			fclose(f);
			continue;
		}
		*slot = value;
		char line[PATH_MAX + 256];
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, ",\n")] = '\0';
			if (libnames_match_linux(libnames_basename(line), NULL) >= 0 && !string_map_get(&records->by_path, line))
				string_map_put(&records->by_path, line, value);
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
}

static void free_records(void *value)
{
	struct records *records = value;
	string_map_clear(&records->by_path, NULL);
	for (size_t i = 0; i < records->value_count; i++)
		free(records->values[i]);
	free(records->values);
	free(records);
}

/* The version a wheel's RECORD gives path (under site_packages), and the wheel's name. */
static const char *record_version(struct scan *scan, const char *site_packages, const char *path, const char **dist)
{
	struct records *records = string_map_get(&scan->records, site_packages);
	if (!records) {
		if (!(records = calloc(1, sizeof(*records))) || !string_map_put(&scan->records, site_packages, records)) {
			free(records);
			return NULL;
		}
		read_records(records, site_packages);
	}
	size_t n = strlen(site_packages);
	if (strncmp(path, site_packages, n) != 0 || path[n] != '/')
		return NULL;
	const char *value = string_map_get(&records->by_path, path + n + 1);
	if (!value)
		return NULL;
	*dist = strchr(value, '\t') + 1;
	return value;
}

static void set_version(struct scan *scan, struct copy *copy, const char *library_name)
{
	struct libname_match own, real;
	/* The real file's name says more than its SONAME: libcudart.so.13.0.96 for libcudart.so.13. */
	if (libnames_match_linux(libnames_basename(library_name), &own) >= 0 &&
	    libnames_match_linux(libnames_basename(copy->real_path), &real) >= 0 && strlen(real.version) > strlen(own.version)) {
		copy->version = strdup(real.version);
		copy->version_from = strdup("file name");
		return;
	}
	const char *dist = NULL;
	const char *version = copy->site_packages ? record_version(scan, copy->site_packages, copy->path, &dist) : NULL;
	if (version) {
		copy->version = strndup(version, strcspn(version, "\t"));
		if (asprintf(&copy->version_from, "%s RECORD", dist) < 0)
			copy->version_from = NULL;
	}
}

static void add_copy(struct scan *scan, const char *path, enum place_kind kind, const char *site_packages, struct place *place)
{
	const struct probed_file *file = file_probe_path(scan->request->resolver->probe, path);
	struct stat st;
	/* Only what the loader would take: a shared object of this process's kind. */
	if (!file || file->result != PROBE_FOUND || !file->facts || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	char key[48];
	snprintf(key, sizeof(key), "%llx:%llx", (unsigned long long)file->device, (unsigned long long)file->inode);
	size_t index = (size_t)string_map_get(&scan->by_inode, key);
	struct copy *copy;
	if (index) {
		copy = &scan->copies[index - 1];
		if (!has_name(copy, path)) {
			char **grown = realloc(copy->names, (copy->name_count + 1) * sizeof(char *));
			if (grown && (grown[copy->name_count] = strdup(path)))
				copy->name_count++;
			if (grown)
				copy->names = grown;
			/* Shown by the name the loader asks for (libcublas.so.13, not the link libcublas.so). */
			const char *library = scan->libraries[copy->library].name;
			if (strcmp(libnames_basename(path), library) == 0 && strcmp(libnames_basename(copy->path), library) != 0) {
				free(copy->path);
				copy->path = strdup(path);
			}
		}
		if (!(copy->found_in & (1u << kind)))
			place->copies++;
		copy->found_in |= 1u << kind;
		return;
	}
	const char *name = file->facts->soname ? file->facts->soname : libnames_basename(path);
	size_t library = (size_t)string_map_get(&scan->by_name, name);
	if (!library) {
		struct library *added;
		if (!APPEND(scan->libraries, scan->library_count, added))
			return;
		*added = (struct library){ .name = strdup(name), .family = libnames_match_linux(libnames_basename(name), NULL) };
		if (added->family < 0) /* a file named like an NVIDIA library with a foreign SONAME */
			added->family = libnames_match_linux(libnames_basename(path), NULL);
		string_map_put(&scan->by_name, name, (void *)scan->library_count);
		library = scan->library_count;
	}
	if (!APPEND(scan->copies, scan->copy_count, copy))
		return;
	char *folder = folder_part(path);
	*copy = (struct copy){
		.path = strdup(path),
		.real_path = realpath(path, NULL),
		.found_in = 1u << kind,
		.installation = folder ? mixed_origin_installation(folder) : NULL,
		.site_packages = site_packages,
		.device = file->device,
		.inode = file->inode,
		.library = library - 1,
	};
	free(folder);
	if (!copy->real_path)
		copy->real_path = strdup(path);
	if (!copy->installation)
		copy->installation = strdup(path);
	copy->names = malloc(sizeof(char *));
	if (copy->names && (copy->names[0] = strdup(path)))
		copy->name_count = 1;
	set_version(scan, copy, name);
	string_map_put(&scan->by_inode, key, (void *)scan->copy_count);
	struct library *l = &scan->libraries[library - 1];
	size_t *grown = realloc(l->copies, (l->copy_count + 1) * sizeof(size_t));
	if (grown) {
		l->copies = grown;
		l->copies[l->copy_count++] = scan->copy_count - 1;
	}
	place->copies++;
}

static bool skipped_folder(const char *name)
{
	size_t n = strlen(name);
	return name[0] == '.' || strcmp(name, "__pycache__") == 0 || (n > 10 && strcmp(name + n - 10, ".dist-info") == 0) ||
	       (n > 9 && strcmp(name + n - 9, ".egg-info") == 0);
}

/* The NVIDIA files of folder and, depth folders down, of its subfolders (links to folders are not
   followed: a loop must not hold the scan). */
static void scan_folder(struct scan *scan, const char *folder, int depth, enum place_kind kind, const char *site_packages,
			struct place *place)
{
	char **names = NULL;
	int n = platform_list_folder(folder, &names);
	/* In byte order, whatever the locale: the folder's own copies, then its subfolders'. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++) {
			char path[PATH_MAX];
			bool nvidia = libnames_match_linux(names[i], NULL) >= 0;
			struct stat st;
			if (snprintf(path, sizeof(path), "%s/%s", strcmp(folder, "/") ? folder : "", names[i]) >= (int)sizeof(path))
				continue;
			if (pass == 0 && nvidia)
				add_copy(scan, path, kind, site_packages, place);
			else if (pass == 1 && !nvidia && depth > 0 && !skipped_folder(names[i]) && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
				scan_folder(scan, path, depth - 1, kind, site_packages, place);
		}
	platform_free_names(names, n);
}

static bool is_folder(const char *path)
{
	struct stat st;
	return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void scan_place(struct scan *scan, enum place_kind kind, const char *folder, int depth)
{
	add_place(scan, kind, folder, NULL);
	struct place *place = &scan->places[scan->place_count - 1];
	scan_folder(scan, folder, depth, kind, kind == PLACE_SITE_PACKAGES ? place->folder : NULL, place);
}

/* A toolkit or conda prefix: its library folders, those that exist. */
static void scan_prefix(struct scan *scan, enum place_kind kind, const char *variable)
{
	const char *prefix = getenv(variable);
	if (!prefix || !prefix[0]) {
		add_place(scan, kind, NULL, "not set");
		return;
	}
	if (!is_folder(prefix)) {
		add_place(scan, kind, prefix, "not a folder");
		return;
	}
	static const char *const subfolders[] = { "lib64", "lib", "nvvm/lib64", "extras/CUPTI/lib64" };
	bool any = false;
	for (size_t i = 0; i < sizeof(subfolders) / sizeof(subfolders[0]); i++) {
		char folder[PATH_MAX];
		snprintf(folder, sizeof(folder), "%s/%s", prefix, subfolders[i]);
		if (is_folder(folder)) {
			scan_place(scan, kind, folder, 0);
			any = true;
		}
	}
	/* targets/<triple>/lib: the toolkit's own layout, which lib64 often links to. */
	char targets[PATH_MAX];
	snprintf(targets, sizeof(targets), "%s/targets", prefix);
	char **names = NULL;
	int n = platform_list_folder(targets, &names);
	for (int i = 0; i < n; i++) {
		char folder[PATH_MAX];
		if (names[i][0] == '.' || snprintf(folder, sizeof(folder), "%s/%s/lib", targets, names[i]) >= (int)sizeof(folder))
			continue;
		if (is_folder(folder)) {
			scan_place(scan, kind, folder, 0);
			any = true;
		}
	}
	platform_free_names(names, n);
	if (!any)
		add_place(scan, kind, prefix, "no library folder (lib64, lib, targets/*/lib)");
}

static void scan_site_packages(struct scan *scan)
{
	const char *pythons[] = { scan->request->python ? scan->request->python : "python3", scan->request->python ? NULL : "python" };
	char *output = NULL, *problem = NULL;
	for (size_t i = 0; i < 2 && pythons[i] && !output; i++) {
		free(problem);
		problem = NULL;
		output = python_paths_ask(pythons[i], scan->request->python_timeout_s, &problem);
	}
	if (!output) {
		scan->python_problem = problem ? problem : strdup("no python");
		add_place(scan, PLACE_SITE_PACKAGES, NULL, scan->python_problem);
		return;
	}
	free(problem);
	char *saveptr = NULL;
	char **seen = NULL;
	size_t seen_count = 0;
	for (char *line = strtok_r(output, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
		if (!scan->python_executable) {
			scan->python_executable = strdup(line);
			continue;
		}
		char *real = realpath(line, NULL);
		bool again = !real;
		for (size_t k = 0; real && k < seen_count && !again; k++)
			again = strcmp(seen[k], real) == 0;
		if (!again) {
			char **grown = realloc(seen, (seen_count + 1) * sizeof(char *));
			if (grown) {
				seen = grown;
				seen[seen_count++] = real;
				real = NULL;
				scan_place(scan, PLACE_SITE_PACKAGES, line, SITE_PACKAGES_DEPTH);
			}
		}
		free(real);
	}
	for (size_t k = 0; k < seen_count; k++)
		free(seen[k]);
	free(seen);
	free(output);
}

static void scan_library_path(struct scan *scan)
{
	struct loader_host *host = scan->request->resolver->host;
	char **folders = NULL;
	int count = host->library_path ? loader_host_expand(host, host->library_path, ":;", NULL, &folders) : 0;
	if (count <= 0)
		add_place(scan, PLACE_LD_LIBRARY_PATH, NULL, host->library_path ? "no folder" : "not set");
	for (int i = 0; i < count; i++)
		if (is_folder(folders[i][0] ? folders[i] : "."))
			scan_place(scan, PLACE_LD_LIBRARY_PATH, folders[i][0] ? folders[i] : ".", 0);
	loader_host_free_dirs(folders, count > 0 ? (size_t)count : 0);
}

static void scan_cache(struct scan *scan)
{
	const struct resolver *r = scan->request->resolver;
	if (!r->cache) {
		add_place(scan, PLACE_CACHE, NULL, scan->request->cache_problem ? scan->request->cache_problem : "--cache none");
		return;
	}
	add_place(scan, PLACE_CACHE, r->cache_path, NULL);
	struct place *place = &scan->places[scan->place_count - 1];
	const struct family_names *names = family_files_in_cache(r->family_files);
	for (size_t i = 0; names && i < names->count; i++) {
		struct ld_cache_entry entries[16];
		size_t n = ld_cache_lookup(r->cache, names->names[i], entries, sizeof(entries) / sizeof(entries[0]));
		for (size_t k = 0; k < n && k < sizeof(entries) / sizeof(entries[0]); k++)
			add_copy(scan, entries[k].path, PLACE_CACHE, NULL, place);
	}
}

/* ---- the mix each copy would load ------------------------------------------------------------------ */

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

/* Where a copy of family lies in this environment, other than in folder; NULL when nowhere. */
static const struct copy *other_copy(const struct scan *scan, int family, bool alt)
{
	for (size_t i = 0; i < scan->copy_count; i++) {
		const struct library *l = &scan->libraries[scan->copies[i].library];
		struct libname_match match;
		if (l->family == family && libnames_match_linux(libnames_basename(l->name), &match) >= 0 && match.alt == alt)
			return &scan->copies[i];
	}
	return NULL;
}

static char *missing_hint(const struct scan *scan, const struct object *asker, const struct dependency *d)
{
	char *hint = NULL;
	enum how how;
	char *runtime = d->family >= 0 ? what_if_candidate(scan->request->resolver->probe, d->name, asker->origin, false, &how, NULL) : NULL;
	struct libname_match match = { 0 };
	libnames_match_linux(libnames_basename(d->name), &match);
	const struct copy *elsewhere = d->family >= 0 ? other_copy(scan, d->family, match.alt) : NULL;
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

/* ---- the report -------------------------------------------------------------------------------------- */

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

static void write_json(const struct scan *scan, FILE *out, size_t counted, int status)
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
static void write_text(const struct scan *scan, FILE *out, size_t counted)
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

int scan_run(const struct scan_request *request, FILE *out)
{
	struct scan scan = { .request = request };
	scan_site_packages(&scan);
	scan_prefix(&scan, PLACE_CONDA, "CONDA_PREFIX");
	scan_prefix(&scan, PLACE_CUDA_HOME, "CUDA_HOME");
	scan_prefix(&scan, PLACE_CUDA_PATH, "CUDA_PATH");
	scan_library_path(&scan);
	scan_cache(&scan);

	/* Sorted by name; the copies keep their library's index, so it is remapped. */
	struct library *sorted = malloc((scan.library_count + 1) * sizeof(*sorted));
	if (sorted) {
		memcpy(sorted, scan.libraries, scan.library_count * sizeof(*sorted));
		qsort(sorted, scan.library_count, sizeof(*sorted), compare_libraries);
		for (size_t i = 0; i < scan.library_count; i++)
			for (size_t k = 0; k < sorted[i].copy_count; k++)
				scan.copies[sorted[i].copies[k]].library = i;
		free(scan.libraries);
		scan.libraries = sorted;
		sorted = NULL;
	}
	free(sorted);
	count_installations(&scan);

	/* A run-time dependent is named from the copies found anywhere here, not only where its asker
	   looks: a missing one is then named as the file its asker would want. */
	struct family_names known = { 0 };
	known.names = calloc(scan.library_count + 1, sizeof(char *));
	known.families = calloc(scan.library_count + 1, sizeof(int));
	for (size_t i = 0; known.names && known.families && i < scan.library_count; i++) {
		known.names[known.count] = scan.libraries[i].name;
		known.families[known.count++] = scan.libraries[i].family;
	}
	request->resolver->known_names = &known;
	for (size_t i = 0; i < scan.library_count; i++) {
		const struct library *l = &scan.libraries[i];
		if (l->family < 0 || libnames_is_driver(l->family))
			continue;
		for (size_t k = 0; k < l->copy_count; k++)
			predict(&scan, &scan.copies[l->copies[k]]);
	}
	request->resolver->known_names = NULL;
	free(known.names);
	free(known.families);
	size_t counted = 0;
	for (size_t i = 0; i < scan.finding_count; i++)
		counted += scan.findings[i].kind != FINDING_CUT && (scan.findings[i].kind != FINDING_MISSING || scan.findings[i].required);
	int status = counted ? EXIT_FINDINGS : scan.cut ? EXIT_CUT : 0;
	if (request->json)
		write_json(&scan, out, counted, status);
	else
		write_text(&scan, out, counted);

	for (size_t i = 0; i < scan.place_count; i++) {
		free(scan.places[i].folder);
		free(scan.places[i].note);
	}
	free(scan.places);
	for (size_t i = 0; i < scan.copy_count; i++) {
		struct copy *c = &scan.copies[i];
		free(c->path);
		free(c->real_path);
		for (size_t k = 0; k < c->name_count; k++)
			free(c->names[k]);
		free(c->names);
		free(c->version);
		free(c->version_from);
		free(c->installation);
	}
	free(scan.copies);
	for (size_t i = 0; i < scan.library_count; i++) {
		free(scan.libraries[i].name);
		free(scan.libraries[i].copies);
	}
	free(scan.libraries);
	for (size_t i = 0; i < scan.finding_count; i++) {
		struct finding *f = &scan.findings[i];
		free(f->library);
		free(f->dependency);
		free(f->got);
		free(f->own);
		free(f->text);
		free(f->hint);
	}
	free(scan.findings);
	string_map_clear(&scan.by_inode, NULL);
	string_map_clear(&scan.by_name, NULL);
	string_map_clear(&scan.records, free_records);
	free(scan.python_problem);
	free(scan.python_executable);
	return status;
}
