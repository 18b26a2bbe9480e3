/* The LD_AUDIT front (LD_AUDIT=libnvinterpose.so, nvinterpose-run --audit): the loader itself asks
 * the runtime before each search, so a program linked directly against a wheel library whose NVIDIA
 * DT_NEEDED lies in a sibling wheel folder starts, which no LD_PRELOAD hook can help (the search
 * happens before main).
 *
 *   la_version    the version the loader offers, bounded by this build's LAV_CURRENT (glibc 2.35
 *                 and later on aarch64 refuse an auditor that answers 1 to a newer loader);
 *   la_objopen    every NVIDIA object mapped in any namespace has its folder registered; the object
 *                 is kept in the cookie, and 0 returned, so no symbol binding is traced;
 *   la_objsearch  answers for an NVIDIA name at LA_SER_ORIG, before the loader's own search. An
 *                 answer there replaces that search; answering a later candidate would make glibc
 *                 keep the candidate's name as the object's. The answer is a path only when the
 *                 requester's whole search, as far as this process can see it, holds no copy
 *                 (plan.h, plan_for_requester). That search is its RPATH chain, LD_LIBRARY_PATH,
 *                 RUNPATH and the system folders as the loader lists them. Every glibc-hwcaps
 *                 subfolder, a legacy hwcap folder or an ld.so.cache entry counts as "the loader
 *                 may find it". Otherwise the name is returned unchanged. The requester's search
 *                 list is asked of libdl, which only glibc 2.34 and later allow here
 *                 (start_libdl_usable). Before, every name is left to the loader and the audit
 *                 front only registers.
 *
 * The audit library is the same libnvinterpose.so, loaded into a namespace of its own with data of
 * its own: start-up there does nothing but this (start_in_audit_namespace). A preloaded copy
 * in the program's namespace and the audit copy learn the same origins, each from every load it
 * sees; neither answers where the loader would find the library, so both together do no worse than
 * either alone. Names asked in other dlmopen namespaces get the same answers: the loader asks there
 * too, per requester. */
#define _GNU_SOURCE
#include "config.h"
#include "libnames.h"
#include "loaded.h"
#include "loader/dst.h"
#include "loader_facts.h"
#include "log.h"
#include "origins.h"
#include "plan.h"
#include "platform.h"
#include "report.h"
#include "start.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT unsigned int la_version(unsigned int version);
EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie);
EXPORT char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag);

/* The handshake only copies the settings: the loader calls it in every process the front is given
   to, and most load no NVIDIA library. The rest starts with the first NVIDIA name. */
unsigned int la_version(unsigned int version)
{
	start_copy_settings();
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* True when the front may act on an NVIDIA name: started, and not disabled. */
static bool front_on(void)
{
	start_audit_once();
	return !config_get()->disabled;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	(void)lmid;
	*cookie = (uintptr_t)map;
	const char *path = map->l_name;
	char folder[PATH_MAX];
	int family = path && path[0] ? libnames_match_linux(libnames_basename(path), NULL) : -1;
	if (family < 0 || path[0] != '/' || !front_on() || !dst_origin_of(path, folder, sizeof(folder)))
		return 0;
	/* The requester of the search that found it, when la_objsearch noted one (the loader maps what
	   it searched for right after, on the same thread). */
	char asker[PATH_MAX];
	const char *base = libnames_basename(path);
	const char *how;
	bool asked = loaded_take_asker(base, base, asker, sizeof(asker), &how);
	origins_register(&(struct origin_load){ .family = family, .folder = folder, .path = path, .name = base,
						.caller = asked ? asker : NULL,
						.reason = asked ? "mapped (audit)" : "mapped (audit); the request was not seen" });
	return 0;
}

/* True when requester is a copy of the runtime: this file, or one of its name, preloaded in the
   program's namespace. Its loads by name (plan.h, by_name_first) ask the loader for its own
   answer, ld.so.cache included, before it loads its own copy by path and reports that as a
   redirect, with the real asker and the step: answered here, they would be counted nowhere and
   logged with the runtime as their caller. */
static bool is_runtime(const struct link_map *requester)
{
	static const char *own;
	if (!own) { /* la_objsearch runs under the loader's lock: one thread at a time */
		struct link_map *self = loader_facts_object_at((const void *)is_runtime);
		if (!self || !self->l_name || !self->l_name[0] || !platform_is_file(self->l_name))
			return false;
		own = self->l_name;
	}
	const char *path = requester->l_name;
	return path && path[0] &&
	       (strcmp(libnames_basename(path), libnames_basename(own)) == 0 || platform_same_file(path, own));
}

/* At exit, in the audit copy: the report of what it answered and registered, as the preload copy
   (preload.c) reports what it did; the two copies share no data. */
__attribute__((destructor)) static void report_audit_front(void)
{
	int saved_errno = errno;
	bool not_started;
	if (start_in_audit_namespace() && start_wanted_at_exit(&not_started)) {
		start_audit_once();
		report_name_front("audit front");
		report_at_exit(REPORT_EXIT_WAIT);
	}
	errno = saved_errno;
}

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	struct link_map *requester = (struct link_map *)*cookie;
	if (flag != LA_SER_ORIG || !requester || strchr(name, '/'))
		return (char *)name;
	struct plan_request request = { .kind = POLICY_AUDIT, .name = name, .family = libnames_match_linux(name, NULL),
					.caller = requester };
	if (request.family < 0 || !front_on())
		return (char *)name;
	request.driver = libnames_is_driver(request.family);
	if (!plan_worth_making(&request))
		return (char *)name;
	if (!start_libdl_usable()) {
		log_message(LOG_DEBUG, "%s: left to the loader (before glibc 2.34 an audit library cannot ask libdl; see start.h)",
			    name);
		return (char *)name;
	}
	int saved_errno = errno;
	if (is_runtime(requester)) {
		errno = saved_errno;
		return (char *)name;
	}
	char *answer = (char *)name;
	struct plan_load *load = malloc(sizeof(*load));
	request.asker = requester->l_name && requester->l_name[0] ? requester->l_name : loaded_program_path();
	if (report_askers_wanted())
		loaded_note_asker(name, request.asker, NULL);
	/* The answer's storage outlives the call: the loader keeps using the name it gets. */
	if (load && plan_for_requester(&request, load) && (answer = strdup(load->path)))
		report_outcome(&(struct outcome){ .kind = OUTCOME_LOADED, .request = POLICY_AUDIT, .answer = &load->answer,
						  .name = name, .family = request.family, .caller = request.asker, .path = answer });
	else
		answer = (char *)name;
	free(load);
	errno = saved_errno;
	return answer;
}
