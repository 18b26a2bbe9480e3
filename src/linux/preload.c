/* The LD_PRELOAD front: the routes of the dlopen and dlmopen hooks (route.h), start-up and the
 * late-attach scan.
 *
 * A route classifies a call once and acts on the class:
 *   - not an NVIDIA name, a name with '$', RTLD_NOLOAD, RTLD_DEEPBIND, dlopen(NULL), the runtime
 *     disabled: passed to the loader with the caller's own frame (for RTLD_DEEPBIND, once libc's
 *     dlopen and dlmopen symbols lead to the hooks, which the deep-bound library binds to first);
 *   - a repeated load of an NVIDIA library that is loaded: the caller's call with RTLD_NOLOAD added,
 *     which for a loaded object is the loader's own answer (the same reference count and flag
 *     promotion, no search), so the caller's frame changes nothing;
 *   - an NVIDIA bare name that is not loaded: the loader gets it unless lookup.c plans a copy the
 *     loader would not find for the real caller (or, under coherent, the caller's own one);
 *   - an NVIDIA library by path: registered, and loaded after what it needs, when lookup.c plans
 *     some NVIDIA DT_NEEDED the loader would not find for it.
 * The runtime loads only what a plan names (and the library whose needs it loaded), outside any
 * lock of its own, with its recursion guard down, so constructors of what it loads reach the hooks
 * as any code does. Everything else, including every failure, goes to the plain loader. */
#define _GNU_SOURCE
#include "route.h"

#include "config.h"
#include "dynamic.h"
#include "front.h"
#include "libnames.h"
#include "loaded.h"
#include "loader/dst.h"
#include "log.h"
#include "lookup.h"
#include "origins.h"
#include "patch.h"
#include "real.h"
#include "registry.h"
#include "walk.h"
#include "report.h"
#include "start.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

/* The hooks themselves (hidden labels in passthru.S), to tell whether they are the ones the
   process binds to. */
extern char preload_hook_dlopen[];

/* What each thread keeps: whether it runs the runtime's own code now (outside the loads it makes:
   a dlopen that reaches the hooks then goes straight to the loader), and the object its last
   repeated load of an NVIDIA library was answered with, which most repeats ask for again. Kept
   small: a runtime dlopen'ed late takes this from the static TLS block's spare room. */
struct thread_state {
	const struct loaded_object *last; /* NULL, or the object of the last answer */
	bool last_by_path;                /* it was asked for by path (else by soname) */
	bool busy;
};
static __thread struct thread_state thread_state __attribute__((tls_model("initial-exec")));
#define busy thread_state.busy

/* Set at start-up: the process bound dlopen to the hooks before the runtime's constructor ran
   (preloaded, or linked ahead of libc); another copy of the runtime, loaded earlier, serves the
   process and this one passes every call on. */
static bool preloaded, deferring;

static const char *policy_name(void) { return config_policy_name(config_get()->policy); }

/* An object as events name it: its path, or the program's. */
static const char *object_name(const struct link_map *object)
{
	return object && object->l_name && object->l_name[0] ? object->l_name : loaded_program_path();
}

/* ---- carrying out a plan -------------------------------------------------------------------- */

/* The runtime's own load, with the recursion guard down for the constructors it runs. */
static void *load(const char *file, int mode)
{
	busy = false;
	void *handle = real_dlopen(file, mode);
	busy = true;
	return handle;
}

/* One load of a plan, with mode; NULL (and a warning) when it fails. The event is "redirect" (or
   "coherent") for a bare name the caller asked for, "needed" for what a library loaded by path
   needs, "attach-load" for what the attach scan loads. */
static void *load_planned(const struct lookup_load *planned, int mode, const char *asker, const char *event)
{
	if (planned->by_name_first) {
		void *handle = load(planned->name, mode);
		if (handle)
			return handle; /* the loader's ld.so.cache had it: its own answer */
	}
	/* glibc opens the file again by its path: it has no call that takes the descriptor the check
	   read (a /proc/self/fd path would become the library's name and its $ORIGIN). A copy that
	   changed since the check (an upgrade rewriting it) is not given to it. */
	if (!dynamic_file_unchanged(planned->path, &planned->identity)) {
		log_message(LOG_WARN, "%s for %s: %s changed since it was checked; not loaded", planned->name, asker, planned->path);
		return NULL;
	}
	void *handle = load(planned->path, mode);
	const char *reason = planned->coherent ? "coherent: the asker's folder or its wheel siblings" : search_step_name(planned->step);
	if (!handle) {
		log_message(LOG_WARN, "%s for %s: %s did not load: %s", planned->name, asker, planned->path, dlerror());
		return NULL;
	}
	if (strcmp(event, "redirect") == 0 && planned->coherent)
		event = "coherent";
	log_message(LOG_INFO, "%s for %s: loaded %s (%s)", planned->name, asker, planned->path, reason);
	log_event(&(struct log_event){ .event = event, .name = planned->name, .path = planned->path, .caller = asker,
				       .family = libnames[planned->family].family, .policy = policy_name(), .reason = reason });
	report_redirect(event, planned->name, planned->path, asker);
	return handle;
}

/* A library loaded by path after what it needs: each of those RTLD_LOCAL with the caller's binding
   mode (the loader then reuses them by soname), then the library with the caller's mode; then the
   runtime's own references go, so that dlclose still unloads the tree. NULL when nothing of the
   plan loaded (the plain loader then has the call) or the library itself did not load. */
static void *load_with_needs(const char *path, int mode, const struct lookup_plan *plan)
{
	void **handles = malloc(plan->count * sizeof(*handles));
	size_t held = 0;
	void *handle = NULL;
	for (size_t i = 0; handles && i < plan->count; i++) {
		const struct lookup_load *planned = &plan->loads[i];
		/* First loaded wins, even when it arrived a moment ago (another thread). */
		if (planned->coherent && lookup_loaded_by_name(planned->name))
			continue;
		void *needed = load_planned(planned, (mode & (RTLD_NOW | RTLD_LAZY)) | RTLD_LOCAL, path, "needed");
		if (needed)
			handles[held++] = needed;
	}
	if (held)
		handle = load(path, mode);
	for (size_t i = 0; i < held; i++)
		dlclose(handles[i]);
	free(handles);
	return handle;
}

/* ---- the routes --------------------------------------------------------------------------- */

/* A call the runtime may act on: an NVIDIA name, with the mode that allows it. */
struct request {
	const char *file;
	const char *name; /* its basename */
	bool by_path;
	int family;
	struct libname_match match; /* filled when the family is */
};


/* The object of a repeat of this thread's last answer, still loaded; else NULL. */
static const struct loaded_object *last_answer(const char *file)
{
	const struct loaded_object *last = thread_state.last;
	if (!last || strcmp(file, thread_state.last_by_path ? last->path : last->soname) != 0 || !loaded_still_loaded(last))
		return NULL;
	return last;
}

static const struct loaded_object *indexed(const struct request *request)
{
	return request->by_path ? loaded_find_path(request->file) : loaded_find_soname(request->file);
}

/* The hot path: the index says the object is loaded, and the caller's call with RTLD_NOLOAD added
   is then the loader's own answer (a $-token, RTLD_NOLOAD and RTLD_DEEPBIND change nothing for a
   loaded object, and no indexed name holds a '$'). When the index is behind (the object was unloaded
   since), that call loads nothing and returns NULL. */
static bool answer_loaded(const char *file, const struct loaded_object *object, bool by_path, int mode, const void *caller,
			  void **handle)
{
	void *loaded = real_dlopen(file, mode | RTLD_NOLOAD);
	if (!loaded)
		return false;
	thread_state.last = object;
	thread_state.last_by_path = by_path;
	if (!by_path && config_get()->policy == POLICY_COHERENT)
		lookup_report_mixed_origin(file, NULL, caller);
	*handle = loaded;
	return true;
}

/* An NVIDIA library loaded by path is registered before the loader has it, so that its folder is
   known even if it is unloaded before the runtime's next contact: the folder of the path as given
   (what $ORIGIN will mean), once the file is one the loader can take. */
static void register_path(int family, const char *path, const void *caller)
{
	char folder[PATH_MAX];
	if (dst_origin_of(path, folder, sizeof(folder)))
		origins_register(&(struct origin_load){ .family = family, .folder = folder, .path = path,
							.name = libnames_basename(path),
							.caller = object_name(lookup_object_at(caller)), .reason = "loaded by path" });
}

static enum route_action act_by_path(const struct request *request, int mode, const void *caller, void **handle)
{
	struct dynamic_file *file = malloc(sizeof(*file));
	struct lookup_plan *plan = NULL;
	enum route_action action = ROUTE_PASS;
	int read = file ? dynamic_read_file(request->file, file) : -ENOMEM;
	/* A file past the reader's bounds (or odd in ways the loader tolerates) is still registered. */
	if (read == 0 ? !dynamic_file_is_compatible(file) : !dynamic_file_is_loadable(request->file))
		goto out;
	register_path(request->family, request->file, caller);
	if (request->file[0] != '/')
		loaded_note_relative_load(request->file);
	/* A path is the caller's choice and is never redirected; what it needs may be helped. */
	if (read != 0 || config_get()->policy == POLICY_OFF || !(plan = malloc(sizeof(*plan))) ||
	    !lookup_needed(request->file, file, plan))
		goto out;
	if ((*handle = load_with_needs(request->file, mode, plan)))
		action = ROUTE_HANDLED;
out:
	free(plan);
	free(file);
	return action;
}

static enum route_action act_on_bare_name(const struct request *request, int mode, const void *caller, void **handle)
{
	struct lookup_plan *plan = NULL;
	enum route_action action = ROUTE_PASS;
	bool driver = libnames_is_driver(request->family);
	if (config_get()->policy == POLICY_OFF || !(plan = malloc(sizeof(*plan))))
		goto out;
	struct link_map *object = lookup_object_at(caller);
	const char *asker = object_name(object);
	if (!driver && lookup_bare_name(request->file, request->family, object, plan) &&
	    (*handle = load_planned(&plan->loads[0], mode, asker, "redirect"))) {
		action = ROUTE_HANDLED;
		goto out;
	}
	/* The loader has the call. When it loads the library, its origin is registered at the next
	   sync: with this caller. When nobody has it, that is a miss. */
	if (!report_misses_wanted(driver))
		goto out;
	if (driver || plan->missed)
		lookup_report_bare_miss(request->file, request->family, object, asker, !driver);
	loaded_note_asker(request->file, asker);
out:
	free(plan);
	return action;
}

/* A library loaded with RTLD_DEEPBIND binds its own dlopen in its own scope first, where libc
   defines it: libc's definitions are pointed at the hooks before the loader has the call (with
   the caller's frame), so that the library's own loads are seen as everyone's. Its origin is
   registered as for any load: by path now, by name at the next sync, with this caller. */
static void see_deep_binding(const struct request *request, const void *caller)
{
	if (walk_may_block()) /* a forked child before its first walk: the next such load does it */
		return;
	if (patch_for_deep_binding())
		log_message(LOG_DEBUG, "%s is loaded with RTLD_DEEPBIND: libc's dlopen and dlmopen lead to the hooks", request->file);
	else
		log_message(LOG_WARN, "%s is loaded with RTLD_DEEPBIND and libc is left alone (NVINTERPOSE_PATCH=0): its own dlopen calls bypass the runtime",
			    request->file);
	if (!request->by_path)
		loaded_note_asker(request->file, object_name(lookup_object_at(caller)));
	else if (dynamic_file_is_loadable(request->file))
		register_path(request->family, request->file, caller);
}

static enum route_action act(struct request *request, int mode, const void *caller, void **handle)
{
	const struct loaded_object *object = indexed(request);
	if (object) {
		if (answer_loaded(request->file, object, request->by_path, mode, caller, handle))
			return ROUTE_HANDLED;
		/* Behind: bring the index up to date now, or the calls below that pass straight through
		   would leave it so, and each repeat of this one would search the file system again. */
		loaded_sync();
	}
	/* A name the index does not know: its family, the whole match. */
	if ((request->family = libnames_match_linux(request->name, &request->match)) < 0)
		return ROUTE_PASS;
	if (strchr(request->file, '$') || (mode & RTLD_NOLOAD))
		return ROUTE_PASS;
	start_once();
	if (config_get()->disabled)
		return ROUTE_PASS;
	if (mode & RTLD_DEEPBIND) {
		see_deep_binding(request, caller);
		return ROUTE_PASS;
	}
	/* A forked child asks the loader before it syncs: for an object that is loaded, the plain call
	   takes no lock but the one glibc resets in a child, and neither may the runtime's answer. */
	if (walk_may_block() && answer_loaded(request->file, NULL, request->by_path, mode, caller, handle))
		return ROUTE_HANDLED;
	loaded_sync(); /* what loaded since the last call, its origins registered */
	/* Unloaded again since the sync (another thread's dlclose): not loaded, as for the loader. */
	if ((object = indexed(request)) && answer_loaded(request->file, object, request->by_path, mode, caller, handle))
		return ROUTE_HANDLED;
	return request->by_path ? act_by_path(request, mode, caller, handle) : act_on_bare_name(request, mode, caller, handle);
}

/* A call the first look found worth a second: errno kept from here on. */
static __attribute__((noinline)) enum route_action route_candidate(const char *file, const char *slash, int mode,
								     const void *caller, void **handle, int saved_errno)
{
	struct request request = { .file = file, .name = slash ? slash + 1 : file, .by_path = slash != NULL, .family = -1 };
	busy = true;
	enum route_action action = act(&request, mode, caller, handle);
	busy = false;
	errno = saved_errno;
	return action;
}

/* The first look, which every dlopen pays (the stub asks it alone): the basename, and whether the
   table may hold it (a glance at two characters turns away nearly every name a process loads,
   having changed nothing, errno included). The family is matched later, only for a name the index
   does not know. */
bool route_dlopen_glance(const char *file)
{
	if (__builtin_expect(!real_dlopen, 0))
		real_resolve(); /* a dlopen from a constructor that ran before the runtime's */
	if (!file || busy || deferring)
		return false;
	const char *slash = strrchr(file, '/');
	return libnames_may_match_linux(slash ? slash + 1 : file);
}

/* A name the glance let through. The hottest path: this thread's last answer asked for again (a
   success keeps errno). */
enum route_action route_dlopen(const char *file, int mode, const void *caller, void **handle)
{
	int saved_errno = errno;
	const struct loaded_object *last = last_answer(file);
	if (last && answer_loaded(file, last, thread_state.last_by_path, mode, caller, handle))
		return ROUTE_HANDLED;
	return route_candidate(file, strrchr(file, '/'), mode, caller, handle, saved_errno);
}

enum route_action route_dlmopen(Lmid_t namespace, const char *file, int mode, const void *caller, void **handle)
{
	/* Every dlmopen goes to the loader: code inside another namespace binds to that namespace's
	   own libc and never reaches these hooks, so nothing there could be redirected consistently.
	   An NVIDIA library given by path is still an origin worth knowing. */
	(void)namespace, (void)mode, (void)handle;
	int family = file && !busy && !deferring && strchr(file, '/') && !strchr(file, '$') ? libnames_match_linux(libnames_basename(file), NULL) : -1;
	if (family < 0)
		return ROUTE_PASS;
	int saved_errno = errno;
	busy = true;
	start_once();
	if (!config_get()->disabled && dynamic_file_is_loadable(file))
		register_path(family, file, caller);
	busy = false;
	errno = saved_errno;
	return ROUTE_PASS;
}

/* ---- The attach scan ---------------------------------------------------------------------------
   A runtime dlopen'ed after NVIDIA libraries does not see their own dlopen calls (they are bound
   to libc's). For each loaded NVIDIA library whose run-time dependents its loader would not find,
   load them now from where the runtime finds them, so that the loader reuses them by soname. */

struct attach {
	const struct loaded_object *parent;
	struct libname_match parent_match;
	struct lookup_plan plan;
	int loaded;
};

/* The file name of dependent family in the parent's folder that fits it best by the table's rule
   (libnames_dependent_fit: libnvrtc.so.13 loads libnvrtc-builtins.so.13.0); of names that fit as
   well, the first in byte order, whatever order the folder lists them in. */
static bool dependent_name(const struct attach *attach, int family, char *name, size_t size)
{
	char folder[PATH_MAX];
	if (!dst_origin_of(attach->parent->path, folder, sizeof(folder)))
		return false;
	DIR *dir = opendir(folder);
	if (!dir)
		return false;
	int best = -1;
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		int fit = libnames_dependent_fit(&attach->parent_match, family, entry->d_name);
		if (fit >= 0 && (fit > best || (fit == best && strcmp(entry->d_name, name) < 0)) && strlen(entry->d_name) < size) {
			strcpy(name, entry->d_name);
			best = fit;
		}
	}
	closedir(dir);
	return best >= 0;
}

static bool attach_dependent(int family, void *arg)
{
	struct attach *attach = arg;
	char name[NAME_MAX + 1];
	loaded_sync(); /* a dependent this scan loaded for an earlier parent is loaded for this one too */
	if (libnames_is_driver(family) || loaded_has_family(family) || !dependent_name(attach, family, name, sizeof(name)))
		return false;
	/* The parent is held while it is looked at: another thread may dlclose it meanwhile. */
	void *pin = real_dlopen(attach->parent->path, RTLD_LAZY | RTLD_NOLOAD);
	struct link_map *parent = NULL;
	if (!pin)
		return false; /* unloaded since the last sync */
	void *handle = NULL;
	if (dlinfo(pin, RTLD_DI_LINKMAP, &parent) == 0 && parent && lookup_bare_name(name, family, parent, &attach->plan))
		handle = load_planned(&attach->plan.loads[0], RTLD_LAZY | RTLD_LOCAL, attach->parent->path, "attach-load");
	dlclose(pin);
	if (handle) /* kept: the dependent stays for the parent to find by soname */
		attach->loaded++;
	return false;
}

static bool attach_parent(const struct loaded_object *object, void *arg)
{
	struct attach *attach = arg;
	const char *runtime = libnames[object->family].runtime;
	/* A parent loaded by a relative name has a folder the runtime cannot know now. */
	if (!runtime[0] || object->path[0] != '/' || libnames_match_linux(object->soname, &attach->parent_match) < 0)
		return false;
	attach->parent = object;
	libnames_foreach_family(runtime, attach_dependent, attach);
	return false;
}

/* True when the process binds dlopen to the hooks (preloaded, or linked ahead of libc). */
static bool hooks_bound(void) { return dlsym(RTLD_DEFAULT, "dlopen") == (void *)preload_hook_dlopen; }

static int attach_scan(void)
{
	start_once();
	const struct config *config = config_get();
	struct attach *attach;
	if (config->disabled || busy || !(attach = calloc(1, sizeof(*attach))))
		return 0;
	busy = true;
	loaded_sync();
	if (config->policy != POLICY_OFF && !preloaded)
		loaded_foreach(attach_parent, attach);
	busy = false;
	int loaded = attach->loaded;
	free(attach);
	return loaded;
}

void front_sync(void)
{
	start_once();
	if (!config_get()->disabled)
		loaded_sync();
}

int front_rescan(void)
{
	int loaded = attach_scan();
	if (!preloaded)
		patch_rescan();
	return loaded;
}

__attribute__((constructor)) static void start(void)
{
	int saved_errno = errno;
	/* As an audit library (its own namespace) the runtime only answers the loader (audit.c). */
	if (!start_in_audit_namespace()) {
		start_once(); /* libc's functions found before a patch changes what dlsym finds */
		if (!(deferring = patch_find_earlier_runtime())) {
			preloaded = hooks_bound();
			if (!preloaded)
				patch_attach();
			attach_scan();
		}
	}
	errno = saved_errno;
}

/* At exit (the runtime is never unloaded: -z nodelete): the report, when one was asked for. */
__attribute__((destructor)) static void stop(void)
{
	int saved_errno = errno;
	start_once();
	if (!config_get()->disabled && !start_in_audit_namespace())
		report_at_exit();
	errno = saved_errno;
}
