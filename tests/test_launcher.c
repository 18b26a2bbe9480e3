/* nvinterpose-run: options, LD_PRELOAD handling, --print-env, exit status, errors, the installed
   launcher. */
#define _GNU_SOURCE
#include "common.h"
#include "nvinterpose.h"
#include "standins.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

/* The launcher with args (shell words), in folder (NULL: the test's), run by the shell sh (NULL:
   its own #!/bin/sh). */
static struct test_run launcher_under(const char *sh, const char *folder, const char *const *env, const char *args)
{
	char *command = test_format("%s%s%sexec %s '%s' %s", folder ? "cd '" : "", folder ? folder : "", folder ? "' && " : "",
				    sh ? sh : "", test_setting("NVI_RUN"), args);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	return test_run(argv, env, 60);
}

static struct test_run launcher_in(const char *folder, const char *const *env, const char *args)
{
	return launcher_under(NULL, folder, env, args);
}

/* The shells the launcher is tested under where they differ: the system's /bin/sh (dash on
   Debian) and bash, which is /bin/sh on Fedora, RHEL and Arch. */
static const char *const shells[] = { "/bin/sh", "/bin/bash" };
#define SHELLS (sizeof(shells) / sizeof(shells[0]))

/* False, saying so, for a shell this machine lacks. */
static bool have_shell(const char *test, const char *sh)
{
	if (access(sh, X_OK) == 0)
		return true;
	printf("skipped: %s under %s: not installed\n", test, sh);
	return false;
}

static struct test_run launcher(const char *const *env, const char *args) { return launcher_in(NULL, env, args); }

static struct test_run shell(const char *const *env, const char *command)
{
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	return test_run(argv, env, 60);
}

/* The launcher refuses --audit before glibc 2.34 (test_audit.c holds that); these tests are about
   what it does past that check, on any glibc. */
static const char *audit_path(void) { return test_system_path(NULL, "2.36"); }

/* The usage error's whole output: SUBJECT: PROBLEM, then where to read more. */
static void check_usage_error(const struct test_run *run, const char *message)
{
	ck_assert_msg(run->status == 2, "%s: status %d: %s", message, run->status, run->output);
	ck_assert_str_eq(run->output, test_format("nvinterpose-run: %s\nTry 'nvinterpose-run --help' for more information.\n", message));
}

START_TEST(test_help_and_version)
{
	const char *const helps[] = { "--help", "-h", "--he" };
	for (size_t i = 0; i < 3; i++) {
		struct test_run run = launcher(no_env, helps[i]);
		ck_assert_int_eq(run.status, 0);
		ck_assert_msg(test_contains(run.output, "Usage: nvinterpose-run [OPTIONS] [--] COMMAND [ARGS...]\n"), "%s", run.output);
		ck_assert_msg(test_contains(run.output, "--print-env[=FORMAT]") && test_contains(run.output, "--audit-only"), "%s", run.output);
	}
	const char *const versions[] = { "--version", "-V" };
	for (size_t i = 0; i < 2; i++) {
		struct test_run run = launcher(no_env, versions[i]);
		ck_assert_int_eq(run.status, 0);
		ck_assert_str_eq(run.output, "nvinterpose-run " NVI_VERSION "\n");
	}
}
END_TEST

/* GNU long options: --opt=value and --opt value, any unambiguous prefix. */
START_TEST(test_options_take_their_value_both_ways_and_abbreviated)
{
	const char *const spellings[] = { "--policy=off", "--policy off", "--pol=off", "--po off" };
	for (size_t i = 0; i < 4; i++) {
		struct test_run run = launcher(no_env, test_format("%s --print-env=github", spellings[i]));
		ck_assert_msg(run.status == 0 && test_contains(run.output, "\nNVINTERPOSE_POLICY=off\n"), "%s: %s", spellings[i], run.output);
	}
	struct test_run run = launcher(no_env, "--log-file=/tmp/a=b.jsonl --pr=json");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "\"NVINTERPOSE_LOG_FILE\": \"/tmp/a=b.jsonl\""), "%s", run.output);
}
END_TEST

/* As the runtime's parsers take them (config_parse_policy): any case, passed on in the runtime's
   own spelling. */
START_TEST(test_policy_and_log_names_in_any_case)
{
	struct test_run run = launcher(no_env, "--policy Coherent --log=DEBUG --print-env=github");
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(test_contains(run.output, "\nNVINTERPOSE_POLICY=coherent\nNVINTERPOSE_LOG=debug\n"), "%s", run.output);
	const char *env[] = { "NVINTERPOSE_POLICY=OFF", "NVINTERPOSE_LOG=Warn", NULL };
	run = launcher(env, "--print-env=github");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "\nNVINTERPOSE_POLICY=off\nNVINTERPOSE_LOG=warn\n"), "%s", run.output);
	run = launcher(no_env, "--policy=Coherent -- sh -c 'echo \"policy $NVINTERPOSE_POLICY\"'");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "policy coherent\n"), "%s", run.output);
}
END_TEST

START_TEST(test_usage_errors_have_one_shape)
{
	static const char *const rows[][2] = {
		{ "--frobnicate true", "--frobnicate: unknown option" },
		{ "-x true", "-x: unknown option" },
		{ "--lo=info true", "--lo: ambiguous option (--log, --log-file)" },
		{ "--audit-o=1 true", "--audit-only: takes no value" },
		{ "--log", "--log: needs a value" },
		{ "--report=yes true", "--report: takes no value" },
		{ "--policy bogus true", "--policy: 'bogus' is not one of fallback, coherent, off" },
		{ "--log=loud true", "--log: 'loud' is not one of error, warn, info, debug" },
		{ "--log-file= true", "--log-file: needs a file" },
		{ "--print-env=yaml", "--print-env: 'yaml' is not one of sh, github, json" },
		{ "--format=sh true", "--format: goes with --print-env" },
		{ "--print-env true", "--print-env: takes no command ('true' given)" },
		{ "--print-env --format json extra", "--print-env: takes no command ('extra' given)" },
		{ "--print-env --report", "--report: goes with a command: the report is for the process the launcher starts" },
		{ "", "COMMAND: no command given" },
		{ "--policy=off --", "COMMAND: no command given" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct test_run run = launcher(no_env, rows[i][0]);
		check_usage_error(&run, rows[i][1]);
	}
}
END_TEST

/* Libraries to preload besides the runtime (built, so that the loader has nothing to say). */
static char *other_preload(const char *folder, const char *name)
{
	char *path = test_format("%s/%s", folder, name);
	test_build_library("value.c", path, "libother.so.77", "");
	return path;
}

START_TEST(test_runtime_goes_first_and_keeps_what_was_preloaded)
{
	char *folder = test_tmpdir(), *a = other_preload(folder, "liba.so.77"), *b = other_preload(folder, "libb.so.77");
	const char *env[] = { test_format("LD_PRELOAD=%s %s", a, b), NULL };
	struct test_run run = launcher(env, "--print-env=github");
	ck_assert_int_eq(run.status, 0);
	ck_assert_str_eq(run.output, test_format("LD_PRELOAD=%s:%s:%s\n", test_setting("NVI_RUNTIME"), a, b));
}
END_TEST

START_TEST(test_runtime_is_never_preloaded_twice)
{
	/* The same runtime, and a copy from elsewhere (two runtimes would both start). */
	char *folder = test_tmpdir(), *a = other_preload(folder, "liba.so.77");
	char *copy = test_format("%s/libnvinterpose.so.0", test_mkdirs(test_format("%s/other", folder)));
	test_copy_file(test_setting("NVI_RUNTIME"), copy);
	const char *env[] = { test_format("LD_PRELOAD=%s:%s %s", a, test_setting("NVI_RUNTIME"), copy), NULL };
	struct test_run run = launcher(env, "-- sh -c 'echo \"preload: $LD_PRELOAD\"'");
	ck_assert_int_eq(run.status, 0);
	ck_assert_str_eq(run.output, test_format("preload: %s:%s\n", test_setting("NVI_RUNTIME"), a));
}
END_TEST

/* LD_PRELOAD's entries are names, not patterns: FOLDER/\*.so stays that one file whatever else
   the folder holds. */
START_TEST(test_ld_preload_entries_are_not_globbed)
{
	char *folder = test_tmpdir(), *star = other_preload(folder, "*.so");
	other_preload(folder, "a.so");
	other_preload(folder, "b.so");
	const char *env[] = { test_format("LD_PRELOAD=%s", star), NULL };
	struct test_run run = launcher_in(folder, env, "--print-env=github");
	ck_assert_str_eq(run.output, test_format("LD_PRELOAD=%s:%s\n", test_setting("NVI_RUNTIME"), star));
	run = launcher_in(folder, env, "-- sh -c 'echo \"preload: $LD_PRELOAD\"'");
	ck_assert_str_eq(run.output, test_format("preload: %s:%s\n", test_setting("NVI_RUNTIME"), star));
}
END_TEST

/* The loader splits LD_PRELOAD at spaces and colons (LD_AUDIT at colons): a runtime there would
   be left out and the command run without it. */
START_TEST(test_runtime_path_the_loader_cannot_hold_is_refused)
{
	char *root = test_tmpdir(), *marker = test_format("%s/ran", root);
	const char *const folders[] = { "my libs", "a:b" };
	for (size_t i = 0; i < 2; i++) {
		char *runtime = test_format("%s/%s/libnvinterpose.so.0", root, folders[i]);
		test_mkdirs(test_format("%s/%s", root, folders[i]));
		test_copy_file(test_setting("NVI_RUNTIME"), runtime);
		struct test_run run = launcher(no_env, test_format("--library '%s' -- touch '%s'", runtime, marker));
		ck_assert_msg(run.status == 2 && access(marker, F_OK) != 0, "the command ran: %d %s", run.status, run.output);
		ck_assert_str_eq(run.output, test_format("nvinterpose-run: %s: LD_PRELOAD cannot hold this path (the loader splits it at spaces and colons); "
							 "put the runtime in a folder without them and give --library\n",
							 runtime));
		const char *audit_env[] = { audit_path(), NULL };
		run = launcher(audit_env, test_format("--library '%s' --print-env --audit", runtime));
		ck_assert_msg(run.status == 2 && test_contains(run.output, "LD_PRELOAD cannot hold this path"), "%s", run.output);
		/* LD_AUDIT alone takes a space. */
		run = launcher(audit_env, test_format("--library '%s' --audit-only -- sh -c 'echo \"audit: $LD_AUDIT\"'", runtime));
		if (i == 0)
			ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("audit: %s\n", runtime)), "%s", run.output);
		else
			ck_assert_msg(run.status == 2 && test_contains(run.output, "LD_AUDIT cannot hold this path (the loader splits it at colons)"), "%s",
				      run.output);
	}
}
END_TEST

/* The options reach the command as settings, files and folders made absolute from the launcher's
   working folder. */
START_TEST(test_options_become_settings)
{
	char *folder = test_tmpdir();
	test_mkdirs(test_format("%s/extra", folder));
	struct test_run run = launcher_in(folder, no_env,
					  "--policy=off --log info --log-file events.jsonl --path ./extra::/opt/p -- "
					  "sh -c 'echo \"settings: $NVINTERPOSE_POLICY|$NVINTERPOSE_LOG|$NVINTERPOSE_LOG_FILE|$NVINTERPOSE_PATH\"'");
	ck_assert_int_eq(run.status, 0);
	char *real = realpath(folder, NULL);
	ck_assert_msg(test_contains(run.output, test_format("settings: off|info|%s/events.jsonl|%s/extra:/opt/p\n", real, real)), "%s", run.output);
}
END_TEST

/* sh: `eval "$(nvinterpose-run --print-env)"` sets exactly the values, exported for children,
   whatever characters they hold; and the stand-in NVRTC then finds its builtins. */
START_TEST(test_print_env_sh_is_eval_safe_and_exported)
{
	char *root = test_tmpdir();
	char *odd = test_format("%s/it's \"odd\" $HOME `x` \\ ;|&", root);
	test_mkdirs(odd);
	/* A line break: in an inherited value (the options refuse one). */
	char *log = test_format("%s/events\nlog.jsonl", odd);
	const char *named[] = { test_format("NVI_ODD=%s", odd), test_format("NVI_LOG=%s", log), NULL };
	char *command = test_format("NVINTERPOSE_LOG_FILE=\"$NVI_LOG\" && export NVINTERPOSE_LOG_FILE && "
				    "eval \"$('%s' --print-env --path \"$NVI_ODD\" --policy coherent)\" && "
				    "sh -c '[ \"$NVINTERPOSE_PATH\" = \"$NVI_ODD\" ] && [ \"$NVINTERPOSE_LOG_FILE\" = \"$NVI_LOG\" ] && "
				    "echo \"exported: $NVINTERPOSE_POLICY $LD_PRELOAD\"'",
				    test_setting("NVI_RUN"));
	struct test_run run = shell(named, command);
	ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("exported: coherent %s\n", test_setting("NVI_RUNTIME"))), "%s",
		      run.output);

	run = launcher(no_env, "--print-env --policy off");
	ck_assert_str_eq(run.output, test_format("export LD_PRELOAD='%s'\nexport NVINTERPOSE_POLICY='off'\n", test_setting("NVI_RUNTIME")));

	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *call = test_format("'%s' call '%s' nvrtc_like_compile", test_setting("NVI_PROBE"), wheel.nvrtc);
	struct test_run plain = shell(no_env, call);
	ck_assert_msg(!test_contains(plain.output, "call nvrtc_like_compile: 42"), "%s", plain.output);
	run = shell(no_env, test_format("eval \"$('%s' --print-env)\" && %s", test_setting("NVI_RUN"), call));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_print_env_github_lines)
{
	char *a = other_preload(test_tmpdir(), "liba.so.77");
	const char *env[] = { test_format("LD_PRELOAD=%s", a), "NVINTERPOSE_DISABLE=1", NULL };
	struct test_run run = launcher(env, "--print-env=github --policy coherent --path /opt/my\\ libs");
	ck_assert_int_eq(run.status, 0);
	ck_assert_str_eq(run.output, test_format("LD_PRELOAD=%s:%s\nNVINTERPOSE_POLICY=coherent\nNVINTERPOSE_PATH=/opt/my libs\n"
						 "NVINTERPOSE_DISABLE=1\n",
						 test_setting("NVI_RUNTIME"), a));
	/* --format is the same; a line break cannot be a line. */
	const char *broken[] = { "NVINTERPOSE_LOG_FILE=/tmp/a\nb.jsonl", NULL };
	run = launcher(broken, "--print-env --format=GitHub");
	ck_assert_msg(run.status == 2 && !test_contains(run.output, "LD_PRELOAD="), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "nvinterpose-run: NVINTERPOSE_LOG_FILE: a line break cannot be written as a github line (use --print-env=json)\n"),
		      "%s", run.output);
	const char *latin1[] = { "NVINTERPOSE_LOG_FILE=/tmp/caf\xe9.jsonl", NULL };
	run = launcher(latin1, "--print-env=github");
	ck_assert_msg(run.status == 2 && test_contains(run.output, "is not UTF-8, which GitHub reads the file in"), "%s", run.output);
}
END_TEST

START_TEST(test_print_env_json_is_one_object)
{
	const char *values[] = { "/tmp/q\"uote\\back\tslash\nline\x01.jsonl", "/opt/caf\xc3\xa9:/opt/b" };
	const char *env[] = { test_format("NVINTERPOSE_LOG_FILE=%s", values[0]), test_format("NVINTERPOSE_PATH=%s", values[1]), audit_path(),
			      NULL };
	struct test_run run = launcher(env, "--print-env=json --audit");
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(test_json_document(run.output) && run.output[strlen(run.output) - 1] == '\n', "%s", run.output);
	struct test_json_member members[8];
	size_t count = test_json_members(run.output, members, 8);
	ck_assert_msg(count == 4, "%s", run.output);
	const char *keys[] = { "LD_PRELOAD", "LD_AUDIT", "NVINTERPOSE_LOG_FILE", "NVINTERPOSE_PATH" };
	const char *expected[] = { test_setting("NVI_RUNTIME"), test_setting("NVI_RUNTIME"), values[0], values[1] };
	for (size_t i = 0; i < 4; i++) {
		ck_assert_str_eq(members[i].key, keys[i]);
		ck_assert_str_eq(test_json_string(members[i].value, members[i].length), expected[i]);
	}
	const char *latin1[] = { "NVINTERPOSE_PATH=/opt/caf\xe9", NULL };
	run = launcher(latin1, "--print-env=json");
	ck_assert_msg(run.status == 2 && test_contains(run.output, "is not UTF-8, which JSON is"), "%s", run.output);
}
END_TEST

/* An inherited setting is checked as the runtime reads it and refused, not echoed; an option given
   for it replaces it. */
START_TEST(test_print_env_checks_inherited_settings)
{
	static const char *const rows[][2] = {
		{ "NVINTERPOSE_POLICY=bogus", "NVINTERPOSE_POLICY: 'bogus' is not one of fallback, coherent, off" },
		{ "NVINTERPOSE_LOG=loud", "NVINTERPOSE_LOG: 'loud' is not one of error, warn, info, debug" },
		{ "NVINTERPOSE_LOG_FILE=events.jsonl", "NVINTERPOSE_LOG_FILE: 'events.jsonl' is not an absolute path (give --log-file)" },
		{ "NVINTERPOSE_PATH=/opt/a::/opt/b", "NVINTERPOSE_PATH: '/opt/a::/opt/b' has an empty entry" },
		{ "NVINTERPOSE_PATH=/opt/a:lib", "NVINTERPOSE_PATH: '/opt/a:lib' has an entry that is not an absolute path (give --path)" },
		{ "NVINTERPOSE_DISABLE=false", "NVINTERPOSE_DISABLE: 'false' is not 0 or 1" },
	};
	const char *const formats[] = { "sh", "github", "json" };
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (size_t f = 0; f < 3; f++) {
			const char *env[] = { rows[i][0], NULL };
			struct test_run run = launcher(env, test_format("--print-env=%s", formats[f]));
			check_usage_error(&run, rows[i][1]);
		}
	const char *env[] = { "NVINTERPOSE_POLICY=bogus", "NVINTERPOSE_LOG_FILE=events.jsonl", NULL };
	struct test_run run = launcher(env, "--print-env=github --policy=off --log-file=/tmp/e.jsonl");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "\nNVINTERPOSE_POLICY=off\nNVINTERPOSE_LOG_FILE=/tmp/e.jsonl\n"), "%s",
		      run.output);
}
END_TEST

/* In a shell whose LD_PRELOAD holds the runtime and a copy of it from elsewhere, with logging at
   info (a daily user's): the runtime in the launcher's own processes says so on stderr, and the
   launcher's standard output stays the settings alone (eval-safe), the command's its own. The
   settings are given to the launcher alone, not to the shell that starts it. */
START_TEST(test_standard_output_is_the_launchers_alone_with_logging_inherited)
{
	char *copy = test_format("%s/libnvinterpose.so.0", test_mkdirs(test_format("%s/other", test_tmpdir())));
	test_copy_file(test_setting("NVI_RUNTIME"), copy);
	char *launcher = test_format("LD_PRELOAD='%s %s' NVINTERPOSE_LOG=info '%s'", test_setting("NVI_RUNTIME"), copy, test_setting("NVI_RUN"));
	struct test_run run = shell(no_env, test_format("%s --print-env", launcher));
	ck_assert_msg(test_contains(run.output, "nvinterpose: info: "), "the runtime logs in the launcher's processes: %s", run.output);
	run = shell(no_env, test_format("%s --print-env 2>/dev/null", launcher));
	ck_assert_str_eq(run.output, test_format("export LD_PRELOAD='%s'\nexport NVINTERPOSE_LOG='info'\n", test_setting("NVI_RUNTIME")));
	run = shell(no_env, test_format("%s -- sh -c 'echo \"preload: $LD_PRELOAD\"' 2>/dev/null", launcher));
	ck_assert_str_eq(run.output, test_format("preload: %s\n", test_setting("NVI_RUNTIME")));
}
END_TEST

/* As a shell would: 127 not found, 126 found and not runnable; with the launcher's own message. */
START_TEST(test_command_that_cannot_be_run_gets_the_launchers_message)
{
	char *folder = test_tmpdir(), *data = test_format("%s/data", folder);
	test_write_file(data, "#!/bin/sh\necho ran\n");
	chmod(data, 0644);
	const char *on_path[] = { test_format("PATH=%s:/usr/bin:/bin", folder), NULL };
	struct {
		const char *const *env;
		const char *command;
		int status;
		const char *message;
	} rows[] = {
		{ no_env, "/nonexistent/program", 127, "/nonexistent/program: no such file" },
		{ no_env, "no-such-command-anywhere", 127, "no-such-command-anywhere: command not found" },
		{ no_env, data, 126, test_format("%s: cannot be run (no permission to execute it)", data) },
		{ no_env, folder, 126, test_format("%s: is a folder, not a command", folder) },
		{ on_path, "data", 126, test_format("data: cannot be run (%s: no permission to execute it)", data) },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct test_run run = launcher(rows[i].env, test_format("-- '%s' arg", rows[i].command));
		ck_assert_msg(run.status == rows[i].status, "%s: %d %s", rows[i].command, run.status, run.output);
		ck_assert_str_eq(run.output, test_format("nvinterpose-run: %s\n", rows[i].message));
	}
}
END_TEST

/* A command named like an option of exec (bash's -c clears the environment, -l and -a change
   argv[0]) is run, with the runtime, under every /bin/sh: the launcher execs the path it found. */
START_TEST(test_command_named_like_an_option_is_run_under_every_shell)
{
	char *bin = test_tmpdir(), *command = test_format("%s/-c", bin);
	test_write_file(command, "#!/bin/sh\necho \"ran: $* with $LD_PRELOAD\"\n");
	ck_assert_int_eq(chmod(command, 0755), 0);
	const char *env[] = { test_format("PATH=%s:/usr/bin:/bin", bin), NULL };
	for (size_t i = 0; i < SHELLS; i++) {
		if (!have_shell("test_command_named_like_an_option_is_run_under_every_shell", shells[i]))
			continue;
		struct test_run run = launcher_under(shells[i], NULL, env, "-- -c hi");
		ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("ran: hi with %s\n", test_setting("NVI_RUNTIME"))),
			      "%s: %d %s", shells[i], run.status, run.output);
	}
}
END_TEST

/* A command name is looked for in PATH as the shell running the launcher looks for it: an empty
   entry, leading, trailing, doubled or the whole of PATH, is the working folder, and an unset
   PATH is the shell's default. The oracle is the shell itself, in the same folder and PATH. */
START_TEST(test_path_is_searched_as_the_shell_searches_it)
{
	char *folder = test_tmpdir(), *command = test_format("%s/nvi-test-command", folder);
	test_write_file(command, "#!/bin/sh\necho \"ran with $LD_PRELOAD\"\n");
	ck_assert_int_eq(chmod(command, 0755), 0);
	/* Whether the command in the working folder is found: 1 yes, 0 no, -1 as the shell's default. */
	static const struct {
		const char *path;
		int found;
	} rows[] = { { "", 1 }, { "/usr/bin:", 1 }, { ":/usr/bin", 1 }, { "/usr/bin::/bin", 1 }, { "/usr/bin:/bin", 0 }, { NULL, -1 } };
	char *ran = test_format("ran with %s\n", test_setting("NVI_RUNTIME"));
	for (size_t i = 0; i < SHELLS; i++) {
		if (!have_shell("test_path_is_searched_as_the_shell_searches_it", shells[i]))
			continue;
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
			const char *path = rows[r].path;
			char *set = path ? test_format("PATH='%s'", path) : "unset PATH;";
			const char *what = path ? test_format("PATH='%s'", path) : "PATH unset";
			struct test_run plain = shell(no_env, test_format("cd '%s' && %s exec %s -c nvi-test-command", folder, set, shells[i]));
			struct test_run run = shell(no_env, test_format("cd '%s' && %s exec %s '%s' -- nvi-test-command", folder, set, shells[i],
									test_setting("NVI_RUN")));
			bool shell_ran = test_contains(plain.output, "ran with"), launcher_ran = test_contains(run.output, ran);
			ck_assert_msg(rows[r].found < 0 || shell_ran == rows[r].found, "%s, %s: the shell itself: %s", shells[i], what, plain.output);
			ck_assert_msg(shell_ran == launcher_ran, "%s, %s: the shell %s, the launcher %s: %s", shells[i], what,
				      shell_ran ? "ran it" : "did not", launcher_ran ? "ran it" : "did not", run.output);
			if (!launcher_ran)
				ck_assert_msg(run.status == 127 && test_contains(run.output, "nvinterpose-run: nvi-test-command: command not found\n"),
					      "%s, %s: %d %s", shells[i], what, run.status, run.output);
		}
	}
}
END_TEST

/* Finding the runtime, reading the options and running the command take no other program: an
   empty PATH (no dirname, no tr, no sed) changes nothing. */
START_TEST(test_launcher_needs_no_program_on_path)
{
	for (size_t i = 0; i < SHELLS; i++) {
		if (!have_shell("test_launcher_needs_no_program_on_path", shells[i]))
			continue;
		struct test_run run = shell(no_env, test_format("PATH='' exec %s '%s' --policy=Coherent --log=WARN -- /bin/sh -c "
								"'echo \"settings: $LD_PRELOAD|$NVINTERPOSE_POLICY|$NVINTERPOSE_LOG\"'",
								shells[i], test_setting("NVI_RUN")));
		ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("settings: %s|coherent|warn\n", test_setting("NVI_RUNTIME"))),
			      "%s: %d %s", shells[i], run.status, run.output);
		run = shell(no_env, test_format("PATH='' exec %s '%s' --print-env --path=\"/it's\"", shells[i], test_setting("NVI_RUN")));
		ck_assert_msg(run.status == 0 && test_contains(run.output, "export NVINTERPOSE_PATH='/it'\\''s'\n"), "%s: %d %s", shells[i],
			      run.status, run.output);
	}
}
END_TEST

/* --path and --log-file values are one path on one line: a ':' (where NVINTERPOSE_PATH splits) or
   a line break, also one that comes from the working folder's name, is refused, as --library
   refuses what LD_PRELOAD splits. A working folder's name is kept whole, a final line break too. */
START_TEST(test_paths_with_a_colon_or_a_line_break_are_refused)
{
	char *root = realpath(test_tmpdir(), NULL);
	char *colon = test_format("%s/a:b", root), *line = test_format("%s/nl\n", root);
	test_mkdirs(test_format("%s/lib", colon));
	test_mkdirs(test_format("%s/lib", line));
	char *colon_message = "holds a ':', which the settings the launcher passes on cannot carry (NVINTERPOSE_PATH splits at colons); "
			      "use a path without one";
	char *line_message = "holds a line break, which the settings the launcher passes on cannot carry; use a path without one";
	for (size_t i = 0; i < SHELLS; i++) {
		if (!have_shell("test_paths_with_a_colon_or_a_line_break_are_refused", shells[i]))
			continue;
		struct test_run run = launcher_under(shells[i], colon, no_env, "--path=lib --print-env");
		check_usage_error(&run, test_format("--path: '%s/lib' %s", colon, colon_message));
		run = launcher_under(shells[i], colon, no_env, "--log-file=events.jsonl -- true");
		check_usage_error(&run, test_format("--log-file: '%s/events.jsonl' %s", colon, colon_message));
		run = launcher_under(shells[i], NULL, no_env, "--log-file=/tmp/a:b.jsonl -- true");
		check_usage_error(&run, test_format("--log-file: '/tmp/a:b.jsonl' %s", colon_message));
		run = launcher_under(shells[i], line, no_env, "--path=lib --print-env");
		check_usage_error(&run, test_format("--path: '%s/nl\\x0a/lib' %s", root, line_message));
		run = launcher_under(shells[i], line, no_env, "--log-file=events.jsonl -- true");
		check_usage_error(&run, test_format("--log-file: '%s/nl\\x0a/events.jsonl' %s", root, line_message));
		/* --library in that folder: the loader takes the line break, and the folder keeps it. */
		test_copy_file(test_setting("NVI_RUNTIME"), test_format("%s/libnvinterpose.so.0", line));
		run = launcher_under(shells[i], line, no_env, "--library=libnvinterpose.so.0 -- /bin/sh -c 'echo \"preload: $LD_PRELOAD.\"'");
		ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("preload: %s/libnvinterpose.so.0.\n", line)), "%s: %d %s",
			      shells[i], run.status, run.output);
	}
}
END_TEST

/* The launcher's messages quote values from the command line and the environment: their control
   characters are shown as \xNN, so that no value can start a line of its own or send the terminal
   an escape sequence. */
START_TEST(test_messages_show_control_characters_escaped)
{
	struct test_run run = launcher(no_env, "--policy \"$(printf 'x\\033[2Jy')\" -- true");
	check_usage_error(&run, "--policy: 'x\\x1b[2Jy' is not one of fallback, coherent, off");
	run = launcher(no_env, "-- \"$(printf 'nope\\nnvinterpose-run: forged\\r')\"");
	ck_assert_int_eq(run.status, 127);
	ck_assert_str_eq(run.output, "nvinterpose-run: nope\\x0anvinterpose-run: forged\\x0d: command not found\n");
}
END_TEST

/* --report covers the processes the command starts: each that the runtime counted something in
   appends its report to the run's file, and the launcher, the command's parent, prints them at
   the end with how many processes reported, and removes the file. The exit status is the
   command's. Under both shells the launcher is tested under. */
START_TEST(test_report_covers_the_processes_the_command_starts)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *probe = test_format("'%s' call '%s' nvrtc_like_compile", test_setting("NVI_PROBE"), wheel.nvrtc);
	char *tmp = test_tmpdir();
	const char *env[] = { test_format("TMPDIR=%s", tmp), NULL };
	for (size_t i = 0; i < SHELLS; i++) {
		if (!have_shell("test_report_covers_the_processes_the_command_starts", shells[i]))
			continue;
		struct test_run run = launcher_under(shells[i], NULL, env,
						     test_format("--report -- /bin/sh -c \"%s; %s; exit 3\"", probe, probe));
		ck_assert_int_eq(run.status, 3);
		ck_assert_uint_eq(test_count(run.output, "call nvrtc_like_compile: 42"), 2);
		ck_assert_msg(test_contains(run.output, "nvinterpose: report: 2 processes reported\n") &&
				      test_count(run.output, "nvinterpose: report: process ") == 2 &&
				      test_count(run.output, ", policy fallback: 2 origins registered, 1 redirects, 0 misses, 0 mixed origins\n") == 2 &&
				      test_count(run.output, test_format("nvinterpose: report: redirect libnvrtc-builtins.so.77.1 for %s: %s\n",
									 wheel.nvrtc, wheel.builtins)) == 2,
			      "%s: %s", shells[i], run.output);
		/* One process: its lines alone. None: said so. */
		run = launcher_under(shells[i], NULL, env, test_format("--report -- %s", probe));
		ck_assert_msg(run.status == 0 && test_count(run.output, "nvinterpose: report: process ") == 1 &&
				      !test_contains(run.output, "processes reported"),
			      "%s: %s", shells[i], run.output);
		run = launcher_under(shells[i], NULL, env, "--report -- /bin/sh -c '/bin/true; exit 5'");
		ck_assert_int_eq(run.status, 5);
		ck_assert_str_eq(run.output, "nvinterpose: report: no process reported: the runtime counted nothing (no origin, load, miss or "
					     "mixed origin) in the processes the command started\n");
		char **left;
		ck_assert_msg(test_regular_files(tmp, "nvinterpose-report-*", &left) == 0, "the run's file is removed: %s", left[0]);
	}
}
END_TEST

/* --report reads and removes only a run's file it made: where another user's file holds the name
   (a shared TMPDIR), the launcher says the report covers nothing and prints none of that file's
   lines. As root, the launcher runs as the first process of a PID namespace (so the file's name is
   known: nvinterpose-report-1) in a user namespace where the file's and the folder's owners are no
   one, so that it can neither remove nor replace the file, as another user could not. */
START_TEST(test_report_reads_no_file_it_did_not_make)
{
	if (geteuid() != 0) {
		printf("skipped: test_report_reads_no_file_it_did_not_make: the file is given to another user as root\n");
		return;
	}
	char *tmp = test_tmpdir();
	char *forged = test_format("%s/nvinterpose-report-1", tmp);
	test_write_file(forged, "process 999, policy fallback: 9 origins registered, 0 redirects, 0 misses, 0 mixed origins\n");
	ck_assert(chmod(tmp, 01777) == 0 && chown(tmp, 1, (gid_t)-1) == 0 && chown(forged, 65534, (gid_t)-1) == 0);
	const char *env[] = { test_format("TMPDIR=%s", tmp), NULL };
	struct test_run run = launcher_under("unshare --user --map-root-user --pid --fork /bin/sh", NULL, env, "--report -- /bin/true");
	if (test_contains(run.output, "unshare: ")) {
		printf("skipped: test_report_reads_no_file_it_did_not_make: no user namespace here: %s", run.output);
		return;
	}
	ck_assert_msg(run.status == 0 && test_contains(run.output, "the report covers nothing") && !test_contains(run.output, "9 origins") &&
			      !test_contains(run.output, "process"),
		      "%d %s", run.status, run.output);
	ck_assert_msg(access(forged, F_OK) == 0, "the other user's file is left");
}
END_TEST

START_TEST(test_exit_status_is_the_commands)
{
	struct test_run run = launcher(no_env, "-- sh -c 'exit 7'");
	ck_assert_int_eq(run.status, 7);
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
	char *versions = test_format("%s/libversioned.so.77", dir), *runtime = test_format("%s/libnvinterpose.so.0", dir);
	test_write_file(test_format("%s/new.map", dir), "NVI_TEST_1 { local: *; }; NVI_TEST_2 { global: builtins_value; } NVI_TEST_1;\n");
	test_write_file(test_format("%s/old.map", dir), "NVI_TEST_1 { global: builtins_value; local: *; };\n");
	test_build_library("value.c", versions, "libversioned.so.77", test_format("-Wl,--version-script,%s/new.map", dir));
	test_build_library("needer.c", runtime, "libnvinterpose.so.0", test_format("-L%s -l:libversioned.so.77 -Wl,-rpath,%s", dir, dir));
	test_build_library("value.c", versions, "libversioned.so.77", test_format("-Wl,--version-script,%s/old.map", dir));
	char *marker = test_format("%s/ran", dir);
	struct test_run run = launcher(no_env, test_format("--library '%s' -- touch '%s'", runtime, marker));
	ck_assert_int_eq(run.status, 2);
	ck_assert_msg(access(marker, F_OK) != 0, "the command ran: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose-run: %s cannot be preloaded here, so the command was not run.", runtime)), "%s",
		      run.output);
	ck_assert_msg(test_contains(run.output, "the loader: ") && test_contains(run.output, "version `NVI_TEST_2' not found"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "use a libnvinterpose.so.0 built for this system with --library, or build it here"), "%s", run.output);

	/* Not a shared object: the loader would only warn and run the command without the runtime. */
	test_write_file(runtime, "not a library\n");
	const char *const modes[] = { "", "--audit", "--audit-only" };
	const char *audit_env[] = { audit_path(), NULL };
	for (size_t i = 0; i < 3; i++) {
		run = launcher(audit_env, test_format("--library '%s' %s -- touch '%s'", runtime, modes[i], marker));
		ck_assert_int_eq(run.status, 2);
		ck_assert_msg(access(marker, F_OK) != 0, "the command ran: %s", run.output);
		ck_assert_msg(test_contains(run.output, i == 2 ? "cannot be loaded as an audit library here" : "cannot be preloaded here"), "%s", run.output);
	}
}
END_TEST

/* `meson install` into a prefix that is then moved: the installed launcher finds the runtime from
   its own folder, names no build or source path, and never falls back to the build tree. */
START_TEST(test_installed_launcher_finds_the_runtime_in_a_moved_prefix)
{
	char *destdir = test_meson_install();
	if (!destdir)
		return;
	const char *prefix = test_setting("NVI_PREFIX"), *bindir = test_setting("NVI_BINDIR"), *libdir = test_setting("NVI_LIBDIR");
	char *installed = test_format("%s%s", destdir, prefix);
	char *script = test_read_file(test_format("%s/%s/nvinterpose-run", installed, bindir));
	ck_assert_msg(!test_contains(script, test_setting("NVI_BUILD_ROOT")) && !test_contains(script, test_setting("NVI_SOURCE_ROOT")),
		      "a build or source path in the installed launcher");
	/* The versioned runtime and its soname; the unversioned link is for -lnvinterpose. */
	struct test_run soname = shell(no_env, test_format("readelf -d '%s/%s/libnvinterpose.so.0' | grep SONAME && readlink '%s/%s/libnvinterpose.so'",
							   installed, libdir, installed, libdir));
	ck_assert_msg(test_contains(soname.output, "[libnvinterpose.so.0]") && test_contains(soname.output, "libnvinterpose.so.0\n"), "%s",
		      soname.output);

	char *moved = test_format("%s/moved/elsewhere", destdir);
	test_mkdirs(test_format("%s/moved", destdir));
	ck_assert_int_eq(rename(installed, moved), 0);
	char *run_moved = test_format("%s/%s/nvinterpose-run", moved, bindir);
	char *runtime = test_format("%s/%s/libnvinterpose.so.0", moved, libdir);
	struct test_run run = shell(no_env, test_format("'%s' --print-env=github", run_moved));
	ck_assert_msg(run.status == 0, "%s", run.output);
	char *real_libdir = realpath(test_format("%s/%s", moved, libdir), NULL);
	ck_assert_str_eq(run.output, test_format("LD_PRELOAD=%s/libnvinterpose.so.0\n", real_libdir));
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *call = test_format("'%s' call %s nvrtc_like_compile", test_setting("NVI_PROBE"), wheel.nvrtc);
	run = shell(no_env, test_format("'%s' %s", run_moved, call));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
	/* Through a link to it from another folder. */
	char *link = test_format("%s/nvinterpose-run", test_mkdirs(test_format("%s/bin", destdir)));
	ck_assert_int_eq(symlink(run_moved, link), 0);
	run = shell(no_env, test_format("'%s' %s", link, call));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);

	/* The installed runtime gone: an error naming where it looked, not the build's runtime. */
	ck_assert_int_eq(unlink(runtime), 0);
	run = shell(no_env, test_format("'%s' %s", run_moved, call));
	ck_assert_msg(run.status == 2 && !test_contains(run.output, "call nvrtc_like_compile"), "%s", run.output);
	ck_assert_str_eq(run.output, test_format("nvinterpose-run: libnvinterpose.so.0: not found in %s (where it is installed beside this "
						 "launcher); use --library\n",
						 real_libdir));
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("launcher");
	TCase *tc = tcase_create("launcher");
	tcase_add_test(tc, test_help_and_version);
	tcase_add_test(tc, test_options_take_their_value_both_ways_and_abbreviated);
	tcase_add_test(tc, test_policy_and_log_names_in_any_case);
	tcase_add_test(tc, test_usage_errors_have_one_shape);
	tcase_add_test(tc, test_runtime_goes_first_and_keeps_what_was_preloaded);
	tcase_add_test(tc, test_runtime_is_never_preloaded_twice);
	tcase_add_test(tc, test_ld_preload_entries_are_not_globbed);
	tcase_add_test(tc, test_runtime_path_the_loader_cannot_hold_is_refused);
	tcase_add_test(tc, test_options_become_settings);
	tcase_add_test(tc, test_print_env_sh_is_eval_safe_and_exported);
	tcase_add_test(tc, test_print_env_github_lines);
	tcase_add_test(tc, test_print_env_json_is_one_object);
	tcase_add_test(tc, test_print_env_checks_inherited_settings);
	tcase_add_test(tc, test_standard_output_is_the_launchers_alone_with_logging_inherited);
	tcase_add_test(tc, test_command_that_cannot_be_run_gets_the_launchers_message);
	tcase_add_test(tc, test_command_named_like_an_option_is_run_under_every_shell);
	tcase_add_test(tc, test_path_is_searched_as_the_shell_searches_it);
	tcase_add_test(tc, test_launcher_needs_no_program_on_path);
	tcase_add_test(tc, test_paths_with_a_colon_or_a_line_break_are_refused);
	tcase_add_test(tc, test_messages_show_control_characters_escaped);
	tcase_add_test(tc, test_exit_status_is_the_commands);
	tcase_add_test(tc, test_report_covers_the_processes_the_command_starts);
	tcase_add_test(tc, test_report_reads_no_file_it_did_not_make);
	tcase_add_test(tc, test_launched_program_gets_the_fix);
	tcase_add_test(tc, test_runtime_the_loader_refuses_stops_before_the_command);
	tcase_add_test(tc, test_installed_launcher_finds_the_runtime_in_a_moved_prefix);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
