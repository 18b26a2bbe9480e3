/* nvinterpose-run: options, LD_PRELOAD handling, exit status, errors. */
#include "common.h"
#include "standins.h"

#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

static struct test_run launcher(const char *const *env, const char *args)
{
	char *command = test_format("exec '%s' %s", test_setting("NVI_RUN"), args);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	return test_run(argv, env, 60);
}

START_TEST(test_help_and_version)
{
	struct test_run run = launcher(no_env, "--help");
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(test_contains(run.output, "Usage: nvinterpose-run [OPTIONS] [--] COMMAND [ARGS...]"), "%s", run.output);
	run = launcher(no_env, "--version");
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(test_contains(run.output, "nvinterpose-run 0."), "%s", run.output);
}
END_TEST

START_TEST(test_runtime_goes_first_and_keeps_what_was_preloaded)
{
	const char *env[] = { "LD_PRELOAD=/opt/a/liba.so /opt/b/libb.so", NULL };
	struct test_run run = launcher(env, "--print-env");
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(test_contains(run.output, test_format("LD_PRELOAD=%s:/opt/a/liba.so:/opt/b/libb.so\n", test_setting("NVI_RUNTIME"))), "%s", run.output);
}
END_TEST

START_TEST(test_runtime_is_never_preloaded_twice)
{
	const char *env[] = { test_format("LD_PRELOAD=/opt/a/liba.so:%s", test_setting("NVI_RUNTIME")), NULL };
	struct test_run run = launcher(env, "-- sh -c 'echo \"$LD_PRELOAD\"'");
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(test_count(run.output, "libnvinterpose.so") == 1, "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("%s:/opt/a/liba.so\n", test_setting("NVI_RUNTIME"))), "%s", run.output);
}
END_TEST

START_TEST(test_options_become_settings)
{
	struct test_run run = launcher(no_env, "--policy off --log info --log-file /tmp/x.jsonl --path /opt/p --print-env");
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_POLICY=off\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_LOG=info\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_LOG_FILE=/tmp/x.jsonl\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_PATH=/opt/p\n"), "%s", run.output);
}
END_TEST

/* --report: the command the launcher execs (its pid) prints the report; its children do not. */
START_TEST(test_report_is_for_the_command_alone)
{
	if (access("/bin/bash", X_OK) != 0) {
		printf("skipped: test_report_is_for_the_command_alone needs /bin/bash\n");
		return;
	}
	struct test_run run = launcher(no_env, "--report -- /bin/bash -c '/bin/true; /bin/true; true'");
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(test_count(run.output, "nvinterpose: report: process ") == 1 &&
			      test_contains(run.output, ": 0 origins registered, 0 redirects, 0 misses, 0 mixed origins\n"),
		      "%s", run.output);
	run = launcher(no_env, "--help");
	ck_assert_msg(test_contains(run.output, "--report"), "%s", run.output);
}
END_TEST

START_TEST(test_exit_status_is_the_commands)
{
	struct test_run run = launcher(no_env, "-- sh -c 'exit 7'");
	ck_assert_int_eq(run.status, 7);
}
END_TEST

START_TEST(test_usage_errors_are_clear)
{
	struct test_run run = launcher(no_env, "--policy bogus true");
	ck_assert_int_eq(run.status, 2);
	ck_assert_msg(test_contains(run.output, "--policy: 'bogus' is not one of fallback, coherent, off"), "%s", run.output);
	run = launcher(no_env, "--frobnicate true");
	ck_assert_int_eq(run.status, 2);
	ck_assert_msg(test_contains(run.output, "unknown option '--frobnicate'"), "%s", run.output);
	run = launcher(no_env, "");
	ck_assert_int_eq(run.status, 2);
	ck_assert_msg(test_contains(run.output, "no command given"), "%s", run.output);
	run = launcher(no_env, "/nonexistent/program");
	ck_assert_int_eq(run.status, 127);
	ck_assert_msg(test_contains(run.output, "command not found: /nonexistent/program"), "%s", run.output);
	run = launcher(no_env, "--library /nonexistent/libnvinterpose.so true");
	ck_assert_int_eq(run.status, 2);
	ck_assert_msg(test_contains(run.output, "no such file: /nonexistent/libnvinterpose.so"), "%s", run.output);
	run = launcher(no_env, "--log");
	ck_assert_int_eq(run.status, 2);
	ck_assert_msg(test_contains(run.output, "--log needs a value"), "%s", run.output);
}
END_TEST

START_TEST(test_launched_program_gets_the_fix)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	struct test_run run = launcher(no_env, test_format("'%s' call %s nvrtc_like_compile", test_setting("NVI_PROBE"), wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_runtime_the_loader_refuses_stops_before_the_command)
{
	/* A runtime that needs a symbol version its libc lacks (as one built for glibc 2.34 does on
	   glibc 2.31): under LD_PRELOAD that is the loader's fatal error. Stand-ins: a library whose
	   new copy defines NVI_TEST_2, linked against that and then replaced by the old copy, which
	   defines NVI_TEST_1 only. The launcher must say so and not run the command. */
	char *dir = test_tmpdir();
	char *versions = test_format("%s/libversioned.so.77", dir), *runtime = test_format("%s/libnvinterpose.so", dir);
	test_write_file(test_format("%s/new.map", dir), "NVI_TEST_1 { local: *; }; NVI_TEST_2 { global: builtins_value; } NVI_TEST_1;\n");
	test_write_file(test_format("%s/old.map", dir), "NVI_TEST_1 { global: builtins_value; local: *; };\n");
	test_build_library("value.c", versions, "libversioned.so.77", test_format("-Wl,--version-script,%s/new.map", dir));
	test_build_library("needer.c", runtime, "libnvinterpose.so", test_format("-L%s -l:libversioned.so.77 -Wl,-rpath,%s", dir, dir));
	test_build_library("value.c", versions, "libversioned.so.77", test_format("-Wl,--version-script,%s/old.map", dir));
	char *marker = test_format("%s/ran", dir);
	struct test_run run = launcher(no_env, test_format("--library '%s' -- touch '%s'", runtime, marker));
	ck_assert_int_eq(run.status, 2);
	ck_assert_msg(access(marker, F_OK) != 0, "the command ran: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("%s cannot be preloaded here, so the command was not run.", runtime)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "the loader: ") && test_contains(run.output, "version `NVI_TEST_2' not found"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "use a libnvinterpose.so built for this system with --library, or build it here"), "%s", run.output);

	/* Not a shared object: the loader would only warn and run the command without the runtime. */
	test_write_file(runtime, "not a library\n");
	run = launcher(no_env, test_format("--library '%s' -- touch '%s'", runtime, marker));
	ck_assert_int_eq(run.status, 2);
	ck_assert_msg(access(marker, F_OK) != 0, "the command ran: %s", run.output);
	ck_assert_msg(test_contains(run.output, "from LD_PRELOAD cannot be preloaded"), "%s", run.output);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("launcher");
	TCase *tc = tcase_create("launcher");
	tcase_add_test(tc, test_help_and_version);
	tcase_add_test(tc, test_runtime_goes_first_and_keeps_what_was_preloaded);
	tcase_add_test(tc, test_runtime_is_never_preloaded_twice);
	tcase_add_test(tc, test_options_become_settings);
	tcase_add_test(tc, test_exit_status_is_the_commands);
	tcase_add_test(tc, test_report_is_for_the_command_alone);
	tcase_add_test(tc, test_usage_errors_are_clear);
	tcase_add_test(tc, test_launched_program_gets_the_fix);
	tcase_add_test(tc, test_runtime_the_loader_refuses_stops_before_the_command);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
