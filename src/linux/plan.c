/* The planning's shared part: the policy's question for a request, the walks that learn what it
   asks for, each candidate judged once with what the judge read kept, and what comes of the
   answer (a load, a miss). plan_bare.c and plan_needed.c give the loader's search. */
#define _GNU_SOURCE
#include "finding.h"

#include "config.h"

#include "libnames.h"
#include "loader_facts.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void finding_init(struct finding *finding, const char *soname)
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

void finding_free(struct finding *finding)
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
	if (finding->looked_count == FINDING_LOOKED_MAX || (folder && !copy)) {
		free(copy);
		return;
	}
	finding->looked[finding->looked_count++] = (struct log_looked){ copy, search_step_key(step, loader_step) };
}

void finding_walk(struct finding *finding, const struct search_request *request)
{
	struct search_request walk = *request;
	walk.tried = finding->looked ? add_looked : NULL;
	search_candidates(&walk, consider_candidate, finding);
}

bool finding_walk_own(struct finding *own, const char *name, const char *folder)
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

/* A miss of the request would be shown or recorded. */
static bool heard(const struct plan_request *request)
{
	return policy_reports_misses(request->kind) && report_misses_wanted(request->driver);
}

bool plan_worth_making(const struct plan_request *request)
{
	struct policy_question question = plan_question(request);
	struct policy_answer answer = policy_decide(&question);
	if (answer.action == POLICY_USE_LOADED)
		return answer.check_mixed_origin;
	/* Only a miss can come of a walk that looks in no place of the runtime's. */
	return answer.action != POLICY_LEAVE && (answer.with_places || heard(request));
}

void findings_init(struct findings *findings, const struct plan_request *request, const char *soname)
{
	findings->question = plan_question(request);
	findings->request = request;
	findings->asker_folder = NULL;
	findings->heard = heard(request);
	finding_init(&findings->loader, soname);
	finding_init(&findings->own, soname);
}

void findings_free(struct findings *findings)
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

static bool walk_loader(struct findings *findings, const struct policy_answer *answer)
{
	const struct plan_request *request = findings->request;
	struct policy_question *question = &findings->question;
	if (!findings->heard && !(answer->with_places && runtime_place_holds(request->name, findings->asker_folder)))
		return false;
	struct search_request walk = {
		.name = request->name,
		.caller_folder = answer->with_places ? findings->asker_folder : NULL,
		.loader_only = !answer->with_places,
	};
	if (findings->heard && !report_miss_known(request->name, request->asker))
		findings->loader.looked = calloc(FINDING_LOOKED_MAX, sizeof(*findings->loader.looked));
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
			if (!walk_loader(findings, &answer))
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

bool findings_fill_load(const struct findings *findings, const struct finding *taken, const struct policy_answer *answer,
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
   ld.so.cache, which no walk sees) finds it. */
static void report_miss(const struct findings *findings, const struct policy_answer *answer)
{
	const struct plan_request *request = findings->request;
	const struct finding *finding = &findings->loader;
	if (!findings->heard || loader_facts_finds_by_name(request->name))
		return;
	char *other = finding->looked ? malloc(PATH_MAX) : NULL;
	bool has_other = other && other_version(finding, request->family, request->name, other, PATH_MAX);
	report_outcome(&(struct outcome){ .kind = OUTCOME_MISSED, .answer = answer, .name = request->name,
					  .family = request->family, .driver = request->driver, .caller = request->asker,
					  .other = has_other ? other : NULL, .looked = finding->looked,
					  .looked_count = finding->looked_count });
	free(other);
}

const struct finding *findings_settle(struct findings *findings, struct policy_answer *answer)
{
	*answer = decide(findings);
	if (answer->miss)
		report_miss(findings, answer);
	return taken_by(findings, answer);
}

void finding_report_unknown(const char *name, const char *asker, const char *why)
{
	log_message(LOG_DEBUG, "%s for %s: unknown whether the loader finds it (%s); left to the loader", name, asker, why);
}
