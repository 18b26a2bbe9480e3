/* Attaching. The constructor finds out how the runtime came into the process, and a runtime
 * dlopen'ed after NVIDIA libraries does not see their own dlopen calls (they are bound to libc's).
 * For each loaded NVIDIA library whose run-time dependents its loader would not find, the attach
 * scan loads them now from where the runtime finds them, so that the loader reuses them by soname.
 * The public API's scan (nvi_rescan) and sync come here too (front.h). */
#define _GNU_SOURCE
#include "attach.h"

#include "carry_out.h"
#include "config.h"
#include "dynamic.h"
#include "front.h"
#include "libnames.h"
#include "loaded.h"
#include "loader/dst.h"
#include "patch.h"
#include "plan.h"
#include "real.h"
#include "report.h"
#include "start.h"
#include "walk.h"

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

bool attach_deferring;
/* Set at start-up: the process bound dlopen to the hooks before the runtime's constructor ran
   (preloaded, or linked ahead of libc). */
static bool preloaded;

struct attach {
	const struct loaded_object *parent;
	struct libname_match parent_match;
	struct plan_load load;
	int loaded;
};

/* The file name of dependent family in the parent's folder that fits it best by the table's rule
   (libnames_dependent_fit: libnvrtc.so.13 loads libnvrtc-builtins.so.13.0). Of names that fit as
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
	struct plan_request request = { .kind = POLICY_ATTACH, .name = name, .family = family, .driver = libnames_is_driver(family),
					.loaded = loaded_has_family(family), .asker = attach->parent->path };
	if (!plan_worth_making(&request) || !dependent_name(attach, family, name, sizeof(name)))
		return false;
	/* The parent is held while it is looked at: another thread may dlclose it meanwhile. */
	void *pin = real_dlopen(attach->parent->path, RTLD_LAZY | RTLD_NOLOAD);
	void *handle = NULL;
	if (!pin)
		return false; /* unloaded since the last sync */
	if (real_dlinfo(pin, RTLD_DI_LINKMAP, &request.caller) == 0 && request.caller && plan_bare_name(&request, &attach->load))
		handle = carry_out_load(&attach->load, RTLD_LAZY | RTLD_LOCAL, &request);
	real_dlclose(pin);
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

/* True when the process binds dlopen to the hooks (preloaded, or linked ahead of libc): this copy is
   the first object in the loader's order that defines dlopen. The global scope is that order for
   the objects loaded at start-up, and a copy dlopen'ed later comes after libc. Asks the loader
   nothing (before glibc 2.34, libdl may not be loaded yet). */
struct first_definer {
	bool this_copy;
};

static int find_first_definer(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct first_definer *first = arg;
	struct dynamic_tables tables;
	(void)size;
	if (dynamic_segments_hold(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, (ElfW(Addr))preload_hook_dlopen, 1)) {
		first->this_copy = true;
		return 1;
	}
	return dynamic_may_define(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, "dlopen") &&
	       dynamic_read_tables(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &tables) &&
	       dynamic_defined_function(&tables, "dlopen");
}

static bool hooks_bound(void)
{
	struct first_definer first = { false };
	walk_loaded_objects(find_first_definer, &first);
	return first.this_copy;
}

static int attach_scan(void)
{
	start_once();
	const struct config *config = config_get();
	struct attach *attach;
	if (config->disabled || carry_out_busy || !(attach = calloc(1, sizeof(*attach))))
		return 0;
	carry_out_busy = true;
	loaded_sync();
	/* A scan is worth making when the policy may load anything at all. */
	struct plan_request any = { .kind = POLICY_ATTACH, .family = -1 };
	if (!preloaded && plan_worth_making(&any))
		loaded_foreach(attach_parent, attach);
	carry_out_busy = false;
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

/* Preloaded (or linked), the runtime only copies its settings and registers its fork handlers here:
   every dlopen reaches the hooks, and the first that may concern an NVIDIA library, or the first
   API call, starts the rest (start_once) and scans what is loaded. Attached late, it starts, patches
   and scans now: a library that kept a pointer to libc's dlopen never enters a hook. */
__attribute__((constructor)) static void start(void)
{
	int saved_errno = errno;
	/* As an audit library (its own namespace) the runtime only answers the loader (audit.c). */
	if (!start_in_audit_namespace()) {
		walk_init();
		start_copy_settings();
		if (!(attach_deferring = patch_find_earlier_runtime())) {
			preloaded = hooks_bound();
			if (!preloaded) {
				start_once(); /* libc's functions found before a patch changes what dlsym finds */
				patch_attach();
				attach_scan();
			}
		}
	}
	errno = saved_errno;
}

/* The report at exit, when one was asked for (start_wanted_at_exit). The runtime is never unloaded
   (-z nodelete). */
__attribute__((destructor)) static void stop(void)
{
	int saved_errno = errno;
	bool not_started;
	if (!start_in_audit_namespace() && start_wanted_at_exit(&not_started)) {
		if (not_started) {
			start_once();
			loaded_sync();
		}
		report_at_exit(REPORT_EXIT_WAIT);
	}
	errno = saved_errno;
}
