/* Deciding one NVIDIA name on Windows (decide.h). The facts come from the loader and the files:
 *   - loaded: a module of that name is in the process. Windows binds it by name, for a bare-name
 *     load and for an import alike (first loaded wins);
 *   - the loader's answer: the first file of that name in the load's search path (loader_path.h),
 *     when it is a DLL of this machine. A file of that name that is not (a 32-bit copy on PATH, a
 *     stray file) stops the loader with an error, so it counts as a miss. Without the search path
 *     the answer is "it may find it", unless the loader was asked for this very name and failed;
 *   - the asker's own copy: its folder and its wheel siblings (coherent);
 *   - the runtime's first copy: search.c's places, each tried once, with every place tried kept
 *     when a miss is to be said.
 * The policy function asks for each fact when it needs it, so a load the loader serves costs none. */
#include "decide.h"

#include "config.h"
#include "libnames.h"
#include "loader_path.h"
#include "log.h"
#include "pe_file.h"
#include "platform.h"
#include "report.h"
#include "search.h"
#include "utf16.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOKED_MAX 256

/* search_candidates' visitor: the first file of the name that is a DLL this process can load. */
static bool consider_candidate(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	struct decision *decision = arg;
	(void)loader_step;
	if (strlen(path) >= sizeof(decision->copy_utf8) || !utf16_from_utf8(path, decision->copy, DECIDE_PATH_MAX))
		return false;
	if (!pe_file_is_loadable_dll(decision->copy)) {
		log_message(LOG_INFO, "%s is not a DLL this process can load; skipped", path);
		return false;
	}
	strcpy(decision->copy_utf8, path);
	decision->question.fallback_step = step;
	return true;
}

/* search_candidates' tried: every place, for a miss. */
static void add_looked(const char *folder, enum search_step step, enum loader_step loader_step, void *arg)
{
	struct decision *decision = arg;
	char *copy = folder ? _strdup(folder) : NULL;
	if (decision->looked_count == LOOKED_MAX || !copy) {
		free(copy);
		return;
	}
	decision->looked[decision->looked_count++] = (struct log_looked){ copy, search_step_key(step, loader_step) };
}

static void ask_loader(struct decision *decision)
{
	const struct decide_request *request = decision->request;
	decision->loader_found = loader_path_find(request->search_path, request->wide_name, decision->loader_file, DECIDE_PATH_MAX) &&
				 pe_file_is_loadable_dll(decision->loader_file);
	if (decision->loader_found)
		decision->question.loader = POLICY_LOADER_FINDS;
	else if (request->search_path || (request->loader_error && request->request == POLICY_DLOPEN))
		decision->question.loader = POLICY_LOADER_MISSES; /* the loader looked for this very name, and failed */
	else
		decision->question.loader = POLICY_LOADER_MAY_FIND;
}

/* Whether the copy is the very file the loader takes (either may be reached by another name). */
static bool copy_is_loaders(const struct decision *decision)
{
	char loader_file[DECIDE_PATH_MAX * 3];
	return decision->loader_found && utf8_from_utf16(decision->loader_file, loader_file, sizeof(loader_file)) &&
	       platform_same_file(decision->copy_utf8, loader_file);
}

static void ask_own(struct decision *decision)
{
	const struct decide_request *request = decision->request;
	struct search_request own = { .name = request->name, .caller_folder = request->asker_folder, .caller_folder_only = true };
	bool found = request->asker_folder && search_candidates(&own, consider_candidate, decision);
	decision->question.own = found ? POLICY_YES : POLICY_NO;
	decision->question.own_is_loaders = found && copy_is_loaders(decision);
}

static void ask_fallback(struct decision *decision)
{
	const struct decide_request *request = decision->request;
	/* The places are listed only when a miss would be said: a miss of a pair said before is counted. */
	if (report_misses_wanted(decision->weight) && !report_miss_known(request->name, request->asker))
		decision->looked = calloc(LOOKED_MAX, sizeof(*decision->looked));
	struct search_request places = { .name = request->name, .caller_folder = request->asker_folder,
					 .tried = decision->looked ? add_looked : NULL };
	decision->question.fallback = search_candidates(&places, consider_candidate, decision) ? POLICY_YES : POLICY_NO;
}

struct decision *decide(const struct decide_request *request)
{
	struct decision *decision = malloc(sizeof(*decision)); /* its paths are written before they are read */
	if (!decision)
		return NULL;
	const struct config *config = config_get();
	decision->request = request;
	decision->loader_found = false;
	decision->copy_utf8[0] = '\0';
	decision->looked = NULL;
	decision->looked_count = 0;
	decision->question = (struct policy_question){
		.policy = config->policy,
		.secure = config->secure,
		.driver = libnames_is_driver(request->family),
		.request = request->request,
		.loaded = GetModuleHandleW(request->wide_name) != NULL,
		.asker_is_nvidia = request->asker_folder != NULL,
	};
	decision->weight = report_miss_weight(request->request, request->asker, request->family, decision->question.driver);
	/* Each round answers one fact; the policy asks at most four. */
	for (int round = 0; round < 8; round++) {
		decision->answer = policy_decide(&decision->question);
		switch (decision->answer.action) {
		case POLICY_ASK_LOADER: ask_loader(decision); break;
		case POLICY_ASK_OWN: ask_own(decision); break;
		case POLICY_ASK_LOADED_NOW:
			decision->question.loaded_now = GetModuleHandleW(request->wide_name) ? POLICY_YES : POLICY_NO;
			break;
		case POLICY_ASK_FALLBACK: ask_fallback(decision); break;
		/* LOAD_FALLBACK's by_name_first is for ld.so.cache, which no search list shows: Windows'
		   answer came from the loader's own search path. */
		default: return decision;
		}
	}
	decision->answer = (struct policy_answer){ .action = POLICY_LEAVE, .reason = POLICY_BECAUSE_UNKNOWN };
	return decision;
}

void decide_free(struct decision *decision)
{
	if (!decision)
		return;
	for (size_t i = 0; decision->looked && i < decision->looked_count; i++)
		free((char *)decision->looked[i].folder);
	free(decision->looked);
	free(decision);
}

void decide_report_loaded(const struct decision *decision)
{
	const struct decide_request *request = decision->request;
	report_outcome(&(struct outcome){ .kind = OUTCOME_LOADED, .request = request->request, .answer = &decision->answer,
					  .name = request->name, .family = request->family, .caller = request->asker,
					  .caller_words = request->asker_words, .path = decision->copy_utf8 });
}

void decide_report_not_loaded(const struct decision *decision, DWORD error)
{
	const struct decide_request *request = decision->request;
	log_message(LOG_WARN, "%s for %s: %s did not load (error %lu)", request->name,
		    request->asker_words ? request->asker_words : request->asker ? request->asker : "an unknown module",
		    decision->copy_utf8, error);
}

void decide_report_miss(const struct decision *decision)
{
	const struct decide_request *request = decision->request;
	/* How it was asked for, in Windows' words, with the loader's own error where it was asked. */
	char reason[160];
	const char *how = request->request == POLICY_NEEDED ? "an import" : "LoadLibrary by bare name";
	if (request->loader_error)
		snprintf(reason, sizeof(reason), "%s; the loader's error %lu", how, request->loader_error);
	else
		snprintf(reason, sizeof(reason), "%s", how);
	struct policy_answer answer = decision->answer;
	answer.miss_reason = reason;
	report_outcome(&(struct outcome){ .kind = OUTCOME_MISSED, .request = request->request, .answer = &answer,
					  .name = request->name, .family = request->family, .weight = decision->weight,
					  .caller = request->asker, .caller_words = request->asker_words, .looked = decision->looked,
					  .looked_count = decision->looked_count });
}

void decide_check_mixed_origin(const struct decision *decision, HMODULE loaded)
{
	const struct decide_request *request = decision->request;
	wchar_t file[DECIDE_PATH_MAX];
	char loaded_utf8[DECIDE_PATH_MAX * 3];
	if (!decision->answer.check_mixed_origin || !request->asker_folder || !loaded || !report_mixed_origin_first(request->name))
		return;
	DWORD n = GetModuleFileNameW(loaded, file, DECIDE_PATH_MAX);
	if (n == 0 || n >= DECIDE_PATH_MAX || !utf8_from_utf16(file, loaded_utf8, sizeof(loaded_utf8)))
		return;
	struct decision *own = malloc(sizeof(*own));
	if (!own)
		return;
	*own = (struct decision){ .request = request };
	struct search_request places = { .name = request->name, .caller_folder = request->asker_folder, .caller_folder_only = true };
	if (search_candidates(&places, consider_candidate, own) && !platform_same_file(own->copy_utf8, loaded_utf8))
		report_outcome(&(struct outcome){ .kind = OUTCOME_MIXED_ORIGIN, .request = request->request, .name = request->name,
						  .family = request->family, .caller = request->asker, .path = loaded_utf8,
						  .own = own->copy_utf8, .already_loaded = true });
	free(own);
}
