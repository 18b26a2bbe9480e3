/* DT_NEEDED: before an NVIDIA library is loaded by path, each NVIDIA name it needs is looked for
 * where the loader will look for it on behalf of an object that dlopen maps (src/loader). That is
 * the library's RPATH unless it has a RUNPATH, the program's RPATH, LD_LIBRARY_PATH, the library's
 * RUNPATH, ld.so.cache and the system folders, never the dlopen caller's lists. The ones found
 * nowhere but in the runtime's places go into the plan, leaves first: a copy the runtime loads is
 * dlopen'ed in its turn, so its own needs come before it. */
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

struct needs {
	struct plan *plan;
	const struct loader_process *process; /* the program's RPATH, LD_LIBRARY_PATH, the system folders */
	size_t visited_count;
	char visited[PLAN_MAX_LOADS][NAME_MAX + 1];
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
	if (needs->visited_count < PLAN_MAX_LOADS && strlen(name) <= NAME_MAX)
		strcpy(needs->visited[needs->visited_count++], name);
	return false;
}

static bool model_parent(struct parent *parent)
{
	const struct dynamic_file *file = parent->file;
	if (!loader_facts_expand(file->runpath ? NULL : file->rpath, parent->folder, &parent->rpath, &parent->rpath_count) ||
	    !loader_facts_expand(file->runpath, parent->folder, &parent->runpath, &parent->runpath_count))
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
	loader_facts_free_elements(parent->rpath, parent->rpath_count);
	loader_facts_free_elements(parent->runpath, parent->runpath_count);
}

static void plan_needs_of(struct parent *parent, struct needs *needs, int depth);

/* One DT_NEEDED lookup, on the heap: the lookup recurses (leaves first). */
struct need {
	struct findings findings;
	struct parent *parent;
	const struct loader_process *process;
	char folder[PATH_MAX];
	struct parent child;
};

/* The loader's search for the parent, an object dlopen maps. */
static bool walk_loader(struct findings *findings, struct search_request *walk)
{
	struct need *need = findings->plan;
	walk->lookup = LOADER_NEEDED_OF_DLOPENED;
	walk->asker = &need->parent->model;
	walk->process = need->process;
	walk->machine = loader_facts_machine();
	finding_walk(&findings->loader, walk);
	if (!findings->question.driver && findings->loader.loader == POLICY_LOADER_MAY_FIND)
		finding_report_unknown(findings->request->name, need->parent->path, "a copy in an hwcap subfolder the runtime cannot rank");
	return true;
}

/* The copy the runtime loads is dlopen'ed in its turn: its own needs come first. */
static void plan_needs_of_copy(struct need *need, const struct finding *taken, struct needs *needs, int depth)
{
	struct parent *child = &need->child;
	if (depth >= POLICY_NEEDED_MAX_DEPTH || !dst_origin_of(taken->path, need->folder, sizeof(need->folder)))
		return;
	*child = (struct parent){ .path = taken->path, .folder = need->folder, .file = taken->file };
	if (model_parent(child))
		plan_needs_of(child, needs, depth + 1);
	free_parent(child);
}

/* A DT_NEEDED name as the policy sees it (family -1: not NVIDIA's). */
static struct plan_request need_request(const char *name, const char *parent)
{
	struct plan_request request = { .kind = POLICY_NEEDED, .name = name, .family = libnames_match_linux(name, NULL), .asker = parent };
	if (request.family >= 0) {
		request.driver = libnames_is_driver(request.family);
		request.loaded = loaded_has_soname(name);
	}
	return request;
}

/* One DT_NEEDED name of parent: nothing when it is not NVIDIA's, loaded, or found by the loader;
   otherwise planned from where the policy takes it, after its own needs. */
static void plan_need(struct parent *parent, const char *name, struct needs *needs, int depth)
{
	struct plan_request request = need_request(name, parent->path);
	if (request.family < 0 || visited_before(needs, name))
		return;
	struct need *need = request.loaded ? NULL : calloc(1, sizeof(*need));
	if (!need) {
		if (request.loaded)
			plan_check_mixed_origin(name, request.family, parent->path, NULL);
		return;
	}
	struct findings *findings = &need->findings;
	struct plan *plan = needs->plan;
	struct policy_answer answer;
	need->parent = parent;
	need->process = needs->process;
	findings_init(findings, &request, name);
	findings->asker_folder = parent->folder;
	findings->question.asker_is_nvidia = true;
	findings->question.asker_nodeflib = parent->file->nodeflib;
	findings->walk_loader = walk_loader;
	findings->plan = need;
	const struct finding *taken = findings_settle(findings, &answer);
	if (taken) {
		plan_needs_of_copy(need, taken, needs, depth);
		if (plan->count < PLAN_MAX_LOADS && findings_fill_load(findings, taken, &answer, &plan->loads[plan->count]))
			plan->count++;
	}
	findings_free(findings);
	free(need);
}

static void plan_needs_of(struct parent *parent, struct needs *needs, int depth)
{
	for (size_t i = 0; i < parent->file->needed_count; i++)
		plan_need(parent, parent->file->needed[i], needs, depth);
}

/* Most libraries need no NVIDIA library that is not loaded yet: they need nothing from here (but
   under coherent, a loaded one may still be a mixed origin to report). */
static bool needs_the_runtime(const struct dynamic_file *file)
{
	for (size_t i = 0; i < file->needed_count; i++) {
		struct plan_request request = need_request(file->needed[i], NULL);
		if (request.family >= 0 && plan_worth_making(&request))
			return true;
	}
	return false;
}

static void report_needs_unknown(const char *path, const struct dynamic_file *file, const char *why)
{
	for (size_t i = 0; i < file->needed_count; i++) {
		int family = libnames_match_linux(file->needed[i], NULL);
		if (family >= 0 && !libnames_is_driver(family))
			finding_report_unknown(file->needed[i], path, why);
	}
}

bool plan_needed(const char *path, const struct dynamic_file *file, struct plan *plan)
{
	struct needs *needs = NULL;
	struct loader_facts_process *lists = NULL;
	char folder[PATH_MAX];
	struct parent parent = { .path = path, .folder = folder, .file = file };
	plan->count = 0;
	if (!needs_the_runtime(file) || !dst_origin_of(path, folder, sizeof(folder)))
		goto out;
	if (!model_parent(&parent)) {
		report_needs_unknown(path, file, "its RPATH or RUNPATH uses $LIB or $PLATFORM, which the loader did not tell");
		goto out;
	}
	if (!(needs = calloc(1, sizeof(*needs))))
		goto out;
	if (!(lists = loader_facts_process_lists())) {
		report_needs_unknown(path, file, "the loader's lists of this process could not be read");
		goto out;
	}
	needs->plan = plan;
	needs->process = loader_facts_process_of(lists);
	plan_needs_of(&parent, needs, 0);
out:
	free_parent(&parent);
	free(needs);
	loader_facts_free_process(lists);
	return plan->count > 0;
}
