/* Threads loading and unloading NVIDIA, other and missing libraries while the process forks
   children that load the NVRTC-like library: no deadlock, no crash, the counts of a run without
   the runtime, and every child compiles. */
#include "common.h"
#include "standins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS "8"
#define ITERATIONS 20000
#define FORKS "40"

START_TEST(test_threads_and_forks_under_the_runtime)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *other = test_format("%s/libother.so.1", wheel.root);
	test_build_library("value.c", other, "libother.so.1", "");
	char *iterations = test_format("%d", ITERATIONS);
	/* qemu-user can deadlock a child forked while other threads are in system calls
	   (tests/roots/qemu_fork_syscall.c): there the threads run without the forks. */
	const char *forks = getenv("NVI_QEMU_USER") ? "0" : FORKS;
	if (strcmp(forks, "0") == 0)
		printf("under qemu-user: %s threads, no forks\n", THREADS);
	const char *argv[] = { test_setting("NVI_STRESS"), wheel.nvrtc, other, THREADS, iterations, forks, NULL };
	const char *plain_env[] = { NULL };
	const char *env[] = { standin_preload(), NULL };
	struct test_run plain = test_run(argv, plain_env, 300);
	struct test_run run = test_run(argv, env, 300);
	ck_assert_msg(plain.status == 0, "without the runtime: %d\n%s", plain.status, plain.output);
	ck_assert_msg(run.status == 0, "with the runtime: %d\n%s", run.status, run.output);
	/* Each thread does each of the four kinds of call ITERATIONS / 4 times. */
	char *expected = test_format("nvidia loads: %d\nother loads: %d\nmissing failed: %d\nerrors: 0\n", 8 * ITERATIONS / 4,
				     8 * ITERATIONS / 4, 8 * ITERATIONS / 4);
	ck_assert_msg(strncmp(plain.output, expected, strlen(expected)) == 0, "%s", plain.output);
	ck_assert_msg(strncmp(run.output, expected, strlen(expected)) == 0, "%s", run.output);
	if (strcmp(forks, "0") != 0) {
		ck_assert_msg(test_contains(plain.output, "children compiled: 0 of " FORKS), "the set-up fails without: %s", plain.output);
		ck_assert_msg(test_contains(run.output, "children compiled: " FORKS " of " FORKS), "%s", run.output);
	}
}
END_TEST

START_TEST(test_fork_while_other_threads_sync_never_hangs_the_child)
{
	/* Without the runtime's fork handlers most of these children hang: glibc does not reset the
	   loader's list lock in a child, and the syncing threads hold it most of the time. */
	const char *argv[] = { test_setting("NVI_FORK_SYNC"), "300", "2", NULL };
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_run(argv, env, 120);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "hung: 0 of 300\nfailed: 0\n"), "%s", run.output);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("stress");
	TCase *tc = tcase_create("stress");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_threads_and_forks_under_the_runtime);
	tcase_add_test(tc, test_fork_while_other_threads_sync_never_hangs_the_child);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
