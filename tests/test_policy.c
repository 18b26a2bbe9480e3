/* The policy as one decision (src/policy.h), row by row: the facts about a name go in, the action,
   its reason and the miss record come out. The same function decides for the hooks, the audit front,
   the attach scan, Windows and the inspector's what-if, so each rule is pinned here once. A row
   whose fact is still unknown gets the question for it (the failure rows of a decision that cannot
   be made yet). */
#include "common.h"

#include "policy.h"

#include <string.h>

struct row {
	const char *rule;
	struct policy_question question;
	enum policy_action action;
	enum policy_reason reason;
	bool miss;
	const char *text;         /* the reason the runtime writes, or NULL */
	const char *miss_reason;  /* NULL unless miss */
	bool by_name_first;
	bool check_mixed_origin;
	bool with_places;
};

#define FALLBACK .policy = POLICY_FALLBACK
#define COHERENT .policy = POLICY_COHERENT
#define MISSES .loader = POLICY_LOADER_MISSES
#define FINDS .loader = POLICY_LOADER_FINDS

static const struct row rows[] = {
	/* 1. off, or secure mode: the runtime only observes, and reports no miss. */
	{ .rule = "off leaves every name to the loader, a miss too", .question = { .policy = POLICY_OFF, MISSES, .fallback = POLICY_YES },
	  .action = POLICY_LEAVE, .reason = POLICY_BECAUSE_OFF },
	{ .rule = "secure mode is off whatever the setting", .question = { COHERENT, .secure = true, MISSES, .fallback = POLICY_YES },
	  .action = POLICY_LEAVE, .reason = POLICY_BECAUSE_OFF },
	/* 2. first loaded wins. */
	{ .rule = "a loaded name is used as it is, and under fallback too it may be a mixed origin", .question = { FALLBACK, .loaded = true },
	  .action = POLICY_USE_LOADED, .reason = POLICY_BECAUSE_LOADED, .check_mixed_origin = true },
	{ .rule = "under off a loaded name is used and nothing looked for", .question = { .policy = POLICY_OFF, .loaded = true }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_OFF },
	{ .rule = "under coherent a loaded name may be a mixed origin", .question = { COHERENT, .loaded = true }, .action = POLICY_USE_LOADED,
	  .reason = POLICY_BECAUSE_LOADED, .check_mixed_origin = true },
	{ .rule = "a DT_NEEDED name loaded under coherent may be a mixed origin", .question = { COHERENT, .request = POLICY_NEEDED, .loaded = true },
	  .action = POLICY_USE_LOADED, .reason = POLICY_BECAUSE_LOADED, .check_mixed_origin = true },
	{ .rule = "a loaded driver library is no mixed origin", .question = { COHERENT, .driver = true, .loaded = true }, .action = POLICY_USE_LOADED,
	  .reason = POLICY_BECAUSE_LOADED },
	{ .rule = "the attach scan's family loaded is left alone", .question = { COHERENT, .request = POLICY_ATTACH, .loaded = true }, .action = POLICY_USE_LOADED,
	  .reason = POLICY_BECAUSE_LOADED },
	/* The loader's answer comes first, and with it the runtime's places. */
	{ .rule = "the loader's search is walked first, the places with it", .question = { FALLBACK }, .action = POLICY_ASK_LOADER, .reason = POLICY_BECAUSE_UNKNOWN,
	  .with_places = true },
	{ .rule = "a driver library's walk is the loader's search alone", .question = { FALLBACK, .driver = true }, .action = POLICY_ASK_LOADER,
	  .reason = POLICY_BECAUSE_UNKNOWN },
	/* 3. a driver library is never supplied, only missed. */
	{ .rule = "a driver library nobody finds is a miss", .question = { COHERENT, .driver = true, MISSES, .fallback = POLICY_YES }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_DRIVER, .miss = true, .miss_reason = "dlopen by bare name" },
	{ .rule = "a driver library the loader finds is no miss", .question = { FALLBACK, .driver = true, FINDS }, .action = POLICY_LEAVE, .reason = POLICY_BECAUSE_DRIVER },
	{ .rule = "the audit front reports no miss", .question = { FALLBACK, .driver = true, .request = POLICY_AUDIT, MISSES }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_DRIVER },
	/* 4. a name nobody has is a miss, for the hooks' bare names and DT_NEEDED. */
	{ .rule = "a bare name nobody has is a miss", .question = { FALLBACK, MISSES, .fallback = POLICY_NO }, .action = POLICY_LEAVE, .reason = POLICY_BECAUSE_NOBODY,
	  .miss = true, .miss_reason = "dlopen by bare name" },
	{ .rule = "a DT_NEEDED nobody has is a miss", .question = { FALLBACK, .request = POLICY_NEEDED, MISSES, .fallback = POLICY_NO }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_NOBODY, .miss = true, .miss_reason = "DT_NEEDED" },
	{ .rule = "the attach scan reports no miss", .question = { FALLBACK, .request = POLICY_ATTACH, MISSES, .fallback = POLICY_NO }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_NOBODY },
	{ .rule = "under coherent a name nobody has is a miss without a look in the asker's folder",
	  .question = { COHERENT, .asker_is_nvidia = true, MISSES, .fallback = POLICY_NO }, .action = POLICY_LEAVE, .reason = POLICY_BECAUSE_NOBODY, .miss = true,
	  .miss_reason = "dlopen by bare name" },
	/* 6. the loader's own search wins when it finds the name. */
	{ .rule = "fallback keeps the loader's copy", .question = { FALLBACK, .asker_is_nvidia = true, FINDS, .fallback = POLICY_YES }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_LOADER },
	{ .rule = "a copy the runtime cannot rank is the loader's", .question = { FALLBACK, .loader = POLICY_LOADER_MAY_FIND }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_LOADER },
	{ .rule = "coherent keeps the loader's copy for an asker that is no NVIDIA library", .question = { COHERENT, FINDS }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_LOADER },
	/* 7. fallback: then the runtime's first copy. */
	{ .rule = "the runtime's places are asked once the loader misses", .question = { FALLBACK, MISSES }, .action = POLICY_ASK_FALLBACK, .reason = POLICY_BECAUSE_UNKNOWN },
	{ .rule = "the runtime's copy is loaded, after the loader is asked by name",
	  .question = { FALLBACK, MISSES, .fallback = POLICY_YES, .fallback_step = SEARCH_ORIGIN }, .action = POLICY_LOAD_FALLBACK,
	  .reason = POLICY_BECAUSE_FALLBACK, .text = "registered origin", .by_name_first = true },
	{ .rule = "a NODEFLIB asker's loader skips ld.so.cache: no ask by name",
	  .question = { FALLBACK, .asker_nodeflib = true, MISSES, .fallback = POLICY_YES, .fallback_step = SEARCH_WHEEL_SIBLING },
	  .action = POLICY_LOAD_FALLBACK, .reason = POLICY_BECAUSE_FALLBACK, .text = "wheel sibling" },
	{ .rule = "the audit front gives the path: the loader is asking already",
	  .question = { FALLBACK, .request = POLICY_AUDIT, MISSES, .fallback = POLICY_YES, .fallback_step = SEARCH_NVINTERPOSE_PATH },
	  .action = POLICY_LOAD_FALLBACK, .reason = POLICY_BECAUSE_FALLBACK, .text = "NVINTERPOSE_PATH" },
	/* 5. coherent: an NVIDIA asker's own copy before the loader's, unless it is the same file. */
	{ .rule = "coherent looks in an NVIDIA asker's own installation", .question = { COHERENT, .asker_is_nvidia = true, FINDS }, .action = POLICY_ASK_OWN,
	  .reason = POLICY_BECAUSE_UNKNOWN },
	{ .rule = "the asker's copy that is the loader's own changes nothing",
	  .question = { COHERENT, .asker_is_nvidia = true, FINDS, .own = POLICY_YES, .own_is_loaders = true }, .action = POLICY_LEAVE, .reason = POLICY_BECAUSE_LOADER },
	{ .rule = "before the asker's copy is loaded, the loader is asked whether it took the name meanwhile",
	  .question = { COHERENT, .asker_is_nvidia = true, FINDS, .own = POLICY_YES }, .action = POLICY_ASK_LOADED_NOW, .reason = POLICY_BECAUSE_UNKNOWN },
	{ .rule = "a name the loader took meanwhile is the loader's",
	  .question = { COHERENT, .asker_is_nvidia = true, FINDS, .own = POLICY_YES, .loaded_now = POLICY_YES }, .action = POLICY_LEAVE,
	  .reason = POLICY_BECAUSE_ARRIVED },
	{ .rule = "the asker's own copy is loaded over the loader's",
	  .question = { COHERENT, .asker_is_nvidia = true, FINDS, .own = POLICY_YES, .loaded_now = POLICY_NO }, .action = POLICY_LOAD_OWN,
	  .reason = POLICY_BECAUSE_COHERENT, .text = "coherent: the asker's folder or its wheel siblings" },
	{ .rule = "inside the loader the name is not loaded: the audit front takes the asker's copy at once",
	  .question = { COHERENT, .request = POLICY_AUDIT, .asker_is_nvidia = true, .loader = POLICY_LOADER_MAY_FIND, .own = POLICY_YES },
	  .action = POLICY_LOAD_OWN, .reason = POLICY_BECAUSE_COHERENT, .text = "coherent: the asker's folder or its wheel siblings" },
	{ .rule = "the asker's copy also where the loader has none",
	  .question = { COHERENT, .request = POLICY_NEEDED, .asker_is_nvidia = true, MISSES, .fallback = POLICY_YES, .own = POLICY_YES,
	    .loaded_now = POLICY_NO },
	  .action = POLICY_LOAD_OWN, .reason = POLICY_BECAUSE_COHERENT, .text = "coherent: the asker's folder or its wheel siblings" },
	{ .rule = "without a copy of its own, coherent falls back",
	  .question = { COHERENT, .asker_is_nvidia = true, MISSES, .fallback = POLICY_YES, .fallback_step = SEARCH_CALLER_FOLDER, .own = POLICY_NO },
	  .action = POLICY_LOAD_FALLBACK, .reason = POLICY_BECAUSE_FALLBACK, .text = "caller's folder", .by_name_first = true },
};

START_TEST(test_each_rule_decides_as_the_readme_says)
{
	const struct row *row = &rows[_i];
	struct policy_answer answer = policy_decide(&row->question);
	ck_assert_msg(answer.action == row->action, "%s: action %d, not %d", row->rule, answer.action, row->action);
	ck_assert_msg(answer.reason == row->reason, "%s: reason '%s', not '%s'", row->rule, policy_reason_name(answer.reason),
		      policy_reason_name(row->reason));
	ck_assert_msg(answer.miss == row->miss, "%s: miss %d", row->rule, answer.miss);
	ck_assert_msg(answer.by_name_first == row->by_name_first, "%s: by name first %d", row->rule, answer.by_name_first);
	ck_assert_msg(answer.check_mixed_origin == row->check_mixed_origin, "%s: mixed origin %d", row->rule,
		      answer.check_mixed_origin);
	if (row->action == POLICY_ASK_LOADER)
		ck_assert_msg(answer.with_places == row->with_places, "%s: with places %d", row->rule, answer.with_places);
	ck_assert_msg(row->text ? answer.text && strcmp(answer.text, row->text) == 0 : !answer.text, "%s: text '%s'", row->rule,
		      answer.text ? answer.text : "(none)");
	ck_assert_msg(row->miss_reason ? answer.miss_reason && strcmp(answer.miss_reason, row->miss_reason) == 0 : !answer.miss_reason,
		      "%s: miss reason '%s'", row->rule, answer.miss_reason ? answer.miss_reason : "(none)");
}
END_TEST

/* Asking what the answer asks for, and nothing else, ends in a decision: a caller that learns
   facts one at a time cannot loop. */
START_TEST(test_learning_what_is_asked_ends_in_a_decision)
{
	for (int policy = POLICY_FALLBACK; policy <= POLICY_OFF; policy++)
		for (int request = POLICY_DLOPEN; request <= POLICY_ATTACH; request++)
			for (int driver = 0; driver < 2; driver++) {
				struct policy_question question = { .policy = (enum policy)policy, .request = (enum policy_request)request,
								    .driver = driver, .asker_is_nvidia = true };
				struct policy_answer answer;
				int asked = 0;
				for (answer = policy_decide(&question); answer.reason == POLICY_BECAUSE_UNKNOWN && asked < 8;
				     answer = policy_decide(&question), asked++) {
					ck_assert(answer.action >= POLICY_ASK_LOADER);
					if (answer.action == POLICY_ASK_LOADER)
						question.loader = POLICY_LOADER_MISSES;
					else if (answer.action == POLICY_ASK_OWN)
						question.own = POLICY_YES;
					else if (answer.action == POLICY_ASK_LOADED_NOW)
						question.loaded_now = POLICY_NO;
					else
						question.fallback = POLICY_YES;
				}
				ck_assert_msg(asked < 8, "policy %d, request %d, driver %d: no decision", policy, request, driver);
				ck_assert(answer.action < POLICY_ASK_LOADER);
			}
}
END_TEST

START_TEST(test_every_reason_has_words)
{
	for (int reason = POLICY_BECAUSE_OFF; reason <= POLICY_BECAUSE_UNKNOWN; reason++)
		ck_assert(policy_reason_name((enum policy_reason)reason)[0] != '\0');
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("policy");
	TCase *tc = tcase_create("policy");
	tcase_add_loop_test(tc, test_each_rule_decides_as_the_readme_says, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, test_learning_what_is_asked_ends_in_a_decision);
	tcase_add_test(tc, test_every_reason_has_words);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
