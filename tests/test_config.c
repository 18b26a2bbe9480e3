/* NVINTERPOSE_* settings: defaults, parsing, every bad value reported on stderr and replaced by its
   default, and a privileged process that takes nothing from its environment. */
#define _GNU_SOURCE
#include "common.h"

#include "config.h"
#include "log.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The fake environment config_read sees: NAME=VALUE strings, NULL-terminated. */
static const char *const *fake_environment;

static const char *fake_getenv(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; fake_environment && fake_environment[i]; i++)
		if (strncmp(fake_environment[i], name, n) == 0 && fake_environment[i][n] == '=')
			return fake_environment[i] + n + 1;
	return NULL;
}

/* Reads the settings from env and returns what config_read wrote on stderr. */
static char *read_config(struct config *config, const char *const *env, bool secure)
{
	char *path = test_format("%s/stderr", test_tmpdir());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	int saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
	fake_environment = env;
	config_read(config, fake_getenv, secure);
	fake_environment = NULL;
	dup2(saved, STDERR_FILENO);
	close(saved);
	char *output = test_read_file(path);
	ck_assert_ptr_nonnull(output);
	return output;
}

static void assert_defaults(const struct config *config)
{
	ck_assert(!config->disabled);
	ck_assert(!config->secure);
	ck_assert_int_eq(config->policy, POLICY_FALLBACK);
	ck_assert_int_eq(config->log_level, LOG_ERROR);
	ck_assert_str_eq(config->log_file, "");
	ck_assert_uint_eq(config->path_count, 0);
	ck_assert_int_eq(config->report_pid, 0);
}

START_TEST(test_empty_environment_gives_the_defaults)
{
	struct config config;
	const char *env[] = { NULL };
	char *output = read_config(&config, env, false);
	assert_defaults(&config);
	ck_assert_str_eq(output, "");
}
END_TEST

START_TEST(test_empty_values_give_the_defaults_silently)
{
	struct config config;
	const char *env[] = { "NVINTERPOSE_POLICY=", "NVINTERPOSE_LOG=", "NVINTERPOSE_PATH=", "NVINTERPOSE_DISABLE=",
			      "NVINTERPOSE_LOG_FILE=", "NVINTERPOSE_REPORT=", NULL };
	char *output = read_config(&config, env, false);
	assert_defaults(&config);
	ck_assert_str_eq(output, "");
}
END_TEST

static const struct {
	const char *text;
	enum policy policy;
} policies[] = {
	{ "fallback", POLICY_FALLBACK }, { "coherent", POLICY_COHERENT }, { "off", POLICY_OFF },
	{ "FALLBACK", POLICY_FALLBACK }, { "Coherent", POLICY_COHERENT }, { "oFF", POLICY_OFF },
};

START_TEST(test_each_policy_parses_in_any_case)
{
	struct config config;
	char *setting = test_format("NVINTERPOSE_POLICY=%s", policies[_i].text);
	const char *env[] = { setting, NULL };
	char *output = read_config(&config, env, false);
	ck_assert_msg(config.policy == policies[_i].policy, "%s gave policy %d", setting, config.policy);
	ck_assert_str_eq(output, "");
}
END_TEST

static const struct {
	const char *text;
	enum log_level level;
} levels[] = {
	{ "error", LOG_ERROR }, { "warn", LOG_WARN }, { "info", LOG_INFO }, { "debug", LOG_DEBUG },
	{ "ERROR", LOG_ERROR }, { "Warn", LOG_WARN }, { "INFO", LOG_INFO }, { "dEbUg", LOG_DEBUG },
};

START_TEST(test_each_log_level_parses_in_any_case_and_sets_the_threshold)
{
	struct config config;
	char *setting = test_format("NVINTERPOSE_LOG=%s", levels[_i].text);
	const char *env[] = { setting, NULL };
	read_config(&config, env, false);
	ck_assert_msg(config.log_level == levels[_i].level, "%s gave level %d", setting, config.log_level);
	ck_assert(log_enabled(levels[_i].level));
	if (levels[_i].level < LOG_DEBUG)
		ck_assert(!log_enabled(levels[_i].level + 1));
	log_set_level(LOG_ERROR);
}
END_TEST

START_TEST(test_bad_policy_gives_fallback_and_a_message_naming_it)
{
	struct config config;
	const char *env[] = { "NVINTERPOSE_POLICY=bogus", NULL };
	char *output = read_config(&config, env, false);
	ck_assert_int_eq(config.policy, POLICY_FALLBACK);
	ck_assert_msg(test_contains(output, "NVINTERPOSE_POLICY") && test_contains(output, "'bogus'"), "stderr: %s",
		      output);
	ck_assert_uint_eq(test_count(output, "\n"), 1);
}
END_TEST

START_TEST(test_bad_log_level_gives_error_and_a_message_naming_it)
{
	struct config config;
	const char *env[] = { "NVINTERPOSE_LOG=loud", NULL };
	char *output = read_config(&config, env, false);
	ck_assert_int_eq(config.log_level, LOG_ERROR);
	ck_assert_msg(test_contains(output, "NVINTERPOSE_LOG") && test_contains(output, "'loud'"), "stderr: %s", output);
}
END_TEST

START_TEST(test_disable_is_1_and_0_is_on)
{
	struct config config;
	const char *on[] = { "NVINTERPOSE_DISABLE=1", NULL };
	ck_assert_str_eq(read_config(&config, on, false), "");
	ck_assert(config.disabled);
	const char *off[] = { "NVINTERPOSE_DISABLE=0", NULL };
	ck_assert_str_eq(read_config(&config, off, false), "");
	ck_assert(!config.disabled);
}
END_TEST

/* NVINTERPOSE_DISABLE is a switch like the others: anything but 0 or 1 is reported and the
   runtime stays on (a "false" that disabled it would be read the other way round). */
static const char *const bad_switches[] = { "false", "no", "off", "00", " 0", "true", "yes", "2", "1 " };

START_TEST(test_disable_that_is_not_0_or_1_is_reported_and_leaves_the_runtime_on)
{
	struct config config;
	const char *env[] = { test_format("NVINTERPOSE_DISABLE=%s", bad_switches[_i]), NULL };
	char *output = read_config(&config, env, false);
	ck_assert_msg(!config.disabled, "NVINTERPOSE_DISABLE='%s' disabled the runtime", bad_switches[_i]);
	ck_assert_str_eq(output, test_format("nvinterpose: error: NVINTERPOSE_DISABLE='%s' is not 0 or 1; using 0\n", bad_switches[_i]));
}
END_TEST

/* The names config_read asked for, one a line. */
static char asked[4096];

static const char *recording_getenv(const char *name)
{
	size_t used = strlen(asked);
	snprintf(asked + used, sizeof(asked) - used, "%s\n", name);
	return fake_getenv(name);
}

/* Disabled, the runtime reads nothing else: bad settings are not reported, the log file is not
   taken, the log level stays error. */
START_TEST(test_disabled_runtime_reads_no_other_setting)
{
	const char *env[] = { "NVINTERPOSE_DISABLE=1", "NVINTERPOSE_POLICY=bogus", "NVINTERPOSE_LOG=debug",
			      "NVINTERPOSE_LOG_FILE=relative.jsonl", "NVINTERPOSE_PATH=relative::/missing", "NVINTERPOSE_REPORT=x",
			      "NVINTERPOSE_PATCH=maybe", "NVINTERPOSE_CHILDREN=2", NULL };
	struct config config;
	struct test_capture capture = test_capture_stderr();
	asked[0] = '\0';
	fake_environment = env;
	config_read(&config, recording_getenv, false);
	fake_environment = NULL;
	char *output = test_captured(&capture);
	ck_assert_str_eq(output, "");
	ck_assert_str_eq(asked, "NVINTERPOSE_DISABLE\n");
	ck_assert(config.disabled);
	ck_assert_int_eq(config.policy, POLICY_FALLBACK);
	ck_assert_int_eq(config.log_level, LOG_ERROR);
	ck_assert(!log_enabled(LOG_WARN));
	ck_assert_str_eq(config.log_file, "");
	ck_assert_uint_eq(config.path_count, 0);
	ck_assert_int_eq(config.report_pid, 0);
}
END_TEST

START_TEST(test_log_file_is_kept)
{
	struct config config;
	const char *env[] = { "NVINTERPOSE_LOG_FILE=/tmp/events.jsonl", NULL };
	read_config(&config, env, false);
	ck_assert_str_eq(config.log_file, "/tmp/events.jsonl");
}
END_TEST

START_TEST(test_report_names_a_process)
{
	struct config config;
	const char *env[] = { "NVINTERPOSE_REPORT=4242", NULL };
	ck_assert_str_eq(read_config(&config, env, false), "");
	ck_assert_int_eq(config.report_pid, 4242);
}
END_TEST

START_TEST(test_report_keep_keeps_it_for_no_process)
{
	struct config config;
	const char *env[] = { "NVINTERPOSE_REPORT=keep", NULL };
	ck_assert_str_eq(read_config(&config, env, false), "");
	ck_assert_int_eq(config.report_pid, 0);
	ck_assert(config.report_kept);
}
END_TEST

static const char *const bad_reports[] = { "yes", "1x", "-5", "0", " 12", "+12", "99999999999999999999999" };

START_TEST(test_report_that_is_no_process_id_is_refused)
{
	struct config config;
	const char *env[] = { test_format("NVINTERPOSE_REPORT=%s", bad_reports[_i]), NULL };
	char *output = read_config(&config, env, false);
	ck_assert_int_eq(config.report_pid, 0);
	ck_assert_str_eq(output, test_format("nvinterpose: error: NVINTERPOSE_REPORT='%s' is not a process id nor keep; no report\n", bad_reports[_i]));
}
END_TEST

/* n existing folders under a fresh temporary folder. */
static char **make_folders(size_t n)
{
	char *root = test_tmpdir();
	char **folders = calloc(n, sizeof(*folders));
	for (size_t i = 0; i < n; i++)
		folders[i] = (char *)test_mkdirs(test_format("%s/d%02zu", root, i));
	return folders;
}

static char *path_setting(char **folders, size_t n)
{
	char *setting = test_format("NVINTERPOSE_PATH=%s", folders[0]);
	for (size_t i = 1; i < n; i++)
		setting = test_format("%s:%s", setting, folders[i]);
	return setting;
}

START_TEST(test_valid_path_entries_are_kept_in_order)
{
	char **folders = make_folders(3);
	char *reversed[] = { folders[2], folders[0], folders[1] };
	const char *env[] = { path_setting(reversed, 3), NULL };
	struct config config;
	char *output = read_config(&config, env, false);
	ck_assert_uint_eq(config.path_count, 3);
	ck_assert_str_eq(config_path(&config, 0), folders[2]);
	ck_assert_str_eq(config_path(&config, 1), folders[0]);
	ck_assert_str_eq(config_path(&config, 2), folders[1]);
	ck_assert_str_eq(output, "");
}
END_TEST

/* NVINTERPOSE_PATH=good1:BAD:good2 keeps good1 and good2, in order, and names the problem. */
static void assert_bad_entry_dropped(const char *bad, const char *expected_message)
{
	char **folders = make_folders(2);
	char *setting = test_format("NVINTERPOSE_PATH=%s:%s:%s", folders[0], bad, folders[1]);
	const char *env[] = { setting, NULL };
	struct config config;
	char *output = read_config(&config, env, false);
	ck_assert_uint_eq(config.path_count, 2);
	ck_assert_str_eq(config_path(&config, 0), folders[0]);
	ck_assert_str_eq(config_path(&config, 1), folders[1]);
	ck_assert_msg(test_contains(output, "NVINTERPOSE_PATH") && test_contains(output, expected_message),
		      "expected '%s' on stderr, got: %s", expected_message, output);
	ck_assert_uint_eq(test_count(output, "\n"), 1);
}

START_TEST(test_missing_path_entry_is_dropped_with_a_message)
{
	char *missing = test_format("%s/not-there", test_tmpdir());
	assert_bad_entry_dropped(missing, missing);
}
END_TEST

START_TEST(test_path_entry_that_is_a_file_is_dropped_with_a_message)
{
	char *file = test_format("%s/file", test_tmpdir());
	test_write_file(file, "");
	assert_bad_entry_dropped(file, file);
}
END_TEST

START_TEST(test_relative_path_entry_is_dropped_with_a_message)
{
	/* "." exists, but the runtime does not follow a working directory that changes under it. */
	assert_bad_entry_dropped("lib", "relative entry 'lib'");
	assert_bad_entry_dropped(".", "relative entry '.'");
}
END_TEST

START_TEST(test_empty_path_entry_is_dropped_with_a_message)
{
	assert_bad_entry_dropped("", "empty entry");
}
END_TEST

START_TEST(test_trailing_separator_is_an_empty_entry)
{
	char **folders = make_folders(1);
	char *setting = test_format("NVINTERPOSE_PATH=%s:", folders[0]);
	const char *env[] = { setting, NULL };
	struct config config;
	char *output = read_config(&config, env, false);
	ck_assert_uint_eq(config.path_count, 1);
	ck_assert_str_eq(config_path(&config, 0), folders[0]);
	ck_assert_msg(test_contains(output, "empty entry"), "stderr: %s", output);
}
END_TEST

START_TEST(test_over_long_path_entry_is_dropped_with_a_message)
{
	char *long_entry = malloc(5001);
	long_entry[0] = '/';
	memset(long_entry + 1, 'a', 4999);
	long_entry[5000] = '\0';
	assert_bad_entry_dropped(long_entry, "entry of 5000 characters");
}
END_TEST

/* 128 KB of ':' (131,072 empty entries): eight lines name refused entries, one counts the rest,
   not a line each in every process. */
START_TEST(test_refused_path_entries_print_a_bounded_number_of_lines)
{
	char **folders = make_folders(1);
	size_t n = 128 * 1024;
	char *value = malloc(n + 1);
	memset(value, ':', n);
	value[n] = '\0';
	const char *env[] = { test_format("NVINTERPOSE_PATH=%s%s", folders[0], value), NULL };
	struct config config;
	char *output = read_config(&config, env, false);
	ck_assert_uint_eq(config.path_count, 1);
	ck_assert_str_eq(config_path(&config, 0), folders[0]);
	ck_assert_uint_eq(test_count(output, "\n"), 9);
	ck_assert_uint_eq(test_count(output, "empty entry ignored"), 8);
	ck_assert_msg(test_contains(output, test_format("NVINTERPOSE_PATH: %zu more entries ignored\n", n - 8)), "%s", output);
	free(value);
}
END_TEST

START_TEST(test_more_than_32_path_entries_keeps_the_first_32)
{
	const size_t n = CONFIG_PATH_MAX_ENTRIES + 3;
	char **folders = make_folders(n);
	const char *env[] = { path_setting(folders, n), NULL };
	struct config config;
	char *output = read_config(&config, env, false);
	ck_assert_uint_eq(config.path_count, CONFIG_PATH_MAX_ENTRIES);
	for (size_t i = 0; i < CONFIG_PATH_MAX_ENTRIES; i++)
		ck_assert_str_eq(config_path(&config, i), folders[i]);
	for (size_t i = CONFIG_PATH_MAX_ENTRIES; i < n; i++)
		ck_assert_msg(test_contains(output, folders[i]), "no message about %s in: %s", folders[i], output);
	ck_assert_uint_eq(test_count(output, "\n"), 3);
}
END_TEST

START_TEST(test_secure_process_ignores_every_setting_silently)
{
	char **folders = make_folders(1);
	char *path = test_format("NVINTERPOSE_PATH=%s:relative::/missing", folders[0]);
	const char *env[] = { "NVINTERPOSE_POLICY=bogus", "NVINTERPOSE_LOG=debug", "NVINTERPOSE_DISABLE=1",
			      "NVINTERPOSE_LOG_FILE=/tmp/events.jsonl", "NVINTERPOSE_PATCH=1", path, "NVINTERPOSE_REPORT=1", NULL };
	struct config config;
	char *output = read_config(&config, env, true);
	ck_assert_int_eq(config.report_pid, 0);
	ck_assert(config.secure);
	ck_assert_int_eq(config.policy, POLICY_OFF);
	ck_assert(!config.disabled);
	ck_assert_uint_eq(config.path_count, 0);
	ck_assert_str_eq(config.log_file, "");
	ck_assert_int_eq(config.log_level, LOG_ERROR);
	ck_assert(!log_enabled(LOG_DEBUG));
	ck_assert(!config.patch);
	ck_assert_str_eq(output, "");
}
END_TEST

START_TEST(test_patch_switch_is_on_by_default_and_0_turns_it_off)
{
	struct config config;
	const char *none[] = { NULL };
	read_config(&config, none, false);
	ck_assert(config.patch);
	const char *off[] = { "NVINTERPOSE_PATCH=0", NULL };
	char *output = read_config(&config, off, false);
	ck_assert(!config.patch);
	ck_assert_str_eq(output, "");
	const char *bad[] = { "NVINTERPOSE_PATCH=off", NULL };
	output = read_config(&config, bad, false);
	ck_assert(config.patch);
	ck_assert_msg(test_contains(output, "NVINTERPOSE_PATCH='off' is not 0 or 1; using 1"), "%s", output);
}
END_TEST

/* The Windows front's switches, parsed by the shared room on every platform. */
START_TEST(test_windows_switches_are_on_by_default_and_0_or_1)
{
	struct config config;
	const char *none[] = { NULL };
	read_config(&config, none, false);
	ck_assert(config.add_dll_directory && config.inject_children);
	const char *off[] = { "NVINTERPOSE_ADD_DLL_DIRECTORY=0", "NVINTERPOSE_CHILDREN=0", NULL };
	char *output = read_config(&config, off, false);
	ck_assert(!config.add_dll_directory && !config.inject_children);
	ck_assert_str_eq(output, "");
	const char *bad[] = { "NVINTERPOSE_ADD_DLL_DIRECTORY=no", "NVINTERPOSE_CHILDREN=", NULL };
	output = read_config(&config, bad, false);
	ck_assert(config.add_dll_directory && config.inject_children);
	ck_assert_msg(test_contains(output, "NVINTERPOSE_ADD_DLL_DIRECTORY='no' is not 0 or 1; using 1"), "%s", output);
	ck_assert_uint_eq(test_count(output, "\n"), 1);
}
END_TEST

START_TEST(test_config_set_replaces_what_config_get_returns)
{
	struct config config;
	const char *env[] = { "NVINTERPOSE_POLICY=coherent", NULL };
	read_config(&config, env, false);
	ck_assert_int_eq(config_get()->policy, POLICY_FALLBACK);
	config_set(&config);
	ck_assert_int_eq(config_get()->policy, POLICY_COHERENT);
	ck_assert_str_eq(config_policy_name(config_get()->policy), "coherent");
}
END_TEST

/* The table of settings (which the reference shows, held to it by the documents test) is the one
   config_read reads: every name it asks for is in the table, and each of the table's runtime
   settings is asked for; the others are read by the Python package's .pth. */
START_TEST(test_config_read_reads_the_settings_of_the_table)
{
	struct config config;
	asked[0] = '\0';
	config_read(&config, recording_getenv, false);
	for (char *name = asked, *end; (end = strchr(name, '\n')); name = end + 1) {
		*end = '\0';
		bool listed = false;
		for (size_t k = 0; config_setting(k, NULL); k++)
			listed |= strcmp(config_setting(k, NULL), name) == 0;
		ck_assert_msg(listed, "config_read reads %s, which the table of settings lacks", name);
		*end = '\n';
	}
	char *pth = test_read_file(test_format("%s/python/nvinterpose-auto.pth", test_setting("NVI_SOURCE_ROOT")));
	ck_assert_ptr_nonnull(pth);
	size_t count = 0;
	bool runtime;
	for (const char *name; (name = config_setting(count, &runtime)); count++) {
		bool read = test_contains(test_format("\n%s", asked), test_format("\n%s\n", name));
		if (runtime)
			ck_assert_msg(read, "the table lists %s as the runtime's, but config_read does not read it", name);
		else
			ck_assert_msg(!read && test_contains(pth, test_format("\"%s\"", name)),
				      "the table lists %s as the Python package's: the runtime reads it, or the .pth does not", name);
	}
	ck_assert_uint_ge(count, 8);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("config");
	TCase *tc = tcase_create("config");
	tcase_add_test(tc, test_empty_environment_gives_the_defaults);
	tcase_add_test(tc, test_empty_values_give_the_defaults_silently);
	tcase_add_loop_test(tc, test_each_policy_parses_in_any_case, 0, sizeof(policies) / sizeof(policies[0]));
	tcase_add_loop_test(tc, test_each_log_level_parses_in_any_case_and_sets_the_threshold, 0,
			    sizeof(levels) / sizeof(levels[0]));
	tcase_add_test(tc, test_bad_policy_gives_fallback_and_a_message_naming_it);
	tcase_add_test(tc, test_bad_log_level_gives_error_and_a_message_naming_it);
	tcase_add_test(tc, test_disable_is_1_and_0_is_on);
	tcase_add_loop_test(tc, test_disable_that_is_not_0_or_1_is_reported_and_leaves_the_runtime_on, 0,
			    sizeof(bad_switches) / sizeof(bad_switches[0]));
	tcase_add_test(tc, test_disabled_runtime_reads_no_other_setting);
	tcase_add_test(tc, test_log_file_is_kept);
	tcase_add_test(tc, test_report_names_a_process);
	tcase_add_test(tc, test_report_keep_keeps_it_for_no_process);
	tcase_add_loop_test(tc, test_report_that_is_no_process_id_is_refused, 0, sizeof(bad_reports) / sizeof(bad_reports[0]));
	tcase_add_test(tc, test_valid_path_entries_are_kept_in_order);
	tcase_add_test(tc, test_missing_path_entry_is_dropped_with_a_message);
	tcase_add_test(tc, test_path_entry_that_is_a_file_is_dropped_with_a_message);
	tcase_add_test(tc, test_relative_path_entry_is_dropped_with_a_message);
	tcase_add_test(tc, test_empty_path_entry_is_dropped_with_a_message);
	tcase_add_test(tc, test_trailing_separator_is_an_empty_entry);
	tcase_add_test(tc, test_over_long_path_entry_is_dropped_with_a_message);
	tcase_add_test(tc, test_more_than_32_path_entries_keeps_the_first_32);
	tcase_add_test(tc, test_refused_path_entries_print_a_bounded_number_of_lines);
	tcase_add_test(tc, test_secure_process_ignores_every_setting_silently);
	tcase_add_test(tc, test_patch_switch_is_on_by_default_and_0_turns_it_off);
	tcase_add_test(tc, test_windows_switches_are_on_by_default_and_0_or_1);
	tcase_add_test(tc, test_config_set_replaces_what_config_get_returns);
	tcase_add_test(tc, test_config_read_reads_the_settings_of_the_table);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
