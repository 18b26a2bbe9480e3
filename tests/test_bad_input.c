/* Bad input gets a clear message and changes nothing else: bad settings, unusable files where a
   dependent is looked for, hostile names. The host program always goes on. */
#define _GNU_SOURCE
#include "common.h"
#include "standins.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

START_TEST(test_bogus_policy_is_reported_and_fallback_used)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), "NVINTERPOSE_POLICY=bogus", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "nvinterpose: error: NVINTERPOSE_POLICY='bogus' is not one of fallback, coherent, off; using fallback"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
	ck_assert_int_eq(run.status, 0);
}
END_TEST

START_TEST(test_bogus_log_level_is_reported)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=loud", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_LOG='loud' is not one of error, warn, info, debug"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_bad_path_entries_are_reported_and_good_ones_kept)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *good = test_format("%s/good", wheel.root);
	test_mkdirs(good);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", good), 45, NULL);
	char long_entry[5001];
	memset(long_entry, 'x', sizeof(long_entry) - 1);
	long_entry[0] = '/';
	long_entry[sizeof(long_entry) - 1] = '\0';
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_PATH=/nonexistent/folder:relative/folder::%s:%s", long_entry, good), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_PATH: '/nonexistent/folder' is not a folder; ignored"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_PATH: relative entry 'relative/folder' ignored"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_PATH: empty entry ignored"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_PATH: entry of 5000 characters ignored"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 45"), "%s", run.output);
}
END_TEST

START_TEST(test_unwritable_log_file_is_reported_and_the_program_goes_on)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG_FILE=/nonexistent-folder/events.jsonl", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_LOG_FILE='/nonexistent-folder/events.jsonl' cannot be opened for appending: No such file or directory; no event log"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_fifo_log_file_is_refused_without_blocking)
{
	/* A FIFO would block the process in its constructor until a reader came, and a pipe whose
	   reader went would kill it with SIGPIPE: the event log must be a regular file. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *fifo = test_format("%s/events.fifo", wheel.root);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_LOG_FILE=%s", fifo), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(run.status != 137, "blocked on the FIFO: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("NVINTERPOSE_LOG_FILE='%s' cannot be opened for appending: not a regular file", fifo)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

/* NVINTERPOSE_DISABLE=1 is the way out of every other setting: none of them is read, reported or
   acted on (no message, no event log made), and the program runs as it does without the runtime. */
START_TEST(test_disabled_runtime_reads_no_other_setting)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *log_file = test_format("%s/events.jsonl", wheel.root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_DISABLE=1", "NVINTERPOSE_POLICY=bogus", "NVINTERPOSE_LOG=debug",
			      "NVINTERPOSE_PATH=relative/folder", test_format("NVINTERPOSE_LOG_FILE=%s", log_file),
			      "NVINTERPOSE_REPORT=1", NULL };
	char *args = test_format("call %s nvrtc_like_compile", wheel.nvrtc);
	struct test_run plain = test_probe(no_env, args);
	struct test_run run = test_probe(env, args);
	ck_assert_str_eq(run.output, plain.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
	ck_assert_msg(access(log_file, F_OK) != 0, "the disabled runtime made its event log");
}
END_TEST

START_TEST(test_disable_that_is_not_0_or_1_is_reported_and_the_runtime_works)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), "NVINTERPOSE_DISABLE=false", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "nvinterpose: error: NVINTERPOSE_DISABLE='false' is not 0 or 1; using 0\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

/* The values a message quotes come out escaped: a line break in an NVINTERPOSE_PATH entry cannot
   start a line of its own (one that looks like the runtime's), and a terminal escape in a setting
   or a folder's name never reaches the terminal. */
START_TEST(test_settings_cannot_forge_lines_or_reach_the_terminal)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *folder = test_format("%s/\033[2J", wheel.root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_PATH=rel\nnvinterpose! forged line", "NVINTERPOSE_POLICY=\033]0;x\007",
			      test_format("NVINTERPOSE_LOG_FILE=%s/events.jsonl", folder), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "nvinterpose: error: NVINTERPOSE_PATH: relative entry 'rel\\x0anvinterpose! forged line' "
						"ignored (use an absolute folder)\n"),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, "nvinterpose: error: NVINTERPOSE_POLICY='\\x1b]0;x\\x07' is not one of"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("%s/\\x1b[2J/events.jsonl", wheel.root)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "\nnvinterpose! forged") && !strchr(run.output, '\033') && !strchr(run.output, '\007'),
		      "raw bytes on stderr: %s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_garbage_file_with_the_dependents_name_is_skipped)
{
	/* The folder beside NVRTC holds a text file named like the builtins: skipped (with a message at
	   info level), and the next candidate, in NVINTERPOSE_PATH, is used. */
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	test_write_file(wheel.builtins, "this is not a shared object\n");
	char *good = test_format("%s/good", wheel.root);
	test_mkdirs(good);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", good), 46, NULL);
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_PATH=%s", good), "NVINTERPOSE_LOG=info", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, test_format("%s is not a shared object this process can load; skipped", wheel.builtins)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 46"), "%s", run.output);
}
END_TEST

START_TEST(test_foreign_machine_library_with_the_right_name_is_skipped)
{
	/* A real shared object whose header says another machine than the build's: the loader would
	   refuse it, so the runtime does not offer it. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	int fd = open(wheel.builtins, O_WRONLY);
#if defined(__aarch64__)
	unsigned short other = EM_X86_64;
#else
	unsigned short other = EM_AARCH64;
#endif
	ck_assert_int_eq(pwrite(fd, &other, sizeof(other), 18), 2);
	close(fd);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=info", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "not a shared object this process can load; skipped"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "failed to open libnvrtc-builtins.so.77.1: libnvrtc-builtins.so.77.1: cannot open shared object file"), "%s", run.output);
}
END_TEST

START_TEST(test_fifo_with_the_dependents_name_does_not_block)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	ck_assert_int_eq(mkfifo(wheel.builtins, 0644), 0);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(run.status != 137, "blocked on the FIFO");
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
}
END_TEST

START_TEST(test_hostile_names_are_passed_to_the_loader)
{
	/* Over-long names, names with '/' and control characters: the loader's answer, unchanged. */
	char name[5000];
	memset(name, 'a', sizeof(name) - 1);
	memcpy(name, "libnvrtc", 8);
	name[sizeof(name) - 1] = '\0';
	const char *env[] = { standin_preload(), NULL };
	char *args = test_format("open %s open libnvrtc.so.77/../libz.so.1 open 'libnvrtc-builtins.so.77.1\n' open libnvrtc-builtins-zzzzzzzz.so.13", name);
	struct test_run plain = test_probe(no_env, args);
	struct test_run run = test_probe(env, args);
	ck_assert_str_eq(plain.output, run.output);
	ck_assert_int_eq(run.status, 0);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("bad_input");
	TCase *tc = tcase_create("bad_input");
	tcase_add_test(tc, test_bogus_policy_is_reported_and_fallback_used);
	tcase_add_test(tc, test_bogus_log_level_is_reported);
	tcase_add_test(tc, test_bad_path_entries_are_reported_and_good_ones_kept);
	tcase_add_test(tc, test_unwritable_log_file_is_reported_and_the_program_goes_on);
	tcase_add_test(tc, test_fifo_log_file_is_refused_without_blocking);
	tcase_add_test(tc, test_disabled_runtime_reads_no_other_setting);
	tcase_add_test(tc, test_settings_cannot_forge_lines_or_reach_the_terminal);
	tcase_add_test(tc, test_disable_that_is_not_0_or_1_is_reported_and_the_runtime_works);
	tcase_add_test(tc, test_garbage_file_with_the_dependents_name_is_skipped);
	tcase_add_test(tc, test_foreign_machine_library_with_the_right_name_is_skipped);
	tcase_add_test(tc, test_fifo_with_the_dependents_name_does_not_block);
	tcase_add_test(tc, test_hostile_names_are_passed_to_the_loader);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
