/* The policy, row by row. The order of the rows is the order of the rules in the README:
 *   1. off (or secure mode): the runtime only observes;
 *   2. first loaded wins: an object loaded already is used, wherever it came from;
 *   3. a driver library is never supplied, only missed;
 *   4. a name nobody has is a miss;
 *   5. coherent: an NVIDIA asker's own copy comes before the loader's, unless it is the same file;
 *   6. the loader's own search wins when it finds the name;
 *   7. fallback: then the runtime's first copy. */
#include "policy.h"

#include <stddef.h>

static const char coherent_text[] = "coherent: the asker's folder or its wheel siblings";

bool policy_reports_misses(enum policy_request request) { return request == POLICY_DLOPEN || request == POLICY_NEEDED; }

static struct policy_answer leave(const struct policy_question *question, enum policy_reason reason, bool miss)
{
	miss = miss && policy_reports_misses(question->request);
	return (struct policy_answer){
		.action = POLICY_LEAVE,
		.reason = reason,
		.miss = miss,
		.miss_reason = !miss ? NULL : question->request == POLICY_NEEDED ? "DT_NEEDED" : "dlopen by bare name",
	};
}

static struct policy_answer ask(enum policy_action action)
{
	return (struct policy_answer){ .action = action, .reason = POLICY_BECAUSE_UNKNOWN };
}

/* Rule 5. The asker's own copy, unless the loader takes that very file; a name the loader took
   meanwhile is the loader's (rule 2 again, a moment later). Inside the loader the name is not
   loaded: the loader asks only then. */
static bool coherent_answer(const struct policy_question *question, struct policy_answer *answer)
{
	if (question->policy != POLICY_COHERENT || !question->asker_is_nvidia)
		return false;
	if (question->own == POLICY_UNKNOWN) {
		*answer = ask(POLICY_ASK_OWN);
		return true;
	}
	if (question->own == POLICY_NO || question->own_is_loaders)
		return false;
	if (question->loaded_now == POLICY_UNKNOWN && question->request != POLICY_AUDIT)
		*answer = ask(POLICY_ASK_LOADED_NOW);
	else if (question->loaded_now == POLICY_YES)
		*answer = leave(question, POLICY_BECAUSE_ARRIVED, false);
	else
		*answer = (struct policy_answer){ .action = POLICY_LOAD_OWN, .reason = POLICY_BECAUSE_COHERENT, .text = coherent_text };
	return true;
}

struct policy_answer policy_decide(const struct policy_question *question)
{
	struct policy_answer answer;
	if (question->secure || question->policy == POLICY_OFF)
		return leave(question, POLICY_BECAUSE_OFF, false);
	if (question->loaded) {
		answer = leave(question, POLICY_BECAUSE_LOADED, false);
		answer.action = POLICY_USE_LOADED;
		answer.check_mixed_origin = policy_watches_mixed_origins(question->policy) && !question->driver &&
					    (question->request == POLICY_DLOPEN || question->request == POLICY_NEEDED);
		return answer;
	}
	if (question->loader == POLICY_LOADER_UNKNOWN) {
		answer = ask(POLICY_ASK_LOADER);
		answer.with_places = !question->driver;
		return answer;
	}
	if (question->driver)
		return leave(question, POLICY_BECAUSE_DRIVER, question->loader == POLICY_LOADER_MISSES);
	/* The runtime's places hold the asker's own ones: when they hold nothing, neither does it. */
	if (question->loader == POLICY_LOADER_MISSES && question->fallback == POLICY_NO)
		return leave(question, POLICY_BECAUSE_NOBODY, true);
	if (coherent_answer(question, &answer))
		return answer;
	if (question->loader != POLICY_LOADER_MISSES)
		return leave(question, POLICY_BECAUSE_LOADER, false);
	if (question->fallback == POLICY_UNKNOWN)
		return ask(POLICY_ASK_FALLBACK);
	return (struct policy_answer){
		.action = POLICY_LOAD_FALLBACK,
		.reason = POLICY_BECAUSE_FALLBACK,
		.text = search_step_name(question->fallback_step),
		.by_name_first = question->request != POLICY_AUDIT && !question->asker_nodeflib,
	};
}

const char *policy_reason_name(enum policy_reason reason)
{
	static const char *const names[] = {
		[POLICY_BECAUSE_OFF] = "the policy is off",
		[POLICY_BECAUSE_LOADED] = "first loaded wins",
		[POLICY_BECAUSE_DRIVER] = "a driver library is never supplied",
		[POLICY_BECAUSE_NOBODY] = "neither the loader nor the runtime has a copy",
		[POLICY_BECAUSE_ARRIVED] = "first loaded wins: the loader took it meanwhile",
		[POLICY_BECAUSE_LOADER] = "the loader finds it",
		[POLICY_BECAUSE_COHERENT] = "the asker's own installation has it",
		[POLICY_BECAUSE_FALLBACK] = "only the runtime's places have it",
		[POLICY_BECAUSE_UNKNOWN] = "a fact is still to be asked",
	};
	return names[reason];
}
