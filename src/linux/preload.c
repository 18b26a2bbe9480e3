/* The LD_PRELOAD front: the dlopen and dlmopen hooks, start-up and the late-attach scan.
 *
 * The hooks' entry points are in passthru.S. Each calls a route function here, which either
 * handles the load (returns true and the handle) or declines, and the stub then jumps into the real
 * function as if the runtime were not there. The runtime makes the call itself in three cases only:
 *   - a repeated load of an NVIDIA library that is loaded (the same call with RTLD_NOLOAD: for a
 *     loaded object the caller's frame changes nothing);
 *   - an NVIDIA library asked for by bare name that is not loaded, that the loader would not find
 *     for the real caller (or, under coherent, that the caller's own folder holds), and that a
 *     registered origin, a wheel sibling or NVINTERPOSE_PATH holds;
 *   - an NVIDIA library loaded by path whose NVIDIA DT_NEEDED the runtime had to load first.
 * Everything else, including every failure, goes to the plain loader with the caller's own frame. */
#define _GNU_SOURCE
#include "config.h"
#include "dynamic.h"
#include "front.h"
#include "libnames.h"
#include "loaded.h"
#include "log.h"
#include "registry.h"
#include "lookup.h"
#include "search.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

/* Read by passthru.S: the functions the hooks hand over to. */
void *(*preload_real_dlopen)(const char *file, int mode);
void *(*preload_real_dlmopen)(Lmid_t namespace, const char *file, int mode);

/* The hooks themselves (hidden labels in passthru.S), to tell whether they are the ones the
   process binds to. */
extern char preload_hook_dlopen[];

/* Set while this thread runs the runtime's own code: a dlopen that reaches the hooks then (from a
   constructor of a library the runtime loads) goes straight to the loader. */
static __thread bool busy __attribute__((tls_model("initial-exec")));

static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *environment(const char *name) { return getenv(name); }

/* Outside the once below: dlsym takes the loader's lock, and a thread that holds that lock (running
   a constructor) may be the next to need the real functions. Idempotent, so a race only repeats it. */
static void resolve_real_functions(void)
{
	/* RTLD_NEXT finds libc's default versions whether the runtime was preloaded or dlopen'ed. */
	if (!preload_real_dlmopen)
		preload_real_dlmopen = (void *(*)(Lmid_t, const char *, int))dlsym(RTLD_NEXT, "dlmopen");
	if (!preload_real_dlopen)
		preload_real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
}

/* Settings, the event log and the fork handlers: no loader call in here. */
static void initialize(void)
{
	config_load(environment, getauxval(AT_SECURE) != 0);
	if (config_get()->log_file[0])
		log_open_event_file(config_get()->log_file);
	registry_init();
	loaded_init();
	lookup_init();
}

static void ensure_initialized(void)
{
	resolve_real_functions();
	pthread_once(&once, initialize);
}

/* A library loaded by path is registered before the loader has it, so that its folder is known
   even if it is unloaded before the runtime's next contact: the folder of the path as given (what
   $ORIGIN will mean), once the file is known to be one the loader can take. Objects a load brings
   in as DT_NEEDED are registered at the next sync. */
static void register_folder_of(int family, const char *path)
{
	char folder[PATH_MAX];
	if (!loaded_folder_of(path, folder, sizeof(folder)))
		return;
	if (registry_add_origin(family, folder) == REGISTRY_ADDED) {
		log_message(LOG_INFO, "%s loaded from %s: registered", libnames[family].family, folder);
		log_event(&(struct log_event){ .event = "register", .name = libnames_basename(path), .path = folder,
					       .family = libnames[family].family, .reason = "loaded by path" });
	}
}

/* An NVIDIA library loaded by path: registered when its header is one the loader takes, and, unless
   the policy is off, what it needs but the loader would not find is loaded first
   (lookup_load_with_needed, which needs the whole dynamic section read). */
static void *load_by_path(int family, const char *path, int mode, const void *caller, const struct config *config)
{
	struct dynamic_file *file = malloc(sizeof(*file));
	void *handle = NULL;
	int read = file ? dynamic_read_file(path, file) : -ENOMEM;
	/* A file past the reader's bounds (or odd in ways the loader tolerates) is still registered. */
	if (read == 0 ? !dynamic_file_is_compatible(file) : !dynamic_file_is_loadable(path))
		goto out;
	register_folder_of(family, path);
	if (read == 0 && config->policy != POLICY_OFF)
		handle = lookup_load_with_needed(path, file, mode, lookup_object_at(caller));
out:
	free(file);
	return handle;
}

/* A library the index says is loaded: the caller's call with RTLD_NOLOAD added is the loader's own
   answer (see below). True with the handle; false when it was not loaded after all. */
static bool answer_loaded(const char *file, bool by_path, int mode, const void *caller, void **handle)
{
	void *loaded = preload_real_dlopen(file, mode | RTLD_NOLOAD);
	if (!loaded)
		return false;
	if (!by_path && config_get()->policy == POLICY_COHERENT)
		lookup_report_mixed_origin(file, NULL, caller);
	*handle = loaded;
	return true;
}

bool preload_route_dlopen(const char *file, int mode, const void *caller, void **handle);
bool preload_route_dlopen(const char *file, int mode, const void *caller, void **handle)
{
	/* Names that are not NVIDIA's leave first, after a glance at the table: that is nearly every
	   call. */
	if (!file)
		goto pass;
	const char *base = strrchr(file, '/');
	bool by_path = base != NULL;
	const char *name = by_path ? base + 1 : file;
	if (!libnames_may_match_linux(name) || busy)
		goto pass;
	int saved_errno = errno;
	/* The hot path: a repeated load of a loaded NVIDIA library. The index says it is loaded; the
	   loader's own answer for a loaded object is then the call itself, made with RTLD_NOLOAD: the
	   same reference count and flag promotion as the caller's call, no search, so the caller's
	   frame does not matter (nor do its RTLD_NOLOAD and RTLD_DEEPBIND, which change nothing for
	   a loaded object; no indexed name holds a '$'). When the index is behind (the object was
	   unloaded since), that call loads nothing and returns NULL, and the slow path decides. */
	if (by_path ? loaded_has_path(file) : loaded_has_soname(file)) {
		if (answer_loaded(file, by_path, mode, caller, handle))
			return true;
		/* Behind: bring the index up to date now, or the calls below that pass straight through
		   would leave it so, and each repeat of this one would search the file system again. */
		loaded_sync();
	}

	/* A $-token, RTLD_NOLOAD and RTLD_DEEPBIND keep the caller's exact semantics. */
	if (strchr(file, '$') || (mode & (RTLD_NOLOAD | RTLD_DEEPBIND))) {
		errno = saved_errno;
		goto pass;
	}
	busy = true;
	ensure_initialized();
	const struct config *config = config_get();
	bool handled = false;
	if (config->disabled)
		goto out;
	loaded_sync();
	if (by_path ? loaded_has_path(file) : loaded_has_soname(file)) {
		busy = false;
		handled = answer_loaded(file, by_path, mode, caller, handle);
		goto out;
	}
	struct libname_match match;
	int family = libnames_match_linux(name, &match);
	if (family < 0)
		goto out;
	if (by_path) {
		/* A path is the caller's choice and is never redirected; what it needs may be helped. */
		busy = false;
		*handle = load_by_path(family, file, mode, caller, config);
		handled = *handle != NULL;
		goto out;
	}
	if (config->policy == POLICY_OFF || libnames_is_driver(family))
		goto out;
	/* Constructors of the library loaded here may dlopen in turn: they deserve the full treatment. */
	busy = false;
	*handle = lookup_bare_name(file, mode, family, lookup_object_at(caller));
	handled = *handle != NULL;
out:
	busy = false;
	if (!handled)
		errno = saved_errno;
	return handled;
pass:
	if (!preload_real_dlopen)
		resolve_real_functions(); /* a dlopen from a constructor that ran before the runtime's */
	return false;
}

bool preload_route_dlmopen(Lmid_t namespace, const char *file, int mode, const void *caller, void **handle);
bool preload_route_dlmopen(Lmid_t namespace, const char *file, int mode, const void *caller, void **handle)
{
	/* Every dlmopen goes to the loader: code inside another namespace binds to that namespace's
	   own libc and never reaches these hooks, so nothing there could be redirected consistently.
	   An NVIDIA library given by path is still an origin worth knowing. */
	(void)namespace, (void)mode, (void)caller, (void)handle;
	if (busy)
		return false;
	int saved_errno = errno;
	busy = true;
	ensure_initialized();
	int family = file && strchr(file, '/') && !strchr(file, '$') ? libnames_match_linux(libnames_basename(file), NULL) : -1;
	if (!config_get()->disabled && family >= 0)
		if (dynamic_file_is_loadable(file))
			register_folder_of(family, file);
	busy = false;
	errno = saved_errno;
	return false;
}

/* ---- The attach scan ---------------------------------------------------------------------------
   A runtime dlopen'ed after NVIDIA libraries does not see their own dlopen calls (they are bound
   to libc's). For each loaded NVIDIA library whose run-time dependents its loader would not find,
   load them now from where the runtime finds them, so that the loader reuses them by soname. */

struct attach {
	const struct loaded_object *parent;
	struct libname_match parent_match;
	int loaded;
};

/* The file name of dependent family in the parent's folder: same .alt-ness, versioned, and of the
   parent's major version when there is one (libnvrtc.so.13 loads libnvrtc-builtins.so.13.0). */
static bool dependent_name(const struct attach *attach, int family, char *name, size_t size)
{
	char folder[PATH_MAX];
	if (!loaded_folder_of(attach->parent->path, folder, sizeof(folder)))
		return false;
	DIR *dir = opendir(folder);
	if (!dir)
		return false;
	const char *major = attach->parent_match.version;
	size_t major_length = strcspn(major, ".");
	bool found = false, found_same_major = false;
	struct dirent *entry;
	while ((entry = readdir(dir)) && !found_same_major) {
		struct libname_match match;
		if (libnames_match_linux(entry->d_name, &match) != family || match.alt != attach->parent_match.alt ||
		    match.hash_renamed || !match.version[0] || strlen(entry->d_name) >= size)
			continue;
		bool same_major = major_length && strncmp(match.version, major, major_length) == 0 &&
				  (match.version[major_length] == '.' || match.version[major_length] == '\0');
		if (!found || same_major) {
			strcpy(name, entry->d_name);
			found = true;
			found_same_major = same_major;
		}
	}
	closedir(dir);
	return found;
}

static bool attach_dependent(int family, void *arg)
{
	struct attach *attach = arg;
	char name[NAME_MAX + 1];
	loaded_sync(); /* a dependent this scan loaded for an earlier parent is loaded for this one too */
	if (libnames_is_driver(family) || loaded_has_family(family) || !dependent_name(attach, family, name, sizeof(name)))
		return false;
	/* The parent is held while it is looked at: another thread may dlclose it meanwhile. */
	void *pin = preload_real_dlopen(attach->parent->path, RTLD_LAZY | RTLD_NOLOAD);
	struct link_map *parent = NULL;
	if (!pin)
		return false; /* unloaded since the last sync */
	void *handle = dlinfo(pin, RTLD_DI_LINKMAP, &parent) == 0 && parent
			       ? lookup_bare_name(name, RTLD_LAZY | RTLD_LOCAL, family, parent)
			       : NULL;
	dlclose(pin);
	if (!handle)
		return false;
	/* The handle is kept: the dependent stays for the parent to find by soname. */
	attach->loaded++;
	struct link_map *object = NULL;
	dlinfo(handle, RTLD_DI_LINKMAP, &object);
	log_message(LOG_INFO, "attached late: loaded %s for %s", object ? object->l_name : name, attach->parent->path);
	log_event(&(struct log_event){ .event = "attach-load", .name = name, .path = object ? object->l_name : NULL,
				       .caller = attach->parent->path, .family = libnames[family].family,
				       .reason = "run-time dependent its loader would not find" });
	return false;
}

static bool attach_parent(const struct loaded_object *object, void *arg)
{
	struct attach *attach = arg;
	const char *runtime = libnames[object->family].runtime;
	if (!runtime[0] || libnames_match_linux(object->soname, &attach->parent_match) < 0)
		return false;
	attach->parent = object;
	libnames_foreach_family(runtime, attach_dependent, attach);
	return false;
}

/* True when the process binds dlopen to the hooks (preloaded, or linked ahead of libc). */
static bool hooks_bound(void) { return dlsym(RTLD_DEFAULT, "dlopen") == (void *)preload_hook_dlopen; }

static int attach_scan(void)
{
	struct attach attach = { 0 };
	ensure_initialized();
	const struct config *config = config_get();
	if (config->disabled)
		return 0;
	busy = true;
	loaded_sync();
	if (config->policy != POLICY_OFF && !hooks_bound())
		loaded_foreach(attach_parent, &attach);
	busy = false;
	return attach.loaded;
}

void front_sync(void)
{
	ensure_initialized();
	if (!config_get()->disabled)
		loaded_sync();
}

int front_rescan(void) { return attach_scan(); }

__attribute__((constructor)) static void start(void)
{
	int saved_errno = errno;
	attach_scan();
	errno = saved_errno;
}
