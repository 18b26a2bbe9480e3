/* Secure execution (AT_SECURE): a binary with a file capability, run by an ordinary user, linked
   against the runtime. It runs, and no NVINTERPOSE_* setting has any effect: no log, no event file,
   policy off. The same binary without the capability obeys them, so the test can tell. */
#define _GNU_SOURCE
#include "common.h"
#include "standins.h"
#include "nvinterpose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

static bool have(const char *tool)
{
	char *command = NULL;
	return asprintf(&command, "command -v %s >/dev/null", tool) > 0 && system(command) == 0;
}

struct secure_setup {
	char *root, *program, *log;
	struct standin_wheel wheel;
};

static struct secure_setup prepare(void)
{
	struct secure_setup s;
	s.wheel = standin_nvrtc_wheel(1);
	s.root = s.wheel.root;
	chmod(s.root, 0755);
	char *lib = test_format("%s/runtime", s.root);
	test_mkdirs(lib);
	test_copy_file(test_setting("NVI_RUNTIME"), test_format("%s/libnvinterpose.so.0", lib));
	s.program = test_format("%s/api-client", lib);
	char *command = test_format("'%s' -o '%s' '%s/tests/api_client.c' -I'%s/include' -L'%s' -l:libnvinterpose.so.0 -ldl -Wl,-rpath,'%s'",
				    test_setting("NVI_CC"), s.program, test_setting("NVI_SOURCE_ROOT"), test_setting("NVI_SOURCE_ROOT"), lib, lib);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run built = test_run(argv, no_env, 120);
	ck_assert_msg(built.status == 0, "%s", built.output);
	char *logs = test_format("%s/logs", s.root);
	test_mkdirs(logs);
	chmod(logs, 0777);
	s.log = test_format("%s/events.jsonl", logs);
	return s;
}

static struct test_run run_as_nobody(const struct secure_setup *s)
{
	const char *argv[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", s->program, s->wheel.nvrtc, NULL };
	const char *env[] = { "NVINTERPOSE_LOG=debug", test_format("NVINTERPOSE_LOG_FILE=%s", s->log), "NVINTERPOSE_POLICY=bogus", NULL };
	return test_run(argv, env, 60);
}

START_TEST(test_settings_are_obeyed_without_secure_execution)
{
	struct secure_setup s = prepare();
	struct test_run run = run_as_nobody(&s);
	ck_assert_msg(run.status == 0, "%s", run.output);
	ck_assert_msg(test_contains(run.output, "NVINTERPOSE_POLICY='bogus'"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "compile: 42"), "%s", run.output);
	ck_assert_msg(access(s.log, F_OK) == 0, "the event log was written");
}
END_TEST

START_TEST(test_settings_are_ignored_under_secure_execution)
{
	struct secure_setup s = prepare();
	const char *argv[] = { "setcap", "cap_net_bind_service+ep", s.program, NULL };
	struct test_run capped = test_run(argv, no_env, 30);
	ck_assert_msg(capped.status == 0, "setcap: %s", capped.output);
	struct test_run run = run_as_nobody(&s);
	ck_assert_msg(run.status == 0, "it runs: %d %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "version: " NVI_VERSION), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "nvinterpose:"), "no log on stderr: %s", run.output);
	ck_assert_msg(access(s.log, F_OK) != 0, "no event log file");
	ck_assert_msg(test_contains(run.output, "compile: -1"), "policy off: nothing redirected: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin: %s\n", s.wheel.lib)), "still recorded: %s", run.output);
}
END_TEST

START_TEST(test_audit_front_is_inert_under_secure_execution)
{
	/* The loader ignores an LD_AUDIT library outside its trusted folders in a secure-execution
	   process; wherever it would load one, the runtime's settings are ignored there too. The
	   program runs as it does without it. */
	struct secure_setup s = prepare();
	const char *cap[] = { "setcap", "cap_net_bind_service+ep", s.program, NULL };
	ck_assert_int_eq(test_run(cap, no_env, 30).status, 0);
	/* LD_AUDIT set by env, as nobody: setpriv itself (root, not secure) must not run it. */
	const char *argv[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
			       test_format("LD_AUDIT=%s", test_setting("NVI_RUNTIME")), s.program, s.wheel.nvrtc, NULL };
	const char *env[] = { "NVINTERPOSE_LOG=debug", test_format("NVINTERPOSE_LOG_FILE=%s", s.log), NULL };
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 0, "it runs: %d %s", run.status, run.output);
	ck_assert_msg(!test_contains(run.output, "nvinterpose:"), "no log on stderr: %s", run.output);
	ck_assert_msg(access(s.log, F_OK) != 0, "no event log file");
}
END_TEST

int main(void)
{
	if (geteuid() != 0 || !have("setcap") || !have("setpriv")) {
		printf("SKIP: needs root, setcap (libcap2-bin) and setpriv (util-linux) to make a secure-execution process\n");
		return TEST_SKIP;
	}
	/* File capabilities need extended attributes where the temporary folder lives. */
	char *probe = NULL;
	if (asprintf(&probe, "%s/nvinterpose-setcap-probe-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid()) < 0)
		return EXIT_FAILURE;
	char *command = NULL;
	if (asprintf(&command, "cp /bin/true '%s' && setcap cap_net_bind_service+ep '%s'", probe, probe) < 0)
		return EXIT_FAILURE;
	int capped = system(command);
	if (capped != 0) {
		unlink(probe);
		printf("SKIP: setcap does not work on this file system (%s)\n", command);
		return TEST_SKIP;
	}
	/* The loader drops LD_SHOW_AUXV in secure-execution mode: when the capable program still shows
	   its auxiliary vector, this machine did not set AT_SECURE (qemu-user never does). */
	free(command);
	if (asprintf(&command, "setpriv --reuid=65534 --regid=65534 --clear-groups env LD_SHOW_AUXV=1 '%s'", probe) < 0)
		return EXIT_FAILURE;
	FILE *shown = popen(command, "r");
	char line[256];
	bool secure = true;
	while (shown && fgets(line, sizeof line, shown))
		if (strncmp(line, "AT_SECURE:", 10) == 0)
			secure = false;
	if (shown)
		pclose(shown);
	unlink(probe);
	if (!secure) {
		printf("SKIP: a file-capability program does not run in secure-execution mode here (AT_SECURE is 0: qemu-user never sets it)\n");
		return TEST_SKIP;
	}
	Suite *suite = suite_create("secure");
	TCase *tc = tcase_create("secure");
	tcase_add_test(tc, test_settings_are_obeyed_without_secure_execution);
	tcase_add_test(tc, test_settings_are_ignored_under_secure_execution);
	tcase_add_test(tc, test_audit_front_is_inert_under_secure_execution);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
