/* The recipes for CI and test harnesses (docs/ci.md), each run here as every document that shows
   it gives it (docs/ci.md, the launcher's manual page, ...), on the NVRTC-like stand-in (its
   builtins are found only with the runtime): a GitHub Actions step appending to $GITHUB_ENV (the
   runner simulated: the file read as the runner reads it, the next step run with what it says),
   the event log kept as a build artifact,
   tox with and without passenv, pytest, `meson test --wrapper`, add_test_setup(exe_wrapper: ...)
   and a container image's ENV line. One recipe a run (the argument); exits 77, saying why, where
   the recipe's tool is missing. */
#define _GNU_SOURCE
#include "common.h"
#include "standins.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };
static const char *recipe;

static struct test_run shell(const char *const *env, const char *command, int timeout)
{
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	return test_run(argv, env, timeout);
}

static bool on_path(const char *tool)
{
	char *command = NULL;
	bool found = asprintf(&command, "command -v '%s' >/dev/null 2>&1", tool) > 0 && system(command) == 0;
	free(command);
	return found;
}

/* A folder with nvinterpose-run in it, as an installed one would be on PATH (a link to the
   build's: the launcher finds the runtime from where the link leads). */
static const char *launcher_folder(void)
{
	const char *bin = test_mkdirs(test_format("%s/bin", test_tmpdir()));
	ck_assert_int_eq(symlink(test_setting("NVI_RUN"), test_format("%s/nvinterpose-run", bin)), 0);
	return bin;
}

static const char *path_with(const char *folder) { return test_format("PATH=%s:%s", folder, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin"); }

/* The recipes' page: every recipe is there, whatever other document shows it too. */
#define RECIPES_PAGE "docs/ci.md"

/* Every form of a recipe the documents show: the lines that start with prefix (block: with the
   indented lines under them), each distinct one once; at least one of them on the recipes' page. */
static size_t recipe_lines(const char *prefix, bool block, struct test_document_line *lines, size_t capacity)
{
	size_t count = test_document_lines(prefix, block, lines, capacity);
	bool on_page = false;
	for (size_t i = 0; i < count; i++)
		on_page |= strcmp(lines[i].document, RECIPES_PAGE) == 0;
	ck_assert_msg(on_page, RECIPES_PAGE " has no line that starts with %s", prefix);
	for (size_t i = 0; i < count; i++)
		printf("%s: %s\n", lines[i].document, lines[i].text);
	return count;
}

/* The stand-in's check: "call nvrtc_like_compile: 42" with the runtime, an error without. */
static char *nvrtc_call(const struct standin_wheel *wheel)
{
	return test_format("'%s' call '%s' nvrtc_like_compile", test_setting("NVI_PROBE"), wheel->nvrtc);
}

static bool fixed(const struct test_run *run) { return test_contains(run->output, "call nvrtc_like_compile: 42"); }

/* GitHub Actions:
     - run: nvinterpose-run --print-env=github >> "$GITHUB_ENV"
     - run: ...
   The runner gives each step a fresh shell; after a step it reads $GITHUB_ENV, NAME=value lines
   and NAME<<DELIMITER blocks, into the environment of the steps after it. */
static const char *const *github_runner_reads(const char *file)
{
	char *text = test_read_file(file);
	static const char *env[32];
	size_t count = 0;
	for (char *line = text; line && *line && count < 31;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		char *equals = strchr(line, '='), *heredoc = strstr(line, "<<");
		if (heredoc && (!equals || heredoc < equals)) {
			char *name = test_format("%.*s", (int)(heredoc - line), line), *delimiter = heredoc + 2, *value = test_format("%s", "");
			for (line = end ? end + 1 : NULL; line && *line;) {
				end = strchr(line, '\n');
				if (end)
					*end = '\0';
				if (strcmp(line, delimiter) == 0)
					break;
				value = test_format("%s%s%s", value, value[0] ? "\n" : "", line);
				line = end ? end + 1 : NULL;
			}
			env[count++] = test_format("%s=%s", name, value);
		} else if (equals) {
			env[count++] = line;
		}
		line = end ? end + 1 : NULL;
	}
	env[count] = NULL;
	return env;
}

START_TEST(test_github_actions_step_sets_the_environment_of_the_next_steps)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *github_env = test_format("%s/github_env", wheel.root);
	test_write_file(github_env, "");
	/* The documents' step, with the launcher the build made. */
	struct test_document_line steps[8];
	size_t count = recipe_lines("- run: nvinterpose-run --print-env", false, steps, 8);
	const char *const step_env[] = { test_format("GITHUB_ENV=%s", github_env), path_with(launcher_folder()), NULL };
	for (size_t i = 0; i < count; i++) {
		test_write_file(github_env, "");
		char *step = steps[i].text + strlen("- run: ");
		struct test_run first = shell(step_env, test_format("%s --policy=coherent", step), 60);
		ck_assert_msg(first.status == 0, "%s: %s", steps[i].document, first.output);
		const char *const *next_env = github_runner_reads(github_env);
		struct test_run next = shell(next_env, test_format("echo \"policy: $NVINTERPOSE_POLICY\"; %s", nvrtc_call(&wheel)), 60);
		ck_assert_msg(fixed(&next) && test_contains(next.output, "policy: coherent\n"), "%s: %s\n%s", steps[i].document,
			      test_read_file(github_env), next.output);
	}
	struct test_run without = shell(no_env, nvrtc_call(&wheel), 60);
	ck_assert_msg(!fixed(&without), "%s", without.output);
}
END_TEST

/* The diagnosis recipe: the step's line with the runner's RUNNER_TEMP; the next steps (NVRTC's
   builtins found by the runtime, then absent) warn on stderr and append their events to the log
   file, which the documents' upload step names. */
START_TEST(test_github_actions_event_log_is_a_build_artifact)
{
	struct test_document_line steps[4], uploads[4];
	size_t count = recipe_lines("- run: nvinterpose-run --log=warn --log-file=", false, steps, 4);
	size_t upload_count = recipe_lines("- uses: actions/upload-artifact", true, uploads, 4);
	ck_assert_msg(count == 1 && upload_count == 1, "one diagnosis step and one upload: %zu %zu", count, upload_count);
	const char *prefix = "--log-file=\"$RUNNER_TEMP/";
	const char *file = strstr(steps[0].text, prefix);
	ck_assert_msg(file != NULL, "the log file lies in $RUNNER_TEMP: %s", steps[0].text);
	file += strlen(prefix);
	char *name = test_format("%.*s", (int)strcspn(file, "\""), file);
	ck_assert_msg(test_contains(uploads[0].text, test_format("path: ${{ runner.temp }}/%s", name)) && test_contains(uploads[0].text, "if: always()"),
		      "the upload names the log file, and runs when the tests failed: %s", uploads[0].text);
	struct standin_wheel wheel = standin_nvrtc_wheel(1), bare = standin_nvrtc_wheel(0);
	const char *runner_temp = test_mkdirs(test_format("%s/runner-temp", wheel.root));
	char *github_env = test_format("%s/github_env", wheel.root);
	test_write_file(github_env, "");
	const char *const step_env[] = { test_format("GITHUB_ENV=%s", github_env), test_format("RUNNER_TEMP=%s", runner_temp),
					 path_with(launcher_folder()), NULL };
	struct test_run first = shell(step_env, steps[0].text + strlen("- run: "), 60);
	ck_assert_msg(first.status == 0, "%s: %s", steps[0].document, first.output);
	const char *const *next_env = github_runner_reads(github_env);
	struct test_run fixed_run = shell(next_env, nvrtc_call(&wheel), 60);
	ck_assert_msg(fixed(&fixed_run), "%s\n%s", test_read_file(github_env), fixed_run.output);
	struct test_run missed = shell(next_env, nvrtc_call(&bare), 60);
	ck_assert_msg(!fixed(&missed) && test_contains(missed.output, "nvinterpose: warning: ") && test_contains(missed.output, "libnvrtc-builtins.so.77.1"),
		      "--log=warn: %s", missed.output);
	char *events = test_read_file(test_format("%s/%s", runner_temp, name));
	ck_assert_msg(events && test_contains(events, "\"event\":\"redirect\",\"name\":\"libnvrtc-builtins.so.77.1\"") &&
			      test_contains(events, "\"event\":\"miss\",\"name\":\"libnvrtc-builtins.so.77.1\""),
		      "both steps' events: %s", events ? events : "(no file)");
}
END_TEST

/* tox builds each test environment from a short list of variables: LD_PRELOAD set around tox is
   dropped, silently, unless passenv names it (the documents' lines). */
static void run_tox(const char *passenv)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	ck_assert_msg(test_contains(passenv, "LD_PRELOAD") && test_contains(passenv, "NVINTERPOSE_"), "%s", passenv);
	passenv = test_format("%s\n", passenv);
	for (int with = 0; with < 2; with++) {
		char *project = test_format("%s/project%d", wheel.root, with);
		test_mkdirs(project);
		test_write_file(test_format("%s/tox.ini", project),
				test_format("[tox]\nskipsdist = true\nenvlist = stand-in\n\n[testenv]\nskip_install = true\n%s"
					    "allowlist_externals = %s\ncommands = %s call %s nvrtc_like_compile\n",
					    with ? passenv : "", test_setting("NVI_PROBE"), test_setting("NVI_PROBE"), wheel.nvrtc));
		struct test_run run = shell(no_env, test_format("cd '%s' && '%s' -- tox --workdir '%s/.tox' 2>&1", project, test_setting("NVI_RUN"), project),
					    300);
		ck_assert_msg(run.status == 0, "tox: %d\n%s", run.status, run.output);
		if (with)
			ck_assert_msg(fixed(&run), "with passenv:\n%s", run.output);
		else
			ck_assert_msg(!fixed(&run) && test_contains(run.output, "nvrtc-like: error: failed to open libnvrtc-builtins.so.77.1"),
				      "without passenv the runtime is dropped:\n%s", run.output);
	}
}

START_TEST(test_tox_passes_the_runtime_on_only_with_passenv)
{
	struct test_document_line blocks[8];
	size_t count = recipe_lines("passenv =", true, blocks, 8);
	for (size_t i = 0; i < count; i++)
		run_tox(blocks[i].text);
}
END_TEST

static char *pytest_file(const struct standin_wheel *wheel)
{
	char *file = test_format("%s/test_nvrtc.py", wheel->root);
	test_write_file(file, test_format("import ctypes\n\n\ndef test_nvrtc_finds_its_builtins():\n"
					  "    assert ctypes.CDLL('%s').nvrtc_like_compile() == 42\n",
					  wheel->nvrtc));
	return file;
}

START_TEST(test_pytest_under_the_launcher)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *file = pytest_file(&wheel);
	char *command = test_format("cd '%s' && %%s pytest -q -p no:cacheprovider '%s'", wheel.root, file);
	struct test_run plain = shell(no_env, test_format(command, ""), 120);
	ck_assert_msg(plain.status == 1, "fails without: %d\n%s", plain.status, plain.output);
	struct test_run run = shell(no_env, test_format(command, test_format("'%s' --", test_setting("NVI_RUN"))), 120);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "1 passed"), "%d\n%s", run.status, run.output);
}
END_TEST

/* A meson project whose test is the stand-in's check (extra: more of its meson.build). */
static char *meson_project(const struct standin_wheel *wheel, const char *extra)
{
	char *source = test_format("%s/meson-project", wheel->root), *build = test_format("%s/build", wheel->root);
	test_mkdirs(source);
	test_write_file(test_format("%s/meson.build", source),
			test_format("project('recipe')\nsh = find_program('sh')\n"
				    "test('nvrtc', sh, args: ['-c', '\"$0\" call \"$1\" nvrtc_like_compile | grep \": 42$\"', '%s', '%s'])\n%s",
				    test_setting("NVI_PROBE"), wheel->nvrtc, extra));
	struct test_run setup = shell(no_env, test_format("'%s' setup '%s' '%s'", test_setting("NVI_MESON"), build, source), 120);
	ck_assert_msg(setup.status == 0, "%s", setup.output);
	return build;
}

START_TEST(test_meson_test_wrapper)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *build = meson_project(&wheel, "");
	struct test_document_line lines[8];
	size_t count = recipe_lines("meson test -C build --wrapper nvinterpose-run", false, lines, 8);
	const char *const env[] = { path_with(launcher_folder()), NULL };
	struct test_run plain = shell(env, test_format("'%s' test -C '%s'", test_setting("NVI_MESON"), build), 120);
	ck_assert_msg(plain.status != 0, "fails without: %s", plain.output);
	/* The documents' command, in the project's build folder. */
	for (size_t i = 0; i < count; i++) {
		struct test_run run = shell(env, test_format("cd '%s/..' && %s", build, lines[i].text), 120);
		ck_assert_msg(run.status == 0, "%s: %s: %d\n%s", lines[i].document, lines[i].text, run.status, run.output);
	}
}
END_TEST

START_TEST(test_meson_test_setup_with_the_launcher_as_exe_wrapper)
{
	struct test_document_line setups[8];
	size_t count = recipe_lines("add_test_setup('nvinterpose'", false, setups, 8);
	for (size_t i = 0; i < count; i++) {
		struct standin_wheel wheel = standin_nvrtc_wheel(1);
		char *build = meson_project(&wheel, test_format("%s\n", setups[i].text));
		const char *const env[] = { path_with(launcher_folder()), NULL };
		struct test_run plain = shell(env, test_format("'%s' test -C '%s'", test_setting("NVI_MESON"), build), 120);
		ck_assert_msg(plain.status != 0, "fails without: %s", plain.output);
		struct test_run run = shell(env, test_format("'%s' test -C '%s' --setup nvinterpose", test_setting("NVI_MESON"), build), 120);
		ck_assert_msg(run.status == 0, "%s: %s: %d\n%s", setups[i].document, setups[i].text, run.status, run.output);
	}
}
END_TEST

/* A container image: the project installed with meson's defaults, and the documents' ENV line. Run
   here as the image would, with the installed tree under a DESTDIR. */
START_TEST(test_container_image_env_line)
{
	struct test_document_line lines[8];
	size_t count = recipe_lines("ENV LD_PRELOAD=", false, lines, 8);
	ck_assert_msg(count == 1, "the documents show %zu ENV lines for one installed tree", count);
	char *line = lines[0].text;
	char *value = line + strlen("ENV LD_PRELOAD=");
	char *destdir = test_meson_install();
	if (!destdir)
		return;
	char *installed = test_format("%s%s", destdir, value);
	ck_assert_msg(access(installed, R_OK) == 0, "%s: %s names no file `meson install` puts there", lines[0].document, line);
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *const env[] = { test_format("LD_PRELOAD=%s", installed), NULL };
	struct test_run run = shell(env, nvrtc_call(&wheel), 60);
	ck_assert_msg(fixed(&run), "%s", run.output);
	struct test_run without = shell(no_env, nvrtc_call(&wheel), 60);
	ck_assert_msg(!fixed(&without), "%s", without.output);
	/* The line the installed launcher prints for any other image. */
	struct test_run printed = shell(no_env, test_format("'%s%s/%s/nvinterpose-run' --print-env=github", destdir, test_setting("NVI_PREFIX"),
							    test_setting("NVI_BINDIR")),
					60);
	ck_assert_str_eq(printed.output, test_format("LD_PRELOAD=%s\n", installed));
}
END_TEST

/* Why a recipe cannot run here, or NULL. */
static const char *missing(void)
{
	if (strcmp(recipe, "tox") == 0 && !on_path("tox"))
		return "tox is not installed (Debian: apt-get install tox)";
	if (strcmp(recipe, "pytest") == 0 && !on_path("pytest"))
		return "pytest is not installed (Debian: apt-get install python3-pytest)";
	if ((strncmp(recipe, "meson", 5) == 0 || strcmp(recipe, "container") == 0) && !(getenv("NVI_MESON") && getenv("NVI_MESON")[0]))
		return "meson was not found when the tests were configured";
	if (strcmp(recipe, "container") == 0) {
		/* The documents' line is for an image made with meson's defaults on Debian x86-64. */
		const char *prefix = getenv("NVI_PREFIX"), *libdir = getenv("NVI_LIBDIR");
		static char expected[4096];
		snprintf(expected, sizeof(expected), "%s/%s/libnvinterpose.so.0", prefix ? prefix : "", libdir ? libdir : "");
		if (strcmp(expected, "/usr/local/lib/x86_64-linux-gnu/libnvinterpose.so.0") != 0)
			return "this build installs the runtime elsewhere than the documents' ENV line names (meson's defaults on Debian x86-64)";
	}
	return NULL;
}

int main(int argc, char **argv)
{
	/* The recipes, each run by its own test in tests/meson.build (the names there are these). */
	const struct {
		const char *name;
		const TTest *test;
	} recipes[] = {
		{ "github", test_github_actions_step_sets_the_environment_of_the_next_steps },
		{ "github-diagnosis", test_github_actions_event_log_is_a_build_artifact },
		{ "tox", test_tox_passes_the_runtime_on_only_with_passenv },
		{ "pytest", test_pytest_under_the_launcher },
		{ "meson-wrapper", test_meson_test_wrapper },
		{ "meson-setup", test_meson_test_setup_with_the_launcher_as_exe_wrapper },
		{ "container", test_container_image_env_line },
	};
	recipe = argc > 1 ? argv[1] : "";
	size_t i = 0;
	while (i < sizeof(recipes) / sizeof(recipes[0]) && strcmp(recipes[i].name, recipe) != 0)
		i++;
	if (i == sizeof(recipes) / sizeof(recipes[0])) {
		fprintf(stderr, "test_recipes: give one recipe: github, github-diagnosis, tox, pytest, meson-wrapper, meson-setup, container\n");
		return 2;
	}
	const char *why = missing();
	if (why) {
		printf("SKIP: %s\n", why);
		return TEST_SKIP;
	}
	Suite *suite = suite_create("recipes");
	TCase *tc = tcase_create(recipe);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, recipes[i].test);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
