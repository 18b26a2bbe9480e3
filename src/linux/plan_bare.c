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

struct policy_question plan_question(const struct plan_request *request)
{
	const struct config *config = config_get();
	return (struct policy_question){
		.policy = config->policy,
		.secure = config->secure,
		.driver = request->driver,
		.request = request->kind,
		.loaded = request->loaded,
	};
}

bool plan_worth_making(const struct plan_request *request)
{
	struct policy_question question = plan_question(request);
	struct policy_answer answer = policy_decide(&question);
	if (answer.action == POLICY_USE_LOADED)
		return answer.check_mixed_origin;
	if (answer.action == POLICY_LEAVE)
		return false;
	/* Only a miss can come of a walk that looks in no place of the runtime's. */
	return answer.with_places || (policy_reports_misses(request->kind) && report_misses_wanted(request->driver));
}

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
	const struct plan_request *request;
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
	const char *name = bare->request->name;
	if (!(bare->listed = loader_facts_search_list(bare->request->caller)))
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
	*bare = (struct bare){ .request = request, .in_loader = in_loader };
	findings_init(findings, request->name, NULL);
	findings->asker = request->asker;
	findings->asker_folder = nvidia_folder_of(caller, bare->folder);
	findings->question = plan_question(request);
	findings->question.asker_is_nvidia = findings->asker_folder != NULL;
	findings->question.asker_nodeflib = dynamic_has_nodeflib(caller->l_ld);
	findings->walk_loader = walk_loader;
	findings->plan = bare;
	*answer = findings_decide(findings);
	const struct finding *taken = findings_taken(findings, answer);
	bool planned = taken && finding_fill_load(taken, request->name, request->family, answer, load);
	if (answer->reason == POLICY_BECAUSE_LOADER && findings->loader.loader == POLICY_LOADER_MAY_FIND)
		finding_report_unknown(request->name, caller->l_name && caller->l_name[0] ? caller->l_name : "(main program)",
				       "a copy in an hwcap subfolder the runtime cannot rank");
	if (answer->miss)
		finding_report_miss(&findings->loader, request->name, request->family, request->driver, request->asker, answer);
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

void plan_check_mixed_origin(const struct plan_request *request, const void *asker_code)
{
	char folder[PATH_MAX], loaded[PATH_MAX];
	struct policy_question question = plan_question(request);
	if (!policy_decide(&question).check_mixed_origin || !report_mixed_origin_first(request->name))
		return;
	const char *asker = request->asker;
	if (!asker) {
		struct link_map *object = loader_facts_object_at(asker_code);
		asker = object && object->l_name && object->l_name[0] ? object->l_name : NULL;
	}
	if (!asker || libnames_match_linux(libnames_basename(asker), NULL) < 0 || !dst_origin_of(asker, folder, sizeof(folder)) ||
	    !loaded_path_of_soname(request->name, loaded, sizeof(loaded)))
		return;
	struct finding *own = malloc(sizeof(*own));
	if (!own)
		return;
	finding_init(own, NULL);
	if (finding_walk_own(own, request->name, folder) && !platform_same_file(own->path, loaded))
		report_outcome(&(struct outcome){ .kind = OUTCOME_MIXED_ORIGIN, .name = request->name, .family = request->family,
						  .caller = asker, .path = loaded, .own = own->path });
	finding_free(own);
	free(own);
}
