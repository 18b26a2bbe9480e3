/* Forked children, each caught at a moment of another thread's loader call that glibc does not
   repair in the child (tests/fork_child.c makes the moment happen every time): with the runtime, the
   child fares as without it, or better. */
#include "common.h"
#include "standins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static struct test_run fork_child(const char *mode, const char *library, bool with_runtime)
{
	const char *argv[] = { test_setting("NVI_FORK_CHILD"), mode, library, NULL };
	const char *plain_env[] = { NULL };
	const char *runtime_env[] = { standin_preload(), NULL };
	return test_run(argv, with_runtime ? runtime_env : plain_env, 60);
}

START_TEST(test_repeated_load_in_a_child_never_waits_for_the_list_lock)
{
	/* The index has not seen the library (loaded by path, passed to the loader, nothing since): a
	   sync in the child would wait forever for the lock the parent's other thread held. */
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	struct test_run plain = fork_child("list-lock", wheel.nvrtc, false);
	struct test_run run = fork_child("list-lock", wheel.nvrtc, true);
	ck_assert_msg(plain.status == 0 && test_contains(plain.output, "child: ok"), "without the runtime: %d %s", plain.status,
		      plain.output);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "child: ok"), "with the runtime: %d %s", run.status, run.output);
}
END_TEST

START_TEST(test_child_forked_after_the_loader_unmapped_its_cache_keeps_what_it_loads)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	struct test_run plain = fork_child("cache", wheel.nvrtc, false);
	struct test_run run = fork_child("cache", wheel.nvrtc, true);
	/* glibc's own race: the child's first dlopen unmaps the library it has just mapped there. Not on
	   every glibc (bullseye's 2.31 loads it fine): there the child is held to plain's result. */
	ck_assert_msg(plain.status == 0 && (test_contains(plain.output, "child: signal 11") || test_contains(plain.output, "child: ok")),
		      "the set-up: %d %s", plain.status, plain.output);
	if (!test_contains(plain.output, "child: signal 11"))
		printf("this glibc's child keeps the library without the runtime too: the moment does not come here\n");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "child: ok"), "with the runtime: %d %s", run.status, run.output);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("fork");
	TCase *tc = tcase_create("fork");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_repeated_load_in_a_child_never_waits_for_the_list_lock);
	/* The cache moment needs a seccomp trap and ld.so.cache (the program says so with 77). */
	const char *program = getenv("NVI_FORK_CHILD");
	char command[4200], reason[512] = "";
	snprintf(command, sizeof(command), "'%s' cache /nonexistent/libnvrtc.so.77", program ? program : "fork-child");
	FILE *probe = popen(command, "r");
	size_t length = probe ? fread(reason, 1, sizeof(reason) - 1, probe) : 0;
	reason[length] = '\0';
	int status = probe ? pclose(probe) : -1;
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) == TEST_SKIP)
		printf("not run: test_child_forked_after_the_loader_unmapped_its_cache_keeps_what_it_loads: %s", reason);
	else
		tcase_add_test(tc, test_child_forked_after_the_loader_unmapped_its_cache_keeps_what_it_loads);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
