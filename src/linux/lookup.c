/* Deciding what the runtime loads for an NVIDIA library.
 *
 * A bare name: the loader's own search for the caller decides first, as the loader lists it for a
 * loaded object (dlinfo RTLD_DI_SERINFO); when the file is there the loader gets the call untouched.
 * Otherwise the runtime's first candidate (a registered origin, a wheel sibling, NVINTERPOSE_PATH)
 * is the plan, after the loader has been asked by name for its ld.so.cache, which no list shows.
 *
 * DT_NEEDED: before an NVIDIA library is loaded by path, each NVIDIA name it needs is looked for
 * where the loader will look for it on behalf of an object that dlopen maps (src/loader): the
 * library's RPATH unless it has a RUNPATH, the program's RPATH, LD_LIBRARY_PATH, the library's
 * RUNPATH, ld.so.cache, the system folders; never the dlopen caller's lists. The ones found nowhere
 * but in the runtime's places go into the plan, leaves first.
 *
 * Under coherent, the asker's own folder and its wheel siblings come before the loader's choice. */
#define _GNU_SOURCE
#include "lookup.h"

#include "config.h"
#include "libnames.h"
#include "loaded.h"
#include "loader/dst.h"
#include "loader/ld_cache.h"
#include "loader/machine.h"
#include "log.h"
#include "platform.h"
#include "real.h"
#include "report.h"
#include "start.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define NEEDED_MAX_DEPTH 8

/* A search list the loader gave (dlinfo RTLD_DI_SERINFO): its RPATH chain, LD_LIBRARY_PATH, its
   RUNPATH and the system folders, with every token expanded; not ld.so.cache, nor the glibc-hwcaps
   subfolders, which the real loader tries itself. Sized to what it holds: a long LD_LIBRARY_PATH
   must not turn the runtime off or cut the list (the loader's own search would then be predicted
   wrong). */
struct listed {
	struct loader_list list;
	Dl_serinfo *info; /* what list points into */
};

static void free_listed(struct listed *listed)
{
	if (!listed)
		return;
	free((void *)listed->list.dirs);
	free(listed->info);
	free(listed);
}

static struct listed *read_listed(struct link_map *object)
{
	Dl_serinfo size;
	struct listed *listed = calloc(1, sizeof(*listed));
	if (!listed || dlinfo(object, RTLD_DI_SERINFOSIZE, &size) != 0)
		goto fail;
	/* An empty list (an object with NODEFLIB and no list of its own, no LD_LIBRARY_PATH) has a
	   size smaller than Dl_serinfo itself, which declares one entry. */
	Dl_serinfo *info = malloc(size.dls_size > sizeof(Dl_serinfo) ? size.dls_size : sizeof(Dl_serinfo));
	const char **dirs = calloc(size.dls_cnt ? size.dls_cnt : 1, sizeof(*dirs));
	listed->info = info;
	listed->list.dirs = dirs;
	if (!info || !dirs)
		goto fail;
	info->dls_size = size.dls_size;
	info->dls_cnt = size.dls_cnt;
	if (dlinfo(object, RTLD_DI_SERINFO, info) != 0)
		goto fail;
	for (unsigned i = 0; i < info->dls_cnt && i < size.dls_cnt; i++)
		dirs[listed->list.count++] = info->dls_serpath[i].dls_name;
	return listed;
fail:
	free_listed(listed);
	return NULL;
}

/* The loader's facts this process can learn: $PLATFORM and $LIB from the runtime's own search list
   (its RUNPATH starts with LOADER_PROBE_PATH, which the loader lists expanded), and whether this glibc may
   search legacy hwcap subfolders (before 2.37, as the running libc's version says). */
static struct loader_machine machine;
static pthread_once_t machine_once = PTHREAD_ONCE_INIT;

/* ld.so run as a command (the kernel then maps no interpreter: AT_BASE is 0) with --inhibit-cache
   among its options, which /proc/self/cmdline still holds ahead of the program's own arguments. */
static bool started_with_inhibit_cache(void)
{
	char text[4096];
	if (getauxval(AT_BASE) != 0)
		return false;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	/* The loader's options come before the program; those that take a value skip it. */
	static const char *const with_value[] = { "--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0",
						  "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask" };
	for (const char *arg = text + strlen(text) + 1; arg < text + n && strncmp(arg, "--", 2) == 0; arg += strlen(arg) + 1) {
		if (strcmp(arg, "--inhibit-cache") == 0)
			return true;
		for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
			if (strcmp(arg, with_value[i]) == 0 && arg + strlen(arg) + 1 < text + n)
				arg += strlen(arg) + 1;
	}
	return false;
}

static void learn_machine(void)
{
	struct listed *own = read_listed(lookup_object_at((const void *)learn_machine));
	for (size_t i = 0; own && i < own->list.count; i++)
		if (loader_machine_from_element(own->list.dirs[i], &machine))
			break;
	free_listed(own);
	machine.legacy_possible = !start_glibc_at_least(2, 37);
	machine.cache_inhibited = started_with_inhibit_cache();
}

static const struct loader_machine *this_machine(void)
{
	pthread_once(&machine_once, learn_machine);
	return &machine;
}

struct link_map *lookup_object_at(const void *address)
{
	Dl_info info;
	struct link_map *object = NULL;
	if (address && dladdr1(address, &info, (void **)&object, RTLD_DL_LINKMAP) && object)
		return object;
	return _r_debug.r_map;
}

/* Where the runtime cannot tell whether the loader finds a name, it leaves it to the loader; at
   debug level it says so, since a failure that follows is then not the runtime's choice. */
static void report_unknown(const char *name, const char *asker, const char *why)
{
	log_message(LOG_DEBUG, "%s for %s: unknown whether the loader finds it (%s); left to the loader", name, asker, why);
}

/* What one walk of the candidates found. */
struct finding {
	bool loader_finds;
	char loader_path[PATH_MAX]; /* the loader's first hit, when loader_finds */
	enum search_step step;
	char candidate[PATH_MAX];   /* the runtime's first, or "" */
	struct dynamic_file_identity identity; /* the candidate as it was checked */
	/* For a DT_NEEDED name: the SONAME a candidate of the runtime's must have. The loader takes
	   a loaded object for a DT_NEEDED name by its SONAME (or a name it was loaded under, which for
	   the runtime's loads is a path): a copy without it would be loaded for nothing. */
	const char *soname;
};

/* A finding before its walk (its two paths are not zeroed whole: a walk runs on every miss). */
static void clear_finding(struct finding *finding, const char *soname)
{
	finding->loader_finds = false;
	finding->loader_path[0] = '\0';
	finding->step = 0;
	finding->candidate[0] = '\0';
	finding->soname = soname;
}

/* A copy in one of the runtime's own places is loaded only when the loader can map it whole: a
   shared object of this process's kind whose load segments lie inside the file, with what the
   loader reads in memory inside them (dynamic_file.whole). A copy cut short by an interrupted
   install would be mapped past its end: a SIGBUS in the host where the loader alone fails
   cleanly. For a DT_NEEDED name it must also have that SONAME. The file is read once, here, for
   every way in and every policy; its identity is kept for the check before the load. */
static bool usable_candidate(const char *path, struct finding *finding)
{
	struct dynamic_file *file = malloc(sizeof(*file));
	int read = file ? dynamic_read_file(path, file) : -ENOMEM;
	bool usable = false;
	if (read != 0 || !dynamic_file_is_compatible(file))
		log_message(LOG_INFO, "%s is not a shared object this process can load; skipped", path);
	else if (!file->whole)
		log_message(LOG_INFO, "%s is cut short or damaged (a part the loader maps lies outside the file); skipped", path);
	else if (finding->soname && (!file->soname || strcmp(file->soname, finding->soname) != 0))
		log_message(LOG_INFO, "%s does not have the SONAME %s, so the loader would not take it for that name; skipped", path,
			    finding->soname);
	else
		usable = true;
	if (usable)
		finding->identity = file->identity;
	free(file);
	return usable;
}

static bool consider_candidate(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	struct finding *finding = arg;
	(void)loader_step;
	if (!path) { /* the loader may find it where the runtime cannot look: it has the call */
		finding->loader_finds = true;
		finding->loader_path[0] = '\0';
		return true;
	}
	if (step == SEARCH_LOADER) {
		/* The loader takes any file whose header it accepts (glibc's open_verify), whole or not. */
		if (!dynamic_file_is_loadable(path))
			return false;
		finding->loader_finds = true;
		strcpy(finding->loader_path, path);
		return true;
	}
	if (!usable_candidate(path, finding))
		return false;
	finding->step = step;
	strcpy(finding->candidate, path);
	return true;
}

/* ---- misses ----------------------------------------------------------------------------------- */

/* The loader's own answer for a name from the runtime's frame, without loading it: RTLD_NOLOAD
   still searches (LD_LIBRARY_PATH, ld.so.cache and its glibc-hwcaps entries, the system folders),
   and for a file it finds returns NULL with no error; one it finds nowhere leaves an error. */
static bool loader_finds_by_name(const char *name)
{
	dlerror();
	void *handle = real_dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	if (handle) {
		dlclose(handle);
		return true;
	}
	return dlerror() == NULL;
}

#define LOOKED_MAX 256

/* The folders a walk tried, for a miss's "looked". */
struct looked {
	struct finding finding; /* what the walk found: nothing, for a miss */
	size_t count;
	struct log_looked places[LOOKED_MAX];
};

static bool find_nothing(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	struct looked *looked = arg;
	return consider_candidate(path, step, loader_step, &looked->finding);
}

/* An element of the runtime's own RUNPATH: the probe, or the folder that keeps it listed. */
static bool runtime_runpath_element(const char *folder)
{
	struct loader_machine probe;
	return strcmp(folder, LOADER_PROBE_KEEPER) == 0 || loader_machine_from_element(folder, &probe);
}

static void add_looked(const char *folder, enum search_step step, enum loader_step loader_step, void *arg)
{
	struct looked *looked = arg;
	if (folder && runtime_runpath_element(folder))
		return; /* the runtime's own RUNPATH, which only tells it the machine */
	char *copy = folder ? strdup(folder) : NULL;
	if (looked->count == LOOKED_MAX || (folder && !copy)) {
		free(copy);
		return;
	}
	looked->places[looked->count++] = (struct log_looked){ copy, search_step_key(step, loader_step) };
}

static void free_looked(struct looked *looked)
{
	for (size_t i = 0; looked && i < looked->count; i++)
		free((char *)looked->places[i].folder);
	free(looked);
}

/* True when file is name's library with a shorter version that name's begins with: libcudnn_graph.so.9
   for libcudnn_graph.so.9.19.0. */
static bool is_shorter_version(const char *file, const char *name, int family)
{
	struct libname_match asked, there;
	if (libnames_match_linux(name, &asked) != family || libnames_match_linux(file, &there) != family ||
	    asked.alt != there.alt || asked.hash_renamed || there.hash_renamed)
		return false;
	size_t length = strlen(there.version);
	return length && length < strlen(asked.version) && strncmp(asked.version, there.version, length) == 0 &&
	       asked.version[length] == '.';
}

/* A shorter version of name in the first folder looked in that holds one (of several, the first
   in byte order), into other: the caller is then probably probing for a more exact version before
   it takes that one. */
static bool other_version(const struct looked *looked, int family, const char *name, char *other, size_t size)
{
	for (size_t i = 0; i < looked->count && i < 64; i++) {
		const char *folder = looked->places[i].folder;
		DIR *dir = folder ? opendir(folder) : NULL;
		char found[NAME_MAX + 1] = "";
		for (struct dirent *entry; dir && (entry = readdir(dir));)
			if (is_shorter_version(entry->d_name, name, family) && (!found[0] || strcmp(entry->d_name, found) < 0) &&
			    strlen(entry->d_name) < sizeof(found))
				strcpy(found, entry->d_name);
		if (dir)
			closedir(dir);
		if (found[0] && snprintf(other, size, "%s/%s", folder, found) < (int)size)
			return true;
	}
	return false;
}

/* Walks request again listing its folders and reports the miss, unless the walk finds the name
   after all (it arrived meanwhile). A miss reported before for this asker's folder is only
   counted: a program that asks 500 times gets one warning, one event, one walk. */
static void report_walked_miss(struct search_request *request, int family, const char *asker, const char *reason)
{
	if (report_miss_repeated(request->name, asker))
		return;
	struct looked *looked = calloc(1, sizeof(*looked));
	char *other = malloc(PATH_MAX);
	if (!looked || !other)
		goto out;
	request->tried = add_looked;
	search_candidates(request, find_nothing, looked);
	if (!looked->finding.loader_finds && !looked->finding.candidate[0])
		report_miss(&(struct report_miss){ .name = request->name, .caller = asker, .family = family,
						   .driver = libnames_is_driver(family), .reason = reason,
						   .other = other_version(looked, family, request->name, other, PATH_MAX) ? other : NULL,
						   .looked = looked->places, .looked_count = looked->count });
out:
	free(other);
	free_looked(looked);
}

/* ---- coherent ----------------------------------------------------------------------------- */

bool lookup_loaded_by_name(const char *name)
{
	void *handle = real_dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	if (handle)
		dlclose(handle);
	return handle != NULL;
}

static bool is_coherent(void) { return config_get()->policy == POLICY_COHERENT; }

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The copy of name in folder or its wheel siblings, when there is a loadable one (with the SONAME
   name, for a DT_NEEDED). */
static bool find_in_family_tree(const char *name, const char *folder, bool needed, struct finding *own)
{
	struct search_request request = { .name = name, .caller_folder = folder, .caller_folder_only = true };
	clear_finding(own, needed ? name : NULL);
	search_candidates(&request, consider_candidate, own);
	return own->candidate[0] != '\0';
}

/* Under coherent, the copy from the asker's folder (or its wheel siblings) is preferred to the one
   the loader would pick, unless they are the same file. */
static bool coherent_choice(const char *name, const char *asker_folder, bool needed, const struct finding *loader, struct finding *own)
{
	return is_coherent() && asker_folder && find_in_family_tree(name, asker_folder, needed, own) &&
	       !(loader->loader_finds && same_file(loader->loader_path, own->candidate));
}

/* First loaded wins: a soname already loaded is used whatever its folder. Under coherent, when the
   asker's own folder holds another copy, say so once per soname, with both paths. */
static atomic_flag mixed_lock = ATOMIC_FLAG_INIT;
static char mixed_checked[64][NAME_MAX + 1];
static size_t mixed_checked_count;

/* A fork while another thread holds the lock: the child takes it anew (nothing half-written is
   read: a name is compared only once it is counted). */
static void reset_mixed_lock_in_child(void) { atomic_flag_clear(&mixed_lock); }

void lookup_init(void) { platform_after_fork_in_child(reset_mixed_lock_in_child); }

static bool first_check_of(const char *name)
{
	bool first = true;
	while (atomic_flag_test_and_set_explicit(&mixed_lock, memory_order_acquire))
		;
	for (size_t i = 0; i < mixed_checked_count && first; i++)
		first = strcmp(mixed_checked[i], name) != 0;
	if (first && mixed_checked_count < sizeof(mixed_checked) / sizeof(mixed_checked[0]) && strlen(name) <= NAME_MAX)
		strcpy(mixed_checked[mixed_checked_count++], name);
	atomic_flag_clear_explicit(&mixed_lock, memory_order_release);
	return first;
}

void lookup_report_mixed_origin(const char *name, const char *asker, const void *asker_code)
{
	char folder[PATH_MAX], loaded[PATH_MAX];
	if (!is_coherent() || !first_check_of(name))
		return;
	if (!asker) {
		struct link_map *object = lookup_object_at(asker_code);
		asker = object && object->l_name && object->l_name[0] ? object->l_name : NULL;
	}
	if (!asker || libnames_match_linux(libnames_basename(asker), NULL) < 0 || !dst_origin_of(asker, folder, sizeof(folder)) ||
	    !loaded_path_of_soname(name, loaded, sizeof(loaded)))
		return;
	int family = libnames_match_linux(name, NULL);
	if (family >= 0 && libnames_is_driver(family)) /* never taken from an installation: no copy "would be taken" */
		return;
	struct finding *own = malloc(sizeof(*own));
	if (own && find_in_family_tree(name, folder, false, own) && !same_file(own->candidate, loaded)) {
		log_message(LOG_WARN, "mixed origins: %s is already loaded from %s; %s would take %s", name, loaded, asker,
			    own->candidate);
		log_event(&(struct log_event){ .event = "mixed-origin", .name = name, .path = loaded, .own = own->candidate,
					       .caller = asker, .family = family >= 0 ? libnames[family].family : NULL,
					       .policy = config_policy_name(POLICY_COHERENT),
					       .reason = "first loaded wins: already loaded from another folder" });
		report_mixed_origin(name, loaded, own->candidate, asker);
	}
	free(own);
}

/* ---- the plan ------------------------------------------------------------------------------ */

static bool add_load(struct lookup_plan *plan, const char *name, int family, const struct finding *finding,
		     bool coherent, bool by_name_first)
{
	if (plan->count == LOOKUP_MAX_LOADS || strlen(name) > NAME_MAX)
		return false;
	struct lookup_load *load = &plan->loads[plan->count++];
	strcpy(load->name, name);
	strcpy(load->path, finding->candidate);
	load->identity = finding->identity;
	load->family = family;
	load->step = finding->step;
	load->coherent = coherent;
	load->by_name_first = by_name_first;
	return true;
}

/* The folder of caller (PATH_MAX bytes at folder) when it is an NVIDIA library, else NULL. */
static const char *nvidia_folder_of(struct link_map *caller, char *folder)
{
	const char *caller_name = caller->l_name && caller->l_name[0] ? caller->l_name : "";
	bool nvidia = libnames_match_linux(libnames_basename(caller_name), NULL) >= 0 && dst_origin_of(caller_name, folder, PATH_MAX);
	return nvidia ? folder : NULL;
}

/* The walk for a bare name asked by a caller whose search list the loader gave (listed), with the
   caller's folder when the caller is an NVIDIA library (nvidia_folder_of; NULL otherwise). */
static struct search_request bare_name_request(const char *name, const char *caller_folder, struct listed *listed,
					       struct loader_object *asker, struct loader_process *process)
{
	*asker = (struct loader_object){ .listed = &listed->list };
	*process = (struct loader_process){ 0 };
	return (struct search_request){
		.name = name,
		.lookup = LOADER_BARE_NAME,
		.asker = asker,
		.process = process,
		.machine = this_machine(),
		.caller_folder = caller_folder,
	};
}

/* What ld.so.cache (its file, read now) holds for name, for an asker with or without NODEFLIB:
   the entry the loader would take, copied into path, or false. Where this process cannot tell
   which glibc-hwcaps entry the loader prefers, any one it holds counts. */
static bool cache_entry_of(const char *name, char *path, size_t size)
{
	struct ld_cache cache;
	char message[256];
	struct ld_cache_entry entries[8];
	bool found = false;
	if (this_machine()->cache_inhibited || ld_cache_read("/etc/ld.so.cache", &cache, message, sizeof(message)) != 0)
		return false;
	size_t n = ld_cache_lookup(&cache, name, entries, sizeof(entries) / sizeof(entries[0]));
	if (n > 0 && strlen(entries[0].path) < size) {
		strcpy(path, entries[0].path);
		found = true;
	}
	ld_cache_free(&cache);
	return found;
}

/* The bare-name question for caller; in_loader: asked from inside the loader (no loader calls). */
static bool note_exists(const char *path, enum search_step step, enum loader_step loader_step, void *held)
{
	(void)path, (void)step, (void)loader_step;
	*(bool *)held = true;
	return true;
}

/* Whether any place of the runtime's own (the caller's folder, the origins, their wheel siblings,
   NVINTERPOSE_PATH) holds a file of the name. Where none does, the call is the loader's whatever it
   finds, and the walk of the loader's own folders, which weighs a candidate against them or lists
   a miss, is not needed: a miss of a name nobody installed costs a stat a place, not the loader's
   whole search again. */
static bool runtime_place_holds(const char *name, const char *caller_folder)
{
	struct search_request own = { .name = name, .caller_folder = caller_folder }; /* no asker: no loader steps */
	bool held = false;
	search_candidates(&own, note_exists, &held);
	return held;
}

static bool plan_bare_name(const char *name, int family, struct link_map *caller, bool in_loader, struct lookup_plan *plan)
{
	char caller_folder[PATH_MAX];
	const char *nvidia_folder = nvidia_folder_of(caller, caller_folder);
	plan->count = 0;
	plan->missed = false;
	if (!report_misses_wanted(libnames_is_driver(family)) && !runtime_place_holds(name, nvidia_folder))
		return false;
	struct listed *listed = NULL;
	struct finding *finding = malloc(2 * sizeof(*finding));
	bool planned = false;
	if (!finding || !(listed = read_listed(caller)))
		goto out;
	clear_finding(finding, NULL);
	struct finding *own = finding + 1;

	struct loader_object asker;
	struct loader_process process;
	struct search_request request = bare_name_request(name, nvidia_folder, listed, &asker, &process);
	bool caller_is_nvidia = nvidia_folder != NULL;
	char cached[PATH_MAX];
	request.cache_entry = in_loader && cache_entry_of(name, cached, sizeof(cached)) ? cached : NULL;
	search_candidates(&request, consider_candidate, finding);
	if (caller_is_nvidia && coherent_choice(name, caller_folder, false, finding, own)) {
		/* First loaded wins, even when it arrived a moment ago (another thread): the loader's.
		   Inside the loader, the name is not loaded: the loader asks only then. */
		planned = (in_loader || !lookup_loaded_by_name(name)) && add_load(plan, name, family, own, true, false);
		goto out;
	}
	plan->missed = !finding->loader_finds && !finding->candidate[0];
	if (finding->loader_finds && !finding->loader_path[0])
		report_unknown(name, caller->l_name && caller->l_name[0] ? caller->l_name : "(main program)",
			       "a copy in an hwcap subfolder the runtime cannot rank");
	if (finding->loader_finds || !finding->candidate[0])
		goto out;
	/* The loader's own remaining steps come first: ld.so.cache and the glibc-hwcaps folders. A
	   caller marked NODEFLIB skips them, so for it the name is not asked for again; inside the
	   loader the cache was read from its file above. */
	planned = add_load(plan, name, family, finding, false, !in_loader && !dynamic_has_nodeflib(caller->l_ld));
out:
	free_listed(listed);
	free(finding);
	return planned;
}

bool lookup_bare_name(const char *name, int family, struct link_map *caller, struct lookup_plan *plan)
{
	return plan_bare_name(name, family, caller, false, plan);
}

bool lookup_for_requester(const char *name, int family, struct link_map *requester, struct lookup_load *load)
{
	struct lookup_plan *plan = malloc(sizeof(*plan));
	bool planned = plan && plan_bare_name(name, family, requester, true, plan);
	if (planned)
		*load = plan->loads[0];
	free(plan);
	return planned;
}

void lookup_report_bare_miss(const char *name, int family, struct link_map *caller, const char *asker, bool runtime_places)
{
	char caller_folder[PATH_MAX];
	struct listed *listed = read_listed(caller);
	if (!listed || loader_finds_by_name(name))
		goto out;
	struct loader_object object;
	struct loader_process process;
	struct search_request request = bare_name_request(name, nvidia_folder_of(caller, caller_folder), listed, &object, &process);
	if (!runtime_places) {
		request.caller_folder = NULL;
		request.loader_only = true;
	}
	report_walked_miss(&request, family, asker, "dlopen by bare name");
out:
	free_listed(listed);
}

/* ---- DT_NEEDED ------------------------------------------------------------------------------- */

struct needs {
	struct lookup_plan *plan;
	const struct loader_process *process; /* the program's RPATH, LD_LIBRARY_PATH, the system folders */
	size_t visited_count;
	char visited[LOOKUP_MAX_LOADS][NAME_MAX + 1];
};

/* A library about to be loaded, as the loader model sees it: its RPATH and RUNPATH expanded
   ($ORIGIN its folder), no loader (dlopen maps it itself). */
struct parent {
	const char *path;
	const char *folder;
	const struct dynamic_file *file;
	char **rpath, **runpath;
	int rpath_count, runpath_count;
	struct loader_object model;
};

static bool visited_before(struct needs *needs, const char *name)
{
	for (size_t i = 0; i < needs->visited_count; i++)
		if (strcmp(needs->visited[i], name) == 0)
			return true;
	if (needs->visited_count < LOOKUP_MAX_LOADS && strlen(name) <= NAME_MAX)
		strcpy(needs->visited[needs->visited_count++], name);
	return false;
}

/* An RPATH or RUNPATH expanded as the loader does; false when it uses $LIB or $PLATFORM and the
   loader did not say their values: the loader's search is then not known, and it may find anything. */
static bool expand_list(const char *list, const char *origin, char ***elements, int *count)
{
	const struct loader_machine *facts = this_machine();
	*elements = NULL;
	*count = 0;
	if (!list)
		return true;
	if (!facts->tokens_known && (dst_uses_token(list, "LIB") || dst_uses_token(list, "PLATFORM")))
		return false;
	const char *lib = facts->tokens_known ? facts->lib : NULL;
	const char *platform = facts->platform_known ? facts->platform : NULL;
	int n = dst_expand_search_path(list, origin, lib, platform, NULL, 0);
	if (n < 0 || !(*elements = calloc((size_t)n + 1, sizeof(char *))))
		return false;
	*count = dst_expand_search_path(list, origin, lib, platform, *elements, (size_t)n);
	return *count == n;
}

static void free_elements(char **elements, int count)
{
	for (int i = 0; elements && i < count; i++)
		free(elements[i]);
	free(elements);
}

static bool model_parent(struct parent *parent)
{
	const struct dynamic_file *file = parent->file;
	if (!expand_list(file->runpath ? NULL : file->rpath, parent->folder, &parent->rpath, &parent->rpath_count) ||
	    !expand_list(file->runpath, parent->folder, &parent->runpath, &parent->runpath_count))
		return false;
	parent->model = (struct loader_object){
		.rpath = { (const char *const *)parent->rpath, (size_t)parent->rpath_count },
		.runpath = { (const char *const *)parent->runpath, (size_t)parent->runpath_count },
		.has_runpath = file->runpath != NULL,
		.nodeflib = file->nodeflib,
	};
	return true;
}

static void free_parent(struct parent *parent)
{
	free_elements(parent->rpath, parent->rpath_count);
	free_elements(parent->runpath, parent->runpath_count);
}

static void plan_needs_of(struct parent *parent, struct needs *needs, int depth);

/* The state of one DT_NEEDED lookup, on the heap: the lookup recurses (leaves first). */
struct needed_work {
	struct finding finding, own;
	struct dynamic_file file;
	char folder[PATH_MAX];
	struct parent child;
};

/* One DT_NEEDED name of parent: nothing when it is not NVIDIA's, a driver library, loaded, or
   found by the loader; otherwise planned (after its own needs) from where the runtime finds it. */
static void plan_need(struct parent *parent, const char *name, struct needs *needs, int depth)
{
	int family = libnames_match_linux(name, NULL);
	if (family < 0 || visited_before(needs, name))
		return;
	bool driver = libnames_is_driver(family);
	if (driver && !report_misses_wanted(true))
		return;
	if (loaded_has_soname(name)) {
		if (!driver)
			lookup_report_mixed_origin(name, parent->path, NULL);
		return;
	}
	struct needed_work *work = calloc(1, sizeof(*work));
	if (!work)
		return;
	struct finding *finding = &work->finding;
	struct search_request request = {
		.name = name,
		.lookup = LOADER_NEEDED_OF_DLOPENED,
		.asker = &parent->model,
		.process = needs->process,
		.machine = this_machine(),
		.caller_folder = parent->folder,
	};
	if (driver) { /* never supplied: only a miss to report */
		request.loader_only = true;
		request.caller_folder = NULL;
	}
	finding->soname = name;
	search_candidates(&request, consider_candidate, finding);
	if (!finding->loader_finds && (driver || !finding->candidate[0])) {
		/* Nobody finds it where the runtime can look: the loader's own answer (its cache) decides. */
		if (report_misses_wanted(driver) && !loader_finds_by_name(name))
			report_walked_miss(&request, family, parent->path, "DT_NEEDED");
		goto out;
	}
	if (driver)
		goto out;
	if (finding->loader_finds && !finding->loader_path[0])
		report_unknown(name, parent->path, "a copy in an hwcap subfolder the runtime cannot rank");
	bool coherent = coherent_choice(name, parent->folder, true, finding, &work->own);
	if (coherent) {
		if (lookup_loaded_by_name(name)) /* first loaded wins, even when it arrived a moment ago */
			goto out;
		finding = &work->own;
	} else if (finding->loader_finds || !finding->candidate[0]) {
		goto out;
	}
	/* The candidate is dlopen'ed by the runtime in its turn: its own needs come first. */
	struct parent *child = &work->child;
	if (depth < NEEDED_MAX_DEPTH && dynamic_read_file(finding->candidate, &work->file) == 0 &&
	    dst_origin_of(finding->candidate, work->folder, sizeof(work->folder))) {
		*child = (struct parent){ .path = finding->candidate, .folder = work->folder, .file = &work->file };
		if (model_parent(child))
			plan_needs_of(child, needs, depth + 1);
		free_parent(child);
	}
	/* ld.so.cache, as the loader would try it for parent (unless parent is NODEFLIB). */
	add_load(needs->plan, name, family, finding, coherent, !coherent && !parent->file->nodeflib);
out:
	free(work);
}

static void plan_needs_of(struct parent *parent, struct needs *needs, int depth)
{
	for (size_t i = 0; i < parent->file->needed_count; i++)
		plan_need(parent, parent->file->needed[i], needs, depth);
}

/* Most libraries need no NVIDIA library that is not loaded yet: they need nothing from here (but
   under coherent, a loaded one may still be a mixed origin to report). */
static bool needs_an_nvidia_library(const struct dynamic_file *file)
{
	for (size_t i = 0; i < file->needed_count; i++) {
		int family = libnames_match_linux(file->needed[i], NULL);
		if (family >= 0 && (!libnames_is_driver(family) || report_misses_wanted(true)) &&
		    (is_coherent() || !loaded_has_soname(file->needed[i])))
			return true;
	}
	return false;
}

static void report_needs_unknown(const char *path, const struct dynamic_file *file, const char *why)
{
	for (size_t i = 0; i < file->needed_count; i++) {
		int family = libnames_match_linux(file->needed[i], NULL);
		if (family >= 0 && !libnames_is_driver(family))
			report_unknown(file->needed[i], path, why);
	}
}

/* The process's lists, for the DT_NEEDED of an object that dlopen maps (it has no loader): the
   program's RPATH (unless the program has a RUNPATH), LD_LIBRARY_PATH, the system folders. The
   loader lists them only inside an object's whole search (dlinfo RTLD_DI_SERINFO, no mark between
   the parts), so they are read off two such lists: the runtime's own (LD_LIBRARY_PATH, then its
   RUNPATH: the probe element, which marks where LD_LIBRARY_PATH ends, and LOADER_PROBE_KEEPER;
   then the system folders) and
   the program's (its RPATH, LD_LIBRARY_PATH, its RUNPATH, the system folders unless it has
   NODEFLIB). The program's RPATH is what the second holds before the first's parts. */
struct process_lists {
	struct listed *own, *program;
	struct loader_object program_model;
	struct loader_process process;
};

static bool same_dirs(const struct loader_list *list, size_t at, const char *const *dirs, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (at + i >= list->count || strcmp(list->dirs[at + i], dirs[i]) != 0)
			return false;
	return true;
}

static bool read_process_lists(struct process_lists *lists)
{
	struct link_map *program = _r_debug.r_map;
	lists->own = read_listed(lookup_object_at((const void *)read_process_lists));
	lists->program = program ? read_listed(program) : NULL;
	if (!lists->own || !lists->program)
		return false;
	const struct loader_list *own = &lists->own->list;
	struct loader_machine scratch = { 0 };
	size_t probe = 0;
	while (probe < own->count && !loader_machine_from_element(own->dirs[probe], &scratch))
		probe++;
	if (probe == own->count)
		return false;
	size_t first_default = probe + 1;
	if (first_default < own->count && strcmp(own->dirs[first_default], LOADER_PROBE_KEEPER) == 0)
		first_default++;
	lists->process = (struct loader_process){
		.program = &lists->program_model,
		.library_path = { own->dirs, probe },
		.default_dirs = { own->dirs + first_default, own->count - first_default },
	};
	lists->program_model = (struct loader_object){ .has_runpath = dynamic_has_runpath(program->l_ld) };
	if (lists->program_model.has_runpath)
		return true;
	const struct loader_list *listed = &lists->program->list;
	size_t end = listed->count;
	const struct loader_list *defaults = &lists->process.default_dirs, *library_path = &lists->process.library_path;
	if (!dynamic_has_nodeflib(program->l_ld)) {
		if (end < defaults->count || !same_dirs(listed, end - defaults->count, defaults->dirs, defaults->count))
			return false;
		end -= defaults->count;
	}
	if (end < library_path->count || !same_dirs(listed, end - library_path->count, library_path->dirs, library_path->count))
		return false;
	end -= library_path->count;
	lists->program_model.rpath = (struct loader_list){ listed->dirs, end };
	return true;
}

bool lookup_needed(const char *path, const struct dynamic_file *file, struct lookup_plan *plan)
{
	struct needs *needs = NULL;
	struct process_lists *lists = NULL;
	char folder[PATH_MAX];
	struct parent parent = { .path = path, .folder = folder, .file = file };
	plan->count = 0;
	if (!needs_an_nvidia_library(file) || !dst_origin_of(path, folder, sizeof(folder)))
		goto out;
	if (!model_parent(&parent)) {
		report_needs_unknown(path, file, "its RPATH or RUNPATH uses $LIB or $PLATFORM, which the loader did not tell");
		goto out;
	}
	if (!(lists = calloc(1, sizeof(*lists))) || !(needs = calloc(1, sizeof(*needs))))
		goto out;
	if (!read_process_lists(lists)) {
		report_needs_unknown(path, file, "the loader's lists of this process could not be read");
		goto out;
	}
	needs->plan = plan;
	needs->process = &lists->process;
	plan_needs_of(&parent, needs, 0);
out:
	free_parent(&parent);
	free(needs);
	if (lists) {
		free_listed(lists->own);
		free_listed(lists->program);
		free(lists);
	}
	return plan->count > 0;
}
