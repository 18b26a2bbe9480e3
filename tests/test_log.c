/* The human log on stderr and the JSON-lines event log: escaping that never breaks a string, one
   whole line per event from any thread, and messages that obey the level. */
#define _GNU_SOURCE
#include "common.h"

#include "config.h"
#include "log.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Redirects stderr to a file until stop_capture(), which returns what was written. */
struct capture {
	char *path;
	int saved;
};

static struct capture start_capture(void)
{
	struct capture capture = { .path = test_format("%s/stderr", test_tmpdir()) };
	int fd = open(capture.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	capture.saved = dup(STDERR_FILENO);
	ck_assert_int_ge(capture.saved, 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return capture;
}

static char *stop_capture(struct capture *capture)
{
	dup2(capture->saved, STDERR_FILENO);
	close(capture->saved);
	char *output = test_read_file(capture->path);
	ck_assert_ptr_nonnull(output);
	return output;
}

static const struct {
	const char *input;
	const char *escaped;
} escapes[] = {
	{ "plain /usr/lib/libnvrtc.so.13", "plain /usr/lib/libnvrtc.so.13" },
	{ "say \"hi\"", "say \\\"hi\\\"" },
	{ "C:\\cuda\\bin", "C:\\\\cuda\\\\bin" },
	{ "tab\tnew\nline\r", "tab\\u0009new\\u000aline\\u000d" },
	{ "\x01\x1f\x7f", "\\u0001\\u001f\\u007f" },
	{ "caf\xc3\xa9", "caf\xc3\xa9" }, /* UTF-8 passes through */
	{ "", "" },
};

START_TEST(test_json_escape_quotes_backslashes_and_control_characters)
{
	char out[256];
	size_t n = log_json_escape(out, sizeof(out), escapes[_i].input);
	ck_assert_str_eq(out, escapes[_i].escaped);
	ck_assert_uint_eq(n, strlen(escapes[_i].escaped));
}
END_TEST

START_TEST(test_json_escape_of_null_is_empty)
{
	char out[4] = "xyz";
	ck_assert_uint_eq(log_json_escape(out, sizeof(out), NULL), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

/* Every buffer size for an input mixing plain characters and escapes: the output is always a
   NUL-terminated prefix of the full escape that ends between two escapes, never inside one. */
START_TEST(test_json_escape_truncates_between_escapes_and_always_terminates)
{
	const char *input = "a\"b\\c\x01" "d\n\"\"ef";
	char full[64];
	size_t full_length = log_json_escape(full, sizeof(full), input);
	/* The places where an escape of one input character ends. */
	bool boundary[64] = { [0] = true };
	size_t at = 0;
	for (const char *s = input; *s; s++) {
		char one[2] = { *s, '\0' }, piece[8];
		at += log_json_escape(piece, sizeof(piece), one);
		boundary[at] = true;
	}
	ck_assert_uint_eq(at, full_length);
	for (size_t size = 1; size <= full_length + 1; size++) {
		char out[64];
		memset(out, '#', sizeof(out));
		size_t n = log_json_escape(out, size, input);
		ck_assert_msg(n < size, "size %zu: wrote %zu characters", size, n);
		ck_assert_msg(out[n] == '\0', "size %zu: no NUL at %zu", size, n);
		ck_assert_msg(out[size] == '#', "size %zu: wrote past the buffer", size);
		ck_assert_msg(strncmp(out, full, n) == 0, "size %zu: '%s' is not a prefix of '%s'", size, out, full);
		ck_assert_msg(boundary[n], "size %zu: '%s' ends inside an escape", size, out);
		/* Truncation keeps as much as fits: the next escape would not have. */
		size_t next = n + 1;
		while (next <= full_length && !boundary[next])
			next++;
		ck_assert_msg(n == full_length || next >= size, "size %zu: stopped at %zu though %zu fits", size, n, next);
	}
	char untouched = '#';
	ck_assert_uint_eq(log_json_escape(&untouched, 0, input), 0);
	ck_assert_int_eq(untouched, '#');
}
END_TEST

static char *event_log_path(void) { return test_format("%s/events.jsonl", test_tmpdir()); }

START_TEST(test_event_is_one_json_line_with_every_field)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	struct log_event event = { .event = "redirect", .name = "libnvrtc-builtins.so.13.0",
				   .path = "/opt/a \"b\"/libnvrtc-builtins.so.13.0", .caller = "/opt/a/libnvrtc.so.13",
				   .family = "nvrtc-builtins", .policy = "fallback", .reason = "caller's\nfolder" };
	log_event(&event);
	char *text = test_read_file(path);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(test_count(text, "\n"), 1);
	char *pid = test_format(",\"pid\":%ld,", (long)getpid());
	ck_assert_msg(strncmp(text, "{\"time\":", 8) == 0, "%s", text);
	ck_assert_msg(test_contains(text, pid), "%s", text);
	ck_assert_msg(test_contains(text, "\"event\":\"redirect\""), "%s", text);
	ck_assert_msg(test_contains(text, "\"name\":\"libnvrtc-builtins.so.13.0\""), "%s", text);
	ck_assert_msg(test_contains(text, "\"path\":\"/opt/a \\\"b\\\"/libnvrtc-builtins.so.13.0\""), "%s", text);
	ck_assert_msg(test_contains(text, "\"caller\":\"/opt/a/libnvrtc.so.13\""), "%s", text);
	ck_assert_msg(test_contains(text, "\"family\":\"nvrtc-builtins\""), "%s", text);
	ck_assert_msg(test_contains(text, "\"policy\":\"fallback\""), "%s", text);
	ck_assert_msg(test_contains(text, "\"reason\":\"caller's\\u000afolder\"}\n"), "%s", text);
	/* The fields in their documented order. */
	const char *keys[] = { "\"time\":", "\"pid\":", "\"event\":", "\"name\":", "\"path\":", "\"caller\":",
			       "\"family\":", "\"policy\":", "\"reason\":" };
	const char *last = text;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *at = strstr(text, keys[i]);
		ck_assert_msg(at && at >= last, "%s missing or out of order in %s", keys[i], text);
		last = at;
	}
}
END_TEST

START_TEST(test_missing_event_fields_are_null)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	struct log_event event = { .event = "register", .path = "/opt/cuda/lib64" };
	log_event(&event);
	char *text = test_read_file(path);
	ck_assert_msg(test_contains(text, "\"name\":null,\"path\":\"/opt/cuda/lib64\",\"caller\":null,\"family\":null,"),
		      "%s", text);
	ck_assert_msg(test_contains(text, "\"reason\":null}\n"), "%s", text);
}
END_TEST

START_TEST(test_event_log_is_appended_to_not_truncated)
{
	char *path = event_log_path();
	test_write_file(path, "earlier line\n");
	ck_assert(log_open_event_file(path));
	char *real = realpath(path, NULL); /* /proc/self/fd names the file by its real path */
	ck_assert_ptr_nonnull(real);
	int flags = -1;
	/* The descriptor is the one open with O_APPEND: another process's lines are never overwritten. */
	for (int fd = 3; fd < 1024 && flags < 0; fd++) {
		char link[64], target[4096];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, real) == 0)
			flags = fcntl(fd, F_GETFL);
	}
	ck_assert_msg(flags >= 0, "no descriptor open on %s", path);
	ck_assert(flags & O_APPEND);
	struct log_event event = { .event = "register" };
	log_event(&event);
	/* Another writer between two events: both lines stay whole. */
	FILE *other = fopen(path, "a");
	fputs("other writer\n", other);
	fclose(other);
	log_event(&event);
	char *text = test_read_file(path);
	ck_assert_msg(strncmp(text, "earlier line\n{\"time\":", 21) == 0, "%s", text);
	ck_assert_uint_eq(test_count(text, "\n"), 4);
	ck_assert_uint_eq(test_count(text, "\nother writer\n{\"time\":"), 1);
}
END_TEST

START_TEST(test_event_without_event_log_prints_nothing_at_error_level)
{
	struct capture capture = start_capture();
	struct log_event event = { .event = "register", .path = "/opt" };
	log_event(&event);
	char *output = stop_capture(&capture);
	ck_assert_str_eq(output, "");
}
END_TEST

#define THREADS 4
#define EVENTS_PER_THREAD 500

/* Long fields make each line several kilobytes: a torn write would show. */
static char long_path[4000];

static void *log_events(void *arg)
{
	char name[64];
	for (int i = 0; i < EVENTS_PER_THREAD; i++) {
		snprintf(name, sizeof(name), "thread-%ld-event-%d", (long)(size_t)arg, i);
		struct log_event event = { .event = "redirect", .name = name, .path = long_path, .reason = "stress" };
		log_event(&event);
	}
	return NULL;
}

START_TEST(test_events_from_four_threads_give_whole_lines)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	memset(long_path, 'p', sizeof(long_path) - 1);
	pthread_t threads[THREADS];
	for (size_t t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&threads[t], NULL, log_events, (void *)t), 0);
	for (size_t t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);
	char *text = test_read_file(path);
	ck_assert_uint_eq(test_count(text, "\n"), THREADS * EVENTS_PER_THREAD);
	size_t lines = 0;
	for (char *line = text, *end; (end = strchr(line, '\n')); line = end + 1) {
		*end = '\0';
		ck_assert_msg(strncmp(line, "{\"time\":", 8) == 0 && end[-1] == '}', "torn line %zu: %.80s", lines, line);
		ck_assert_uint_eq(test_count(line, "{\"time\":"), 1);
		ck_assert_uint_eq(test_count(line, "\"reason\":\"stress\"}"), 1);
		lines++;
	}
	ck_assert_uint_eq(lines, THREADS * EVENTS_PER_THREAD);
	for (size_t t = 0; t < THREADS; t++) {
		char *last = test_format("\"thread-%zu-event-%d\"", t, EVENTS_PER_THREAD - 1);
		text = test_read_file(path);
		ck_assert_uint_eq(test_count(text, last), 1);
	}
}
END_TEST

START_TEST(test_unopenable_event_log_is_refused_with_a_message_naming_it)
{
	struct capture capture = start_capture();
	bool opened = log_open_event_file("/nonexistent-dir/x.log");
	char *output = stop_capture(&capture);
	ck_assert(!opened);
	ck_assert_msg(test_contains(output, "/nonexistent-dir/x.log"), "stderr: %s", output);
	ck_assert_uint_eq(test_count(output, "\n"), 1);
}
END_TEST

START_TEST(test_messages_obey_the_level)
{
	log_set_level(LOG_ERROR);
	struct capture capture = start_capture();
	log_message(LOG_DEBUG, "hidden debug %d", 1);
	log_message(LOG_INFO, "hidden info");
	log_message(LOG_WARN, "hidden warning");
	log_message(LOG_ERROR, "shown error %d", 2);
	char *output = stop_capture(&capture);
	ck_assert_str_eq(output, "nvinterpose: error: shown error 2\n");
	ck_assert(!log_enabled(LOG_DEBUG));

	log_set_level(LOG_DEBUG);
	capture = start_capture();
	log_message(LOG_DEBUG, "shown debug");
	log_message(LOG_WARN, "shown warning");
	output = stop_capture(&capture);
	log_set_level(LOG_ERROR);
	ck_assert_str_eq(output, "nvinterpose: debug: shown debug\nnvinterpose: warning: shown warning\n");
}
END_TEST

START_TEST(test_long_message_is_cut_to_one_line)
{
	char text[3000];
	memset(text, 'm', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	struct capture capture = start_capture();
	log_message(LOG_ERROR, "%s", text);
	char *output = stop_capture(&capture);
	ck_assert_uint_eq(test_count(output, "\n"), 1);
	ck_assert_int_eq(output[strlen(output) - 1], '\n');
	ck_assert(strncmp(output, "nvinterpose: error: mmm", 23) == 0);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("log");
	TCase *tc = tcase_create("log");
	tcase_add_loop_test(tc, test_json_escape_quotes_backslashes_and_control_characters, 0,
			    sizeof(escapes) / sizeof(escapes[0]));
	tcase_add_test(tc, test_json_escape_of_null_is_empty);
	tcase_add_test(tc, test_json_escape_truncates_between_escapes_and_always_terminates);
	tcase_add_test(tc, test_event_is_one_json_line_with_every_field);
	tcase_add_test(tc, test_missing_event_fields_are_null);
	tcase_add_test(tc, test_event_log_is_appended_to_not_truncated);
	tcase_add_test(tc, test_event_without_event_log_prints_nothing_at_error_level);
	tcase_add_test(tc, test_events_from_four_threads_give_whole_lines);
	tcase_add_test(tc, test_unopenable_event_log_is_refused_with_a_message_naming_it);
	tcase_add_test(tc, test_messages_obey_the_level);
	tcase_add_test(tc, test_long_message_is_cut_to_one_line);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
