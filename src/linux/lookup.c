/* Finding NVIDIA libraries on a real caller's behalf.
 *
 * A bare name: the caller's own search list decides first (when the file is there the loader gets
 * the call untouched); then, when a registered origin holds it, the loader is asked by name once
 * more (for ld.so.cache, which no search list shows) and only then is the candidate loaded by path.
 *
 * DT_NEEDED: before an NVIDIA library is loaded by path, each NVIDIA name it needs is looked for
 * where the loader will look for it (the library's RPATH unless it has a RUNPATH, the caller's
 * search list, the library's RUNPATH, with $ORIGIN the library's folder; then ld.so.cache); the
 * ones found nowhere but in the runtime's folders are loaded first, leaves first. */
#define _GNU_SOURCE
#include "lookup.h"

#include "config.h"
#include "loader/dst.h"
#include "dynamic.h"
#include "libnames.h"
#include "loaded.h"
#include "log.h"
#include "platform.h"
#include "search.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NEEDED_MAX_DEPTH 8
#define NEEDED_MAX_PRELOADS 64

/* A list of folders: the loader's search list for an object, or one built for a DT_NEEDED lookup.
   Sized to what it holds: a long LD_LIBRARY_PATH must not turn the runtime off or cut the list
   (the loader's own search would then be predicted wrong). */
struct folders {
	size_t count;
	const char **dirs;
	void *storage; /* what dirs point into (a Dl_serinfo), freed with the list */
	char **owned;  /* expanded elements this list owns */
	size_t owned_count;
};

static void free_folders(struct folders *folders)
{
	if (!folders)
		return;
	for (size_t i = 0; i < folders->owned_count; i++)
		free(folders->owned[i]);
	free(folders->owned);
	free(folders->dirs);
	free(folders->storage);
	free(folders);
}

/* The loader's search list for an object (dlinfo RTLD_DI_SERINFO): its RPATH chain, LD_LIBRARY_PATH,
   its RUNPATH and the default folders, with $ORIGIN expanded. The ld.so.cache and the
   glibc-hwcaps subfolders are not in it: the real loader does those steps itself. */
static struct folders *read_search_list(struct link_map *object)
{
	Dl_serinfo size;
	struct folders *folders = calloc(1, sizeof(*folders));
	if (!folders || dlinfo(object, RTLD_DI_SERINFOSIZE, &size) != 0)
		goto fail;
	Dl_serinfo *info = malloc(size.dls_size);
	folders->storage = info;
	folders->dirs = calloc(size.dls_cnt ? size.dls_cnt : 1, sizeof(*folders->dirs));
	if (!info || !folders->dirs)
		goto fail;
	*info = size;
	if (dlinfo(object, RTLD_DI_SERINFO, info) != 0)
		goto fail;
	for (unsigned i = 0; i < info->dls_cnt && i < size.dls_cnt; i++)
		folders->dirs[folders->count++] = info->dls_serpath[i].dls_name;
	return folders;
fail:
	free_folders(folders);
	return NULL;
}

struct link_map *lookup_object_at(const void *address)
{
	Dl_info info;
	struct link_map *object = NULL;
	if (address && dladdr1(address, &info, (void **)&object, RTLD_DL_LINKMAP) && object)
		return object;
	return _r_debug.r_map;
}

struct lookup {
	bool loader_finds;
	char loader_path[PATH_MAX]; /* the loader's first hit, when loader_finds */
	enum search_step step;
	char candidate[PATH_MAX];
};

static bool consider_candidate(const char *path, enum search_step step, void *arg)
{
	struct lookup *lookup = arg;
	if (!dynamic_file_is_loadable(path)) {
		if (step != SEARCH_CALLER)
			log_message(LOG_INFO, "%s is not a shared object this process can load; skipped", path);
		return false;
	}
	if (step == SEARCH_CALLER) {
		lookup->loader_finds = true;
		strcpy(lookup->loader_path, path);
	} else {
		lookup->step = step;
		strcpy(lookup->candidate, path);
	}
	return true;
}

/* ---- coherent ----------------------------------------------------------------------------- */

/* Whether the loader holds an object under this name now: its own answer, with no search. */
static bool loaded_by_name(const char *name)
{
	void *handle = preload_real_dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
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

/* The copy of name in folder or its wheel siblings, when there is a loadable one. */
static bool find_in_family_tree(const char *name, const char *folder, struct lookup *own)
{
	struct search_request request = { .name = name, .caller_folder = folder, .caller_folder_only = true };
	memset(own, 0, sizeof(*own));
	search_candidates(&request, consider_candidate, own);
	return own->candidate[0] != '\0';
}

/* Under coherent, the copy from the asker's folder (or its wheel siblings) is preferred to the one
   the loader would pick, unless they are the same file. */
static bool coherent_choice(const char *name, const char *asker_folder, const struct lookup *loader, struct lookup *own)
{
	return is_coherent() && asker_folder && find_in_family_tree(name, asker_folder, own) &&
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
	int saved_errno = errno;
	if (!asker) {
		struct link_map *object = lookup_object_at(asker_code);
		asker = object && object->l_name && object->l_name[0] ? object->l_name : NULL;
	}
	if (!asker || libnames_match_linux(libnames_basename(asker), NULL) < 0 || !loaded_folder_of(asker, folder, sizeof(folder)) ||
	    !loaded_path_of_soname(name, loaded, sizeof(loaded)))
		goto out;
	int family = libnames_match_linux(name, NULL);
	struct lookup *own = calloc(1, sizeof(*own));
	if (own && find_in_family_tree(name, folder, own) && !same_file(own->candidate, loaded)) {
		log_message(LOG_WARN, "mixed origins: %s is already loaded from %s; %s would take %s", name, loaded, asker,
			    own->candidate);
		log_event(&(struct log_event){ .event = "mixed-origin", .name = name, .path = loaded, .caller = asker,
					       .family = family >= 0 ? libnames[family].family : NULL, .reason = own->candidate });
	}
	free(own);
out:
	errno = saved_errno;
}

/* Loads a candidate the runtime chose for caller, and says so: event "redirect" (fallback) or
   "coherent", with the step that found it as the reason. */
static void *load_candidate(const char *name, int family, const char *path, const char *reason, const char *caller, int mode)
{
	void *handle = preload_real_dlopen(path, mode);
	if (!handle) {
		log_message(LOG_WARN, "%s for %s: %s did not load: %s", name, caller, path, dlerror());
		return NULL;
	}
	bool coherent = strcmp(reason, "coherent") == 0;
	log_message(LOG_INFO, "%s for %s: loaded %s (%s)", name, caller, path, reason);
	log_event(&(struct log_event){ .event = coherent ? "coherent" : "redirect", .name = name, .path = path,
				       .caller = caller, .family = libnames[family].family,
				       .reason = coherent ? "the caller's folder or its wheel siblings" : reason });
	return handle;
}

void *lookup_bare_name(const char *name, int mode, int family, struct link_map *caller)
{
	struct folders *list = NULL;
	struct lookup *lookup = calloc(1, sizeof(*lookup));
	struct lookup *own = malloc(sizeof(*own));
	char caller_folder[PATH_MAX];
	void *handle = NULL;
	/* Loaded meanwhile (or by another thread): the loader's answer is that object. */
	if (!lookup || !own || loaded_has_soname(name) || !(list = read_search_list(caller)))
		goto out;

	const char *caller_name = caller->l_name && caller->l_name[0] ? caller->l_name : "(main program)";
	bool caller_is_nvidia = libnames_match_linux(libnames_basename(caller_name), NULL) >= 0 &&
				loaded_folder_of(caller_name, caller_folder, sizeof(caller_folder));
	struct search_request request = {
		.name = name,
		.caller_dirs = list->dirs,
		.caller_dir_count = list->count,
		.caller_folder = caller_is_nvidia ? caller_folder : NULL,
		.include_caller_dirs = true,
	};
	search_candidates(&request, consider_candidate, lookup);
	if (caller_is_nvidia && coherent_choice(name, caller_folder, lookup, own)) {
		/* First loaded wins, even when it arrived a moment ago (another thread): the loader's. */
		if (!loaded_by_name(name))
			handle = load_candidate(name, family, own->candidate, "coherent", caller_name, mode);
		goto out;
	}
	if (lookup->loader_finds || !lookup->candidate[0])
		goto out;

	/* The loader's own remaining steps come first: ld.so.cache and the glibc-hwcaps folders. A
	   caller marked NODEFLIB skips them, so for it only an object loaded under that name counts. */
	bool nodeflib = dynamic_has_nodeflib(caller->l_ld);
	handle = preload_real_dlopen(name, nodeflib ? mode | RTLD_NOLOAD : mode);
	if (handle)
		goto out;

	handle = load_candidate(name, family, lookup->candidate, search_step_name(lookup->step), caller_name, mode);
out:
	free_folders(list);
	free(lookup);
	free(own);
	return handle;
}


/* ---- DT_NEEDED ------------------------------------------------------------------------------- */

struct preloads {
	struct folders *caller_list;
	int mode; /* the parent's binding mode (RTLD_NOW or RTLD_LAZY), for what it needs too */
	size_t count;
	void *handles[NEEDED_MAX_PRELOADS];
	size_t visited_count;
	char visited[NEEDED_MAX_PRELOADS][NAME_MAX + 1];
};

struct parent {
	const char *path;
	const char *folder;
	const struct dynamic_file *file;
};

static bool visited_before(struct preloads *preloads, const char *name)
{
	for (size_t i = 0; i < preloads->visited_count; i++)
		if (strcmp(preloads->visited[i], name) == 0)
			return true;
	if (preloads->visited_count < NEEDED_MAX_PRELOADS && strlen(name) <= NAME_MAX)
		strcpy(preloads->visited[preloads->visited_count++], name);
	return false;
}

/* Appends the expanded elements of an RPATH or RUNPATH (tokens other than $ORIGIN leave their
   element out: the runtime does not guess $LIB or $PLATFORM). */
static bool add_expanded(struct folders *folders, size_t capacity, const char *list, const char *origin)
{
	if (!list)
		return true;
	int n = dst_expand_search_path(list, origin, NULL, NULL, NULL, 0);
	if (n < 0 || folders->count + (size_t)n > capacity)
		return false;
	char **elements = folders->owned + folders->owned_count;
	if (dst_expand_search_path(list, origin, NULL, NULL, elements, (size_t)n) != n)
		return false;
	for (int i = 0; i < n; i++)
		folders->dirs[folders->count++] = elements[i];
	folders->owned_count += (size_t)n;
	return true;
}

/* Where the loader will look for name on behalf of parent: its RPATH (unless it has a RUNPATH), the
   caller's search list (its RPATH chain, LD_LIBRARY_PATH, default folders), its RUNPATH; then, as
   for a bare name, the runtime's folders, the parent's own first. */
static void search_needed(const struct parent *parent, const char *name, struct preloads *preloads, struct lookup *lookup)
{
	const char *rpath = parent->file->runpath ? NULL : parent->file->rpath;
	int rpath_count = rpath ? dst_expand_search_path(rpath, parent->folder, NULL, NULL, NULL, 0) : 0;
	int runpath_count = parent->file->runpath ? dst_expand_search_path(parent->file->runpath, parent->folder, NULL, NULL, NULL, 0) : 0;
	if (rpath_count < 0 || runpath_count < 0)
		return;
	size_t capacity = (size_t)rpath_count + preloads->caller_list->count + (size_t)runpath_count;
	struct folders *folders = calloc(1, sizeof(*folders));
	if (!folders || !(folders->dirs = calloc(capacity + 1, sizeof(*folders->dirs))) ||
	    !(folders->owned = calloc((size_t)(rpath_count + runpath_count) + 1, sizeof(*folders->owned))))
		goto out;
	if (!add_expanded(folders, capacity, rpath, parent->folder))
		goto out;
	for (size_t i = 0; i < preloads->caller_list->count; i++)
		folders->dirs[folders->count++] = preloads->caller_list->dirs[i];
	if (!add_expanded(folders, capacity, parent->file->runpath, parent->folder))
		goto out;
	struct search_request request = {
		.name = name,
		.caller_dirs = folders->dirs,
		.caller_dir_count = folders->count,
		.caller_folder = parent->folder,
		.include_caller_dirs = true,
	};
	search_candidates(&request, consider_candidate, lookup);
out:
	free_folders(folders);
}

static void keep_handle(struct preloads *preloads, void *handle)
{
	if (preloads->count < NEEDED_MAX_PRELOADS)
		preloads->handles[preloads->count++] = handle;
	else
		dlclose(handle);
}

static void prepare_needed_of(const struct parent *parent, struct preloads *preloads, int depth);

/* The state of one DT_NEEDED lookup, on the heap: the lookup recurses (leaves first). */
struct needed_work {
	struct lookup lookup, own;
	struct dynamic_file file;
	char folder[PATH_MAX];
};

/* One DT_NEEDED name of parent: nothing when it is not NVIDIA's, a driver library, loaded, or
   found by the loader; otherwise loaded (after its own needs) from where the runtime finds it. */
static void prepare_needed(const struct parent *parent, const char *name, struct preloads *preloads, int depth)
{
	int family = libnames_match_linux(name, NULL);
	if (family < 0 || libnames_is_driver(family) || visited_before(preloads, name))
		return;
	if (loaded_has_soname(name)) {
		lookup_report_mixed_origin(name, parent->path, NULL);
		return;
	}
	struct needed_work *work = calloc(1, sizeof(*work));
	if (!work)
		return;
	struct lookup *lookup = &work->lookup;
	search_needed(parent, name, preloads, lookup);
	bool coherent = coherent_choice(name, parent->folder, lookup, &work->own);
	if (coherent) {
		if (loaded_by_name(name)) /* first loaded wins, even when it arrived a moment ago */
			goto out;
		memcpy(lookup->candidate, work->own.candidate, sizeof(lookup->candidate));
	} else if (lookup->loader_finds || !lookup->candidate[0]) {
		goto out;
	}
	/* ld.so.cache, as the loader would try it for parent (unless parent is NODEFLIB). */
	if (!coherent && !parent->file->nodeflib) {
		void *handle = preload_real_dlopen(name, preloads->mode | RTLD_LOCAL);
		if (handle) {
			keep_handle(preloads, handle);
			goto out;
		}
	}
	if (depth < NEEDED_MAX_DEPTH && dynamic_read_file(lookup->candidate, &work->file) == 0 &&
	    loaded_folder_of(lookup->candidate, work->folder, sizeof(work->folder))) {
		struct parent child = { lookup->candidate, work->folder, &work->file };
		prepare_needed_of(&child, preloads, depth + 1); /* leaves first */
	}
	void *handle = preload_real_dlopen(lookup->candidate, preloads->mode | RTLD_LOCAL);
	if (!handle) {
		log_message(LOG_WARN, "%s, needed by %s: %s did not load: %s", name, parent->path, lookup->candidate, dlerror());
		goto out;
	}
	keep_handle(preloads, handle);
	const char *reason = coherent ? "coherent: the parent's folder or its wheel siblings" : search_step_name(lookup->step);
	log_message(LOG_INFO, "%s, needed by %s: loaded %s first (%s)", name, parent->path, lookup->candidate, reason);
	log_event(&(struct log_event){ .event = "needed", .name = name, .path = lookup->candidate, .caller = parent->path,
				       .family = libnames[family].family, .reason = reason });
out:
	free(work);
}

static void prepare_needed_of(const struct parent *parent, struct preloads *preloads, int depth)
{
	for (size_t i = 0; i < parent->file->needed_count; i++)
		prepare_needed(parent, parent->file->needed[i], preloads, depth);
}

/* Most libraries need no NVIDIA library that is not loaded yet: they need nothing from here (but
   under coherent, a loaded one may still be a mixed origin to report). */
static bool needs_an_nvidia_library(const struct dynamic_file *file)
{
	for (size_t i = 0; i < file->needed_count; i++) {
		int family = libnames_match_linux(file->needed[i], NULL);
		if (family >= 0 && !libnames_is_driver(family) && (is_coherent() || !loaded_has_soname(file->needed[i])))
			return true;
	}
	return false;
}

void *lookup_load_with_needed(const char *path, const struct dynamic_file *file, int mode, struct link_map *caller)
{
	struct preloads *preloads = NULL;
	struct folders *list = NULL;
	char folder[PATH_MAX];
	void *handle = NULL;
	if (!needs_an_nvidia_library(file) || !(preloads = calloc(1, sizeof(*preloads))) ||
	    !loaded_folder_of(path, folder, sizeof(folder)) || !(list = read_search_list(caller)))
		goto out;
	preloads->caller_list = list;
	preloads->mode = mode & (RTLD_NOW | RTLD_LAZY);
	struct parent parent = { path, folder, file };
	prepare_needed_of(&parent, preloads, 0);
	if (preloads->count == 0)
		goto out; /* nothing the loader would miss: it has the call, untouched */
	handle = preload_real_dlopen(path, mode);
	/* The library holds what it needs now; the runtime's own references go. */
	for (size_t i = 0; i < preloads->count; i++)
		dlclose(preloads->handles[i]);
out:
	free(preloads);
	free_folders(list);
	return handle;
}
