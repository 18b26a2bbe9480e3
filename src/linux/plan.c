/* Planning what the runtime loads for an NVIDIA name (plan.h).
 *
 * A bare name: the loader's own search for the caller decides first, as the loader lists it for a
 * loaded object (dlinfo RTLD_DI_SERINFO). When the file is there the loader gets the call untouched.
 * Otherwise the runtime's first copy (a registered origin, a wheel sibling, NVINTERPOSE_PATH) is the
 * plan, after the loader has been asked by name for its ld.so.cache, which no list shows.
 *
 * DT_NEEDED: before an NVIDIA library is loaded by path, each NVIDIA name it needs is looked for
 * where the loader will look for it on behalf of an object that dlopen maps (src/loader). That is
 * the library's RPATH unless it has a RUNPATH, the program's RPATH, LD_LIBRARY_PATH, the library's
 * RUNPATH, ld.so.cache and the system folders, never the dlopen caller's lists. The ones found
 * nowhere but in the runtime's places go into the plan, leaves first: a copy the runtime loads is
 * dlopen'ed in its turn, so its own needs come before it.
 *
 * Under coherent, the asker's own folder and its wheel siblings come before the loader's choice.
 * The policy (policy.h) decides; one walk learns the loader's answer, the runtime's copy and, for a
 * miss, every place tried. Each candidate is read once, and the copy taken keeps what the read
 * found (its header, SONAME, DT_NEEDED, whether the loader can map it whole). */
#define _GNU_SOURCE
#include "plan.h"

#include "origins.h"

#include "config.h"
#include "libnames.h"
#include "loaded.h"
#include "loader/dst.h"
#include "loader_facts.h"
#include "log.h"
#include "platform.h"
#include "report.h"
#include "search.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOKED_MAX 256

struct finding {
	enum policy_loader_answer loader;
	char loader_path[PATH_MAX]; /* the loader's copy, when it is POLICY_LOADER_FINDS */
	bool found;                 /* a copy in the runtime's places */
	char path[PATH_MAX];
	enum search_step step;
	struct dynamic_file *file;  /* that copy as read */
	/* For a DT_NEEDED name: the SONAME a copy must have. The loader takes a loaded object for a
	   DT_NEEDED name by its SONAME (or a name it was loaded under, which for the runtime's loads
	   is a path). A copy without it would be loaded for nothing. */
	const char *soname;
	/* The places tried, in order, each once, when a miss may be reported; NULL otherwise. */
	struct log_looked *looked;
	size_t looked_count;
};

/* One name's question in progress: the policy's facts and the findings they come from. On the
   heap, since two findings are two paths each. */
struct findings {
	struct policy_question question;
	const struct plan_request *request;
	const char *asker_folder; /* the folder whose copy is the asker's own, and the first place */
	struct finding loader;    /* the loader's search and, with places, the runtime's after it */
	struct finding own;       /* the asker's folder and its wheel siblings */
	/* The plan's walk of the loader's search for the name: it fills walk (its loader part) and
	   calls finding_walk. False when the search cannot be known. */
	bool (*walk_loader)(struct findings *findings, struct search_request *walk);
	void *plan;
};

/* ---- findings: one walk, each candidate judged once ---- */

static void finding_init(struct finding *finding, const char *soname)
{
	/* Its two paths are not zeroed whole: a walk runs on every miss. */
	finding->loader = POLICY_LOADER_MISSES;
	finding->loader_path[0] = '\0';
	finding->found = false;
	finding->path[0] = '\0';
	finding->step = 0;
	finding->file = NULL;
	finding->soname = soname;
	finding->looked = NULL;
	finding->looked_count = 0;
}

static void finding_free(struct finding *finding)
{
	for (size_t i = 0; finding->looked && i < finding->looked_count; i++)
		free((char *)finding->looked[i].folder);
	free(finding->looked);
	free(finding->file);
	finding->looked = NULL;
	finding->file = NULL;
}

/* A copy in one of the runtime's own places is loaded only when the loader can map it whole: a
   shared object of this process's kind whose load segments lie inside the file, with what the
   loader reads in memory inside them. A copy cut short by an interrupted install would be mapped
   past its end, a SIGBUS in the host where the loader alone fails cleanly. For a DT_NEEDED name it
   must also have that SONAME. The read is kept with the finding for the check before the load and
   for the copy's own DT_NEEDED. */
static bool usable_candidate(const char *path, struct finding *finding)
{
	if (!finding->file && !(finding->file = malloc(sizeof(*finding->file))))
		return false;
	struct dynamic_file *file = finding->file;
	int read = dynamic_read_file(path, file);
	if (read != 0 || !dynamic_file_is_compatible(file))
		log_message(LOG_INFO, "%s is not a shared object this process can load; skipped", path);
	else if (!file->whole)
		log_message(LOG_INFO, "%s is cut short or damaged (a part the loader maps lies outside the file); skipped", path);
	else if (finding->soname && (!file->soname || strcmp(file->soname, finding->soname) != 0))
		log_message(LOG_INFO, "%s does not have the SONAME %s, so the loader would not take it for that name; skipped", path,
			    finding->soname);
	else
		return true;
	return false;
}

static bool consider_candidate(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	struct finding *finding = arg;
	(void)loader_step;
	if (!path) { /* the loader may find it where the runtime cannot look: it has the call */
		finding->loader = POLICY_LOADER_MAY_FIND;
		return true;
	}
	if (step == SEARCH_LOADER) {
		/* The loader takes any file whose header it accepts (glibc's open_verify), whole or not. */
		if (!dynamic_file_is_loadable(path))
			return false;
		finding->loader = POLICY_LOADER_FINDS;
		strcpy(finding->loader_path, path);
		return true;
	}
	if (!usable_candidate(path, finding))
		return false;
	finding->found = true;
	finding->step = step;
	strcpy(finding->path, path);
	return true;
}

static void add_looked(const char *folder, enum search_step step, enum loader_step loader_step, void *arg)
{
	struct finding *finding = arg;
	if (folder && loader_facts_runtime_element(folder))
		return; /* the runtime's own RUNPATH, which only tells it the machine */
	char *copy = folder ? strdup(folder) : NULL;
	if (finding->looked_count == LOOKED_MAX || (folder && !copy)) {
		free(copy);
		return;
	}
	finding->looked[finding->looked_count++] = (struct log_looked){ copy, search_step_key(step, loader_step) };
}

static void finding_walk(struct finding *finding, const struct search_request *request)
{
	struct search_request walk = *request;
	walk.tried = finding->looked ? add_looked : NULL;
	search_candidates(&walk, consider_candidate, finding);
}

static bool finding_walk_own(struct finding *own, const char *name, const char *folder)
{
	struct search_request request = { .name = name, .caller_folder = folder, .caller_folder_only = true };
	search_candidates(&request, consider_candidate, own);
	return own->found;
}

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
	/* Only a miss can come of a walk that looks in no place of the runtime's. */
	return answer.action != POLICY_LEAVE && (answer.with_places || request->heard);
}

static void findings_init(struct findings *findings, const struct plan_request *request, const char *soname)
{
	findings->question = plan_question(request);
	findings->request = request;
	findings->asker_folder = NULL;
	finding_init(&findings->loader, soname);
	finding_init(&findings->own, soname);
}

static void findings_free(struct findings *findings)
{
	finding_free(&findings->loader);
	finding_free(&findings->own);
}

static bool note_exists(const char *path, enum search_step step, enum loader_step loader_step, void *held)
{
	(void)path, (void)step, (void)loader_step;
	*(bool *)held = true;
	return true;
}

/* Whether any place of the runtime's own (the asker's folder, the origins, their wheel siblings,
   NVINTERPOSE_PATH) holds a file of the name. Where none does, the call is the loader's whatever
   it finds, and the walk of the loader's own folders is not needed. A miss of a name nobody
   installed then costs a stat a place, not the loader's whole search again. */
static bool runtime_place_holds(const char *name, const char *asker_folder)
{
	struct search_request own = { .name = name, .caller_folder = asker_folder }; /* no asker: no loader steps */
	bool held = false;
	search_candidates(&own, note_exists, &held);
	return held;
}

static bool learn_loader(struct findings *findings, const struct policy_answer *answer)
{
	const struct plan_request *request = findings->request;
	struct policy_question *question = &findings->question;
	if (!findings->request->heard && !(answer->with_places && runtime_place_holds(request->name, findings->asker_folder)))
		return false;
	struct search_request walk = {
		.name = request->name,
		.caller_folder = answer->with_places ? findings->asker_folder : NULL,
		.loader_only = !answer->with_places,
	};
	if (findings->request->heard && !report_miss_known(request->name, request->asker))
		findings->loader.looked = calloc(LOOKED_MAX, sizeof(*findings->loader.looked));
	if (!findings->walk_loader(findings, &walk))
		return false;
	question->loader = findings->loader.loader;
	question->fallback = findings->loader.found                           ? POLICY_YES
			     : findings->loader.loader == POLICY_LOADER_MISSES ? POLICY_NO
									       : POLICY_UNKNOWN;
	question->fallback_step = findings->loader.step;
	return true;
}

static void walk_own(struct findings *findings)
{
	bool found = finding_walk_own(&findings->own, findings->request->name, findings->asker_folder);
	findings->question.own = found ? POLICY_YES : POLICY_NO;
	findings->question.own_is_loaders = found && findings->loader.loader == POLICY_LOADER_FINDS &&
					    platform_same_file(findings->loader.loader_path, findings->own.path);
}

/* Asks the policy until it has the facts it needs, and learns them. When a walk is not worth its
   cost, the name is the loader's, with no miss. */
static struct policy_answer decide(struct findings *findings)
{
	for (;;) {
		struct policy_answer answer = policy_decide(&findings->question);
		switch (answer.action) {
		case POLICY_ASK_LOADER:
			if (!learn_loader(findings, &answer))
				return (struct policy_answer){ .action = POLICY_LEAVE, .reason = POLICY_BECAUSE_NOBODY };
			break;
		case POLICY_ASK_OWN: walk_own(findings); break;
		case POLICY_ASK_LOADED_NOW:
			findings->question.loaded_now = loader_facts_loaded_by_name(findings->request->name) ? POLICY_YES : POLICY_NO;
			break;
		case POLICY_ASK_FALLBACK: /* the walk went on into the places, which hold nothing */
			findings->question.fallback = POLICY_NO;
			break;
		default: return answer;
		}
	}
}

static const struct finding *taken_by(const struct findings *findings, const struct policy_answer *answer)
{
	if (answer->action == POLICY_LOAD_OWN)
		return &findings->own;
	return answer->action == POLICY_LOAD_FALLBACK ? &findings->loader : NULL;
}

static bool findings_fill_load(const struct findings *findings, const struct finding *taken, const struct policy_answer *answer,
			struct plan_load *load)
{
	const struct plan_request *request = findings->request;
	if (strlen(request->name) > NAME_MAX)
		return false;
	strcpy(load->name, request->name);
	strcpy(load->path, taken->path);
	load->identity = taken->file->identity;
	load->family = request->family;
	load->answer = *answer;
	return true;
}

/* True when file is name's library with a shorter version that name's begins with:
   libcudnn_graph.so.9 for libcudnn_graph.so.9.19.0. */
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
   in byte order), into other. The caller is then probably probing for a more exact version before
   it takes that one. */
static bool other_version(const struct finding *finding, int family, const char *name, char *other, size_t size)
{
	for (size_t i = 0; i < finding->looked_count && i < 64; i++) {
		const char *folder = finding->looked[i].folder;
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

/* A miss, with the places the walk tried, unless the loader's own answer for the name (its
   ld.so.cache, which no walk sees) finds it. That answer is asked from the runtime's frame, so it
   is the asker's too, but for an asker with DF_1_NODEFLIB. Its search skips the system folders and
   their cache entries, so for it the walk alone decides. */
static void report_miss(const struct findings *findings, const struct policy_answer *answer)
{
	const struct plan_request *request = findings->request;
	const struct finding *finding = &findings->loader;
	if (!request->heard || (!findings->question.asker_nodeflib && loader_facts_finds_by_name(request->name)))
		return;
	char *other = finding->looked ? malloc(PATH_MAX) : NULL;
	bool has_other = other && other_version(finding, request->family, request->name, other, PATH_MAX);
	report_outcome(&(struct outcome){ .kind = OUTCOME_MISSED, .answer = answer, .name = request->name,
					  .family = request->family, .weight = request->weight, .caller = request->asker,
					  .other = has_other ? other : NULL, .looked = finding->looked,
					  .looked_count = finding->looked_count });
	free(other);
}

/* The loader keeps its choice, a copy at a known path: when that lies in another installation than
   the NVIDIA asker's, a mixed origin, said before the loader takes it. */
static void check_loaders_choice(const struct findings *findings, const struct policy_answer *answer)
{
	const struct plan_request *request = findings->request;
	if (answer->reason == POLICY_BECAUSE_LOADER && findings->loader.loader == POLICY_LOADER_FINDS && findings->asker_folder &&
	    request->asker && policy_watches_mixed_origins(findings->question.policy) && report_mixed_origin_first(request->name))
		origins_check_mixed(request->name, request->family, request->asker, findings->loader.loader_path, false);
}

static const struct finding *findings_settle(struct findings *findings, struct policy_answer *answer)
{
	*answer = decide(findings);
	if (answer->miss)
		report_miss(findings, answer);
	check_loaders_choice(findings, answer);
	return taken_by(findings, answer);
}

static void finding_report_unknown(const char *name, const char *asker, const char *why)
{
	log_message(LOG_DEBUG, "%s for %s: unknown whether the loader finds it (%s); left to the loader", name, asker, why);
}

/* The same when it was the loader's copy in a subfolder the runtime cannot rank that decided. When
   the policy took the asker's own copy instead, nothing was left to the loader. */
static void report_unranked(const struct findings *findings, const struct policy_answer *answer, const char *asker)
{
	if (answer->reason == POLICY_BECAUSE_LOADER && findings->loader.loader == POLICY_LOADER_MAY_FIND)
		finding_report_unknown(findings->request->name, asker, "a copy in an hwcap subfolder the runtime cannot rank");
}

/* ---- bare names ---- */

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
static bool walk_bare_loader(struct findings *findings, struct search_request *walk)
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
	struct bare *bare = malloc(sizeof(*bare)); /* its paths are written before they are read: not zeroed */
	if (!bare)
		return false;
	struct findings *findings = &bare->findings;
	struct link_map *caller = request->caller;
	bare->in_loader = in_loader;
	bare->listed = NULL;
	findings_init(findings, request, NULL);
	findings->asker_folder = nvidia_folder_of(caller, bare->folder);
	findings->question.asker_is_nvidia = findings->asker_folder != NULL;
	findings->question.asker_nodeflib = dynamic_has_nodeflib(caller->l_ld);
	findings->walk_loader = walk_bare_loader;
	findings->plan = bare;
	const struct finding *taken = findings_settle(findings, answer);
	bool planned = taken && findings_fill_load(findings, taken, answer, load);
	report_unranked(findings, answer, caller->l_name && caller->l_name[0] ? caller->l_name : "(main program)");
	findings_free(findings);
	loader_facts_free_list(bare->listed);
	free(bare);
	return planned;
}

bool plan_bare_name(const struct plan_request *request, struct plan_load *load)
{
	struct policy_answer answer;
	return plan_bare(request, false, &answer, load);
}

bool plan_for_requester(const struct plan_request *request, struct plan_load *load)
{
	struct policy_answer answer;
	return plan_bare(request, true, &answer, load);
}

/* ---- first loaded wins ---- */

void plan_check_mixed_origin(const struct plan_request *request, const char *asker, const void *asker_code)
{
	const char *loaded = request->loaded_path;
	struct policy_question question = plan_question(request);
	if (!policy_decide(&question).check_mixed_origin || !report_mixed_origin_first(request->name))
		return;
	struct link_map *object = asker ? NULL : loader_facts_object_at(asker_code);
	if (!asker)
		asker = object && object->l_name && object->l_name[0] ? object->l_name : NULL;
	if (asker && loaded)
		origins_check_mixed(request->name, request->family, asker, loaded, true);
}

/* ---- DT_NEEDED ---- */

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
	/* Its DT_NEEDED names as the policy sees them, learned once (NULL when they could not be). */
	struct plan_request *requests;
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
	for (int i = 0; parent->rpath && i < parent->rpath_count; i++)
		free(parent->rpath[i]);
	for (int i = 0; parent->runpath && i < parent->runpath_count; i++)
		free(parent->runpath[i]);
	free(parent->rpath);
	free(parent->runpath);
	free(parent->requests);
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
static bool walk_needed_loader(struct findings *findings, struct search_request *walk)
{
	struct need *need = findings->plan;
	walk->lookup = LOADER_NEEDED_OF_DLOPENED;
	walk->asker = &need->parent->model;
	walk->process = need->process;
	walk->machine = loader_facts_machine();
	finding_walk(&findings->loader, walk);
	return true;
}

/* A DT_NEEDED name as the policy sees it (family -1: not NVIDIA's). */
static struct plan_request need_request(const char *name)
{
	struct plan_request request = { .kind = POLICY_NEEDED, .name = name, .family = libnames_match_linux(name, NULL) };
	if (request.family >= 0) {
		request.driver = libnames_is_driver(request.family);
		const struct loaded_object *loaded = loaded_find_soname(name);
		request.loaded = loaded != NULL;
		request.loaded_path = loaded ? loaded->path : NULL;
		/* A DT_NEEDED: the loader fails the load without it, whoever needs it. */
		request.weight = report_miss_weight(POLICY_NEEDED, NULL, request.family, request.driver);
		request.heard = report_misses_wanted(request.weight);
	}
	return request;
}

/* The DT_NEEDED names of file as the policy sees them, each learned once and carried down to its
   plan; NULL when it needs nothing or the memory is short. Most libraries need no NVIDIA library
   that is not loaded yet, and nothing from here (but under coherent, a loaded one may still be a
   mixed origin to report): worth, when given, tells whether any name is worth a plan. */
static struct plan_request *learn_needs(const struct dynamic_file *file, bool *worth)
{
	struct plan_request *requests = file->needed_count ? malloc(file->needed_count * sizeof(*requests)) : NULL;
	for (size_t i = 0; requests && i < file->needed_count; i++) {
		requests[i] = need_request(file->needed[i]);
		if (worth && requests[i].family >= 0 && plan_worth_making(&requests[i]))
			*worth = true;
	}
	return requests;
}

/* The copy the runtime loads is dlopen'ed in its turn: its own needs come first. */
static void plan_needs_of_copy(struct need *need, const struct finding *taken, struct needs *needs, int depth)
{
	struct parent *child = &need->child;
	if (depth >= POLICY_NEEDED_MAX_DEPTH || !dst_origin_of(taken->path, need->folder, sizeof(need->folder)))
		return;
	*child = (struct parent){ .path = taken->path, .folder = need->folder, .file = taken->file };
	child->requests = learn_needs(taken->file, NULL);
	if (child->requests && model_parent(child))
		plan_needs_of(child, needs, depth + 1);
	free_parent(child);
}

/* One DT_NEEDED name of parent: nothing when it is not NVIDIA's, loaded, or found by the loader;
   otherwise planned from where the policy takes it, after its own needs. */
static void plan_need(struct parent *parent, const struct plan_request *learned, struct needs *needs, int depth)
{
	struct plan_request request = *learned;
	const char *name = request.name;
	request.asker = parent->path;
	if (request.family < 0 || visited_before(needs, name))
		return;
	struct need *need = request.loaded ? NULL : malloc(sizeof(*need)); /* written before it is read: not zeroed */
	if (!need) {
		if (request.loaded)
			plan_check_mixed_origin(&request, parent->path, NULL);
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
	findings->walk_loader = walk_needed_loader;
	findings->plan = need;
	const struct finding *taken = findings_settle(findings, &answer);
	report_unranked(findings, &answer, parent->path);
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
		plan_need(parent, &parent->requests[i], needs, depth);
}

static void report_needs_unknown(const char *path, const struct dynamic_file *file, const char *why)
{
	for (size_t i = 0; i < file->needed_count; i++) {
		int family = libnames_match_linux(file->needed[i], NULL);
		if (family >= 0 && !libnames_is_driver(family))
			finding_report_unknown(file->needed[i], path, why);
	}
}

bool plan_needed(const char *path, const char *folder, const struct dynamic_file *file, struct plan *plan)
{
	struct needs *needs = NULL;
	struct loader_facts_process *lists = NULL;
	struct parent parent = { .path = path, .folder = folder, .file = file };
	bool worth = false;
	plan->count = 0;
	if (!(parent.requests = learn_needs(file, &worth)) || !worth)
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
