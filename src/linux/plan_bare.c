/* Bare names: what the runtime loads for a name a caller dlopens, the audit front's requester
 * searches, or the attach scan looks for.
 *
 * The loader's own search for the caller decides first, as the loader lists it for a loaded
 * object (dlinfo RTLD_DI_SERINFO). When the file is there the loader gets the call untouched.
 * Otherwise the runtime's first copy (a registered origin, a wheel sibling, NVINTERPOSE_PATH) is
 * the plan, after the loader has been asked by name for its ld.so.cache, which no list shows.
 * Under coherent, an NVIDIA caller's own folder and its wheel siblings come before the loader's
 * choice. One walk learns the loader's answer, the runtime's copy and, for a miss, every place. */
#define _GNU_SOURCE
#include "plan.h"

#include "config.h"
#include "finding.h"
#include "libnames.h"
#include "loaded.h"
#include "loader/dst.h"
#include "loader_facts.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* The folder of caller (PATH_MAX bytes at folder) when it is an NVIDIA library, else NULL. */
static const char *nvidia_folder_of(struct link_map *caller, char *folder)
{
	const char *caller_name = caller->l_name && caller->l_name[0] ? caller->l_name : "";
	bool nvidia = libnames_match_linux(libnames_basename(caller_name), NULL) >= 0 && dst_origin_of(caller_name, folder, PATH_MAX);
	return nvidia ? folder : NULL;
}

/* One bare-name question in progress, on the heap. */
struct bare {
	struct findings findings;
	bool in_loader;
	char folder[PATH_MAX];
	struct loader_facts_list *listed;
	char cached[PATH_MAX];
};

/* The loader's search for the caller, as the loader lists it; inside the loader, ld.so.cache as
   its file holds it. */
static bool walk_loader(struct findings *findings, struct search_request *walk)
{
	struct bare *bare = findings->plan;
	const char *name = findings->request->name;
	if (!(bare->listed = loader_facts_search_list(findings->request->caller)))
		return false;
	struct loader_object asker = { .listed = loader_facts_list_of(bare->listed) };
	struct loader_process process = { 0 };
	walk->lookup = LOADER_BARE_NAME;
	walk->asker = &asker;
	walk->process = &process;
	walk->machine = loader_facts_machine();
	if (bare->in_loader && loader_facts_cache_entry(name, bare->cached, sizeof(bare->cached)))
		walk->cache_entry = bare->cached;
	finding_walk(&findings->loader, walk);
	return true;
}

static bool plan_bare(const struct plan_request *request, bool in_loader, struct policy_answer *answer, struct plan_load *load)
{
	struct bare *bare = calloc(1, sizeof(*bare));
	if (!bare)
		return false;
	struct findings *findings = &bare->findings;
	struct link_map *caller = request->caller;
	bare->in_loader = in_loader;
	findings_init(findings, request, NULL);
	findings->asker_folder = nvidia_folder_of(caller, bare->folder);
	findings->question.asker_is_nvidia = findings->asker_folder != NULL;
	findings->question.asker_nodeflib = dynamic_has_nodeflib(caller->l_ld);
	findings->walk_loader = walk_loader;
	findings->plan = bare;
	const struct finding *taken = findings_settle(findings, answer);
	bool planned = taken && findings_fill_load(findings, taken, answer, load);
	if (answer->reason == POLICY_BECAUSE_LOADER && findings->loader.loader == POLICY_LOADER_MAY_FIND)
		finding_report_unknown(request->name, caller->l_name && caller->l_name[0] ? caller->l_name : "(main program)",
				       "a copy in an hwcap subfolder the runtime cannot rank");
	findings_free(findings);
	loader_facts_free_list(bare->listed);
	free(bare);
	return planned;
}

bool plan_bare_name(const struct plan_request *request, struct plan *plan)
{
	plan->count = plan_bare(request, false, &plan->answer, &plan->loads[0]) ? 1 : 0;
	return plan->count > 0;
}

bool plan_for_requester(const struct plan_request *request, struct plan_load *load)
{
	struct policy_answer answer;
	return plan_bare(request, true, &answer, load);
}

/* ---- first loaded wins ---- */

void plan_check_mixed_origin(const char *name, int family, const char *asker, const void *asker_code)
{
	char folder[PATH_MAX], loaded[PATH_MAX];
	struct plan_request request = { .kind = POLICY_DLOPEN, .name = name, .family = family, .driver = libnames_is_driver(family),
					.loaded = true };
	struct policy_question question = plan_question(&request);
	if (!policy_decide(&question).check_mixed_origin || !report_mixed_origin_first(name))
		return;
	struct link_map *object = asker ? NULL : loader_facts_object_at(asker_code);
	const char *who = asker ? asker : object && object->l_name && object->l_name[0] ? object->l_name : NULL;
	if (!who || libnames_match_linux(libnames_basename(who), NULL) < 0 || !dst_origin_of(who, folder, sizeof(folder)) ||
	    !loaded_path_of_soname(name, loaded, sizeof(loaded)))
		return;
	struct finding *own = malloc(sizeof(*own));
	if (!own)
		return;
	finding_init(own, NULL);
	if (finding_walk_own(own, name, folder) && !platform_same_file(own->path, loaded))
		report_outcome(&(struct outcome){ .kind = OUTCOME_MIXED_ORIGIN, .name = name, .family = family, .caller = who,
						  .path = loaded, .own = own->path });
	finding_free(own);
	free(own);
}
