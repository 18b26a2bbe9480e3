/* The LD_PRELOAD front: the routes of the dlopen and dlmopen hooks (route.h).
 *
 * A route classifies a call once and acts on the class.
 *   - The loader has the call with the caller's own frame for a name that is not NVIDIA's, a name
 *     with '$', RTLD_NOLOAD, RTLD_DEEPBIND, dlopen(NULL) and a runtime disabled. Before a
 *     RTLD_DEEPBIND load, libc's dlopen and dlmopen symbols are pointed at the hooks, since the
 *     deep-bound library binds to them first.
 *   - A repeated load of an NVIDIA library that is loaded is the caller's call with RTLD_NOLOAD
 *     added. For a loaded object that is the loader's own answer (the same reference count and
 *     flag promotion, no search), so the caller's frame changes nothing.
 *   - An NVIDIA bare name that is not loaded goes to the loader, unless a plan (plan.h) takes a
 *     copy the loader would not find for the real caller (under coherent, the caller's own one).
 *   - An NVIDIA library by path is registered. It is loaded after what it needs when a plan takes
 *     some NVIDIA DT_NEEDED the loader would not find for it.
 * The runtime loads only what a plan names, and the library whose needs it loaded (carry_out.h).
 * Everything else, including every failure, goes to the plain loader. */
#define _GNU_SOURCE
#include "route.h"

#include "attach.h"
#include "carry_out.h"
#include "config.h"
#include "dynamic.h"
#include "libnames.h"
#include "loaded.h"
#include "loader/dst.h"
#include "loader_facts.h"
#include "log.h"
#include "origins.h"
#include "patch.h"
#include "plan.h"
#include "real.h"
#include "report.h"
#include "start.h"
#include "walk.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

/* The object this thread's last repeated load of an NVIDIA library was answered with, which most
   repeats ask for again. */
struct last_answer {
	const struct loaded_object *object; /* NULL, or the object of the last answer */
	bool by_path;                       /* it was asked for by path (else by soname) */
};
static __thread struct last_answer last_answer __attribute__((tls_model("initial-exec")));

/* An object as events name it: its path, or the program's. */
static const char *object_name(const struct link_map *object)
{
	return object && object->l_name && object->l_name[0] ? object->l_name : loaded_program_path();
}

/* A call the runtime may act on: an NVIDIA name, and what the route learned of it. */
struct request {
	const char *file;
	const char *name; /* its basename */
	bool by_path;
	int family;
	bool driver;
};

/* The object of a repeat of this thread's last answer, still loaded; else NULL. */
static const struct loaded_object *repeated(const char *file)
{
	const struct loaded_object *last = last_answer.object;
	if (!last || strcmp(file, last_answer.by_path ? last->path : last->soname) != 0 || !loaded_still_loaded(last))
		return NULL;
	return last;
}

/* First loaded wins. Under coherent, a bare name's answer may be a mixed origin. The index's
   object tells its family, driver flag and path; without one (a forked child before its first
   walk) the route's request tells the family, and no path is known. */
static __attribute__((noinline)) void check_mixed_origin(const char *file, const struct loaded_object *object,
							  const struct request *request, const void *caller)
{
	plan_check_mixed_origin(&(struct plan_request){ .kind = POLICY_DLOPEN, .name = file,
							.family = object ? object->family : request->family,
							.driver = object ? object->driver : request->driver, .loaded = true,
							.loaded_path = object ? object->path : NULL },
				NULL, caller);
}

/* The hot path: the index says the object is loaded, and the caller's call with RTLD_NOLOAD added
   is then the loader's own answer (a $-token, RTLD_NOLOAD and RTLD_DEEPBIND change nothing for a
   loaded object, and no indexed name holds a '$'). When the index is behind (the object was unloaded
   since), that call loads nothing and returns NULL. request is the route's when object is NULL. */
static bool answer_loaded(const char *file, bool by_path, const struct loaded_object *object, const struct request *request,
			  int mode, const void *caller, void **handle)
{
	void *loaded = real_dlopen(file, mode | RTLD_NOLOAD);
	if (!loaded)
		return false;
	last_answer = (struct last_answer){ object, by_path };
	if (!by_path && policy_watches_mixed_origins(config_get()->policy) && (!object || loaded_mixed_origin_first(object)))
		check_mixed_origin(file, object, request, caller);
	*handle = loaded;
	return true;
}

/* The index's object for the request, answered as the loader's own. When the index is behind, it
   is brought up to date now, or the calls that pass straight through would leave it so, and each
   repeat of this one would search the file system again. */
static bool answer_indexed(const struct request *request, int mode, const void *caller, void **handle)
{
	const struct loaded_object *object = loaded_find(request->file, request->by_path);
	if (!object)
		return false;
	if (answer_loaded(request->file, request->by_path, object, request, mode, caller, handle))
		return true;
	loaded_sync();
	return false;
}

/* What a by-path route learned of its file, once. */
struct by_path {
	struct dynamic_file *file; /* where the file is read, or NULL when only its header is wanted */
	bool read;                 /* file holds the read */
	bool placed;               /* folder holds the folder of the path */
	char folder[PATH_MAX];
};

/* An NVIDIA library loaded by path is registered before the loader has it, so that its folder is
   known even if it is unloaded before the runtime's next contact: the folder of the path as given
   (what $ORIGIN will mean), once the file is one the loader can take. A relative name is noted
   then, since a later scan can no longer tell its folder. The file is read once, into seen. False
   when the loader cannot take it. */
static bool register_by_path(const struct request *request, struct by_path *seen, const void *caller)
{
	seen->read = seen->file && dynamic_read_file(request->file, seen->file) == 0;
	/* A file past the reader's bounds (or odd in ways the loader tolerates) is still registered. */
	if (seen->read ? !dynamic_file_is_compatible(seen->file) : !dynamic_file_is_loadable(request->file))
		return false;
	seen->placed = dst_origin_of(request->file, seen->folder, sizeof(seen->folder));
	if (seen->placed)
		origins_register(&(struct origin_load){ .family = request->family, .folder = seen->folder, .path = request->file,
							.name = request->name, .caller = object_name(loader_facts_object_at(caller)),
							.reason = "loaded by path" });
	if (request->file[0] != '/')
		loaded_note_relative_load(request->file);
	return true;
}

static enum route_action act_by_path(const struct request *request, int mode, const void *caller, void **handle)
{
	struct by_path seen = { .file = malloc(sizeof(*seen.file)) };
	struct plan *plan = NULL;
	enum route_action action = ROUTE_PASS;
	if (!register_by_path(request, &seen, caller))
		goto out;
	/* A path is the caller's choice and is never redirected; what it needs may be helped. */
	if (!seen.placed || !seen.read || !(plan = malloc(sizeof(*plan))) || !plan_needed(request->file, seen.folder, seen.file, plan))
		goto out;
	if ((*handle = carry_out_with_needs(request->file, mode, plan)))
		action = ROUTE_HANDLED;
out:
	free(plan);
	free(seen.file);
	return action;
}

static enum route_action act_on_bare_name(const struct request *request, int mode, const void *caller, void **handle)
{
	struct link_map *object = loader_facts_object_at(caller);
	struct plan_request asked = { .kind = POLICY_DLOPEN, .name = request->file, .family = request->family,
				      .driver = request->driver, .caller = object, .asker = object_name(object) };
	asked.weight = report_miss_weight(POLICY_DLOPEN, asked.asker, asked.family, asked.driver);
	asked.heard = report_misses_wanted(asked.weight);
	if (!plan_worth_making(&asked))
		return ROUTE_PASS;
	struct plan_load *load = malloc(sizeof(*load));
	if (load && plan_bare_name(&asked, load) && (*handle = carry_out_load(load, mode, &asked))) {
		free(load);
		return ROUTE_HANDLED;
	}
	free(load);
	/* The loader has the call. When it loads the library, its origin is registered at the next
	   sync, with this caller. */
	if (report_askers_wanted())
		loaded_note_asker(request->file, asked.asker, NULL);
	return ROUTE_PASS;
}

/* A library loaded with RTLD_DEEPBIND binds its own dlopen in its own scope first, where libc
   defines it. libc's definitions are pointed at the hooks before the loader has the call (with
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
	struct by_path seen = { .file = NULL };
	if (request->by_path)
		register_by_path(request, &seen, caller);
	else
		loaded_note_asker(request->file, object_name(loader_facts_object_at(caller)), NULL);
}

static enum route_action act(struct request *request, int mode, const void *caller, void **handle)
{
	if (answer_indexed(request, mode, caller, handle))
		return ROUTE_HANDLED;
	/* A name the index does not know: its family. */
	if ((request->family = libnames_match_linux(request->name, NULL)) < 0)
		return ROUTE_PASS;
	request->driver = libnames_is_driver(request->family);
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
	if (walk_may_block() && answer_loaded(request->file, request->by_path, NULL, request, mode, caller, handle))
		return ROUTE_HANDLED;
	loaded_sync(); /* what loaded since the last call, its origins registered */
	/* Unloaded again since the sync (another thread's dlclose): not loaded, as for the loader. */
	if (answer_indexed(request, mode, caller, handle))
		return ROUTE_HANDLED;
	return request->by_path ? act_by_path(request, mode, caller, handle) : act_on_bare_name(request, mode, caller, handle);
}

/* A call the first look found worth a second: errno kept from here on. */
static __attribute__((noinline)) enum route_action route_candidate(const char *file, const char *slash, int mode,
								     const void *caller, void **handle, int saved_errno)
{
	struct request request = { .file = file, .name = slash ? slash + 1 : file, .by_path = slash != NULL, .family = -1 };
	carry_out_busy = true;
	enum route_action action = act(&request, mode, caller, handle);
	carry_out_busy = false;
	errno = saved_errno;
	return action;
}

/* The first look, which every dlopen pays (the stub asks it alone): the basename, and whether the
   table may hold it (a glance at two characters turns away nearly every name a process loads,
   having changed nothing, errno included). The family is matched later, only for a name the index
   does not know. */
bool route_dlopen_glance(const char *file)
{
	if (__builtin_expect(!real_dlopen, 0)) {
		real_resolve(); /* preloaded, the runtime finds it at the first call */
		if (!real_dlopen)
			return true; /* no loader function yet: route_dlopen answers */
	}
	if (!file || carry_out_busy || attach_deferring)
		return false;
	const char *slash = strrchr(file, '/');
	return libnames_may_match_linux(slash ? slash + 1 : file);
}

/* A name the glance let through. The hottest path: this thread's last answer asked for again (a
   success keeps errno). */
enum route_action route_dlopen(const char *file, int mode, const void *caller, void **handle)
{
	if (__builtin_expect(!real_dlopen, 0)) {
		*handle = NULL; /* before glibc 2.34, a caller that reached dlopen with no libdl.so.2 loaded */
		return ROUTE_HANDLED;
	}
	int saved_errno = errno;
	const struct loaded_object *last = repeated(file);
	if (last && answer_loaded(file, last_answer.by_path, last, NULL, mode, caller, handle))
		return ROUTE_HANDLED;
	return route_candidate(file, strrchr(file, '/'), mode, caller, handle, saved_errno);
}

enum route_action route_dlmopen(Lmid_t namespace, const char *file, int mode, const void *caller, void **handle)
{
	/* Every dlmopen goes to the loader: code inside another namespace binds to that namespace's
	   own libc and never reaches these hooks, so nothing there could be redirected consistently.
	   An NVIDIA library given by path is still an origin worth knowing. */
	(void)namespace, (void)mode;
	if (__builtin_expect(!real_dlmopen, 0)) {
		real_resolve(); /* preloaded, the runtime finds it at the first call */
		if (!real_dlmopen) {
			*handle = NULL; /* as for dlopen above */
			return ROUTE_HANDLED;
		}
	}
	int family = file && !carry_out_busy && !attach_deferring && strchr(file, '/') && !strchr(file, '$')
			     ? libnames_match_linux(libnames_basename(file), NULL)
			     : -1;
	if (family < 0)
		return ROUTE_PASS;
	int saved_errno = errno;
	carry_out_busy = true;
	start_once();
	struct request request = { .file = file, .name = libnames_basename(file), .by_path = true, .family = family };
	struct by_path seen = { .file = NULL };
	if (!config_get()->disabled)
		register_by_path(&request, &seen, caller);
	carry_out_busy = false;
	errno = saved_errno;
	return ROUTE_PASS;
}
