/* The places an environment keeps NVIDIA libraries, in the order they are scanned. First the
   python's site-packages, where wheels put nvidia/PKG/lib (CUDA 12) or nvidia/cu13/lib (CUDA 13)
   and some packages bundle their own copies. Then CONDA_PREFIX, CUDA_HOME and CUDA_PATH (a
   toolkit's lib64, its targets, nvvm and CUPTI folders), every LD_LIBRARY_PATH folder, and
   ld.so.cache's entries. A file reached from several places, or under several names, is one copy. */
#define _GNU_SOURCE
#include "scan_model.h"

#include "libnames.h"
#include "loader/ld_cache.h"
#include "mixed_origin.h"
#include "platform.h"
#include "python_paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* site-packages/nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so.4 is four folders down. */
#define SITE_PACKAGES_DEPTH 4

const char *const place_names[PLACE_KINDS] = {
	[PLACE_SITE_PACKAGES] = "site-packages", [PLACE_CONDA] = "CONDA_PREFIX", [PLACE_CUDA_HOME] = "CUDA_HOME",
	[PLACE_CUDA_PATH] = "CUDA_PATH", [PLACE_LD_LIBRARY_PATH] = "LD_LIBRARY_PATH", [PLACE_CACHE] = "ld.so.cache",
};


static void add_place(struct scan *scan, enum place_kind kind, const char *folder, const char *note)
{
	struct place *place;
	if (!APPEND(scan->places, scan->place_count, place))
		return;
	*place = (struct place){ .kind = kind, .folder = folder ? strdup(folder) : NULL, .note = note ? strdup(note) : NULL };
}

/* ---- copies -------------------------------------------------------------------------------------- */

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

void scan_places(struct scan *scan)
{
	scan_site_packages(scan);
	scan_prefix(scan, PLACE_CONDA, "CONDA_PREFIX");
	scan_prefix(scan, PLACE_CUDA_HOME, "CUDA_HOME");
	scan_prefix(scan, PLACE_CUDA_PATH, "CUDA_PATH");
	scan_library_path(scan);
	scan_cache(scan);
}

void scan_free_places(struct scan *scan)
{
	for (size_t i = 0; i < scan->place_count; i++) {
		free(scan->places[i].folder);
		free(scan->places[i].note);
	}
	free(scan->places);
	for (size_t i = 0; i < scan->copy_count; i++) {
		struct copy *c = &scan->copies[i];
		free(c->path);
		free(c->real_path);
		for (size_t k = 0; k < c->name_count; k++)
			free(c->names[k]);
		free(c->names);
		free(c->version);
		free(c->version_from);
		free(c->installation);
	}
	free(scan->copies);
	for (size_t i = 0; i < scan->library_count; i++) {
		free(scan->libraries[i].name);
		free(scan->libraries[i].copies);
	}
	free(scan->libraries);
	string_map_clear(&scan->by_inode, NULL);
	string_map_clear(&scan->by_name, NULL);
	string_map_clear(&scan->records, free_records);
	free(scan->python_problem);
	free(scan->python_executable);
}
