/* The human log on stderr and the JSON-lines event log: escaping that never breaks a string nor a
   character and always gives UTF-8, one whole line per event from any thread, lines cut on a
   character boundary and marked, the fields of each kind as the log room's table lists them, and a log that
   writes only into its own file: no descriptor held, no symbolic link followed, no file of another
   user's, rotation followed, no line glued to a partial one. */
#define _GNU_SOURCE
#include "common.h"

#include "config.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Closes every descriptor from 3 up, as a daemon or closefrom() does: close_range where the kernel
   has it (glibc before 2.32 names no number for it; 436 on every architecture since Linux 5.9),
   else one by one. */
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
static void close_inherited_descriptors(void)
{
	if (syscall(SYS_close_range, 3, ~0u, 0) == 0)
		return;
	long limit = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < (limit > 0 && limit < 65536 ? limit : 65536); fd++)
		close((int)fd);
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
	{ "\xf0\x9f\x98\x80 \xe2\x82\xac", "\xf0\x9f\x98\x80 \xe2\x82\xac" },
	{ "", "" },
	/* Bytes that start no character: each becomes U+FFFD. */
	{ "\xff", "\xef\xbf\xbd" },
	{ "caf\xc3", "caf\xef\xbf\xbd" },		  /* a sequence cut short */
	{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" }, /* an overlong '/' */
	{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* a surrogate */
	{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* past U+10FFFF */
	{ "a\x80" "b", "a\xef\xbf\xbd" "b" },
};

START_TEST(test_json_escape_quotes_backslashes_and_control_characters)
{
	char out[256];
	size_t n = log_json_escape(out, sizeof(out), escapes[_i].input);
	ck_assert_str_eq(out, escapes[_i].escaped);
	ck_assert_uint_eq(n, strlen(escapes[_i].escaped));
	ck_assert(test_utf8(out, n));
}
END_TEST

START_TEST(test_json_escape_of_null_is_empty)
{
	char out[4] = "xyz";
	ck_assert_uint_eq(log_json_escape(out, sizeof(out), NULL), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

/* Every buffer size for an input mixing plain characters, escapes, multibyte characters and bytes
   that are not UTF-8: the output is always a NUL-terminated prefix of the full escape that ends
   between two characters, never inside an escape or a UTF-8 sequence, and is UTF-8. */
static const char *const cut_inputs[] = { "a\"b\\c\x01" "d\n\"\"ef", "\xc3\xa9t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80x\xff\xfey" };

START_TEST(test_json_escape_truncates_between_escapes_and_always_terminates)
{
	const char *input = cut_inputs[_i];
	char full[64];
	size_t full_length = log_json_escape(full, sizeof(full), input);
	/* The places where an escape of one input character ends. */
	bool boundary[64] = { [0] = true };
	size_t at = 0;
	for (const char *s = input; *s;) {
		/* one character: a whole UTF-8 sequence, or one byte that starts none */
		size_t k = 1;
		while (s[k] && ((unsigned char)s[k] & 0xc0) == 0x80 && ((unsigned char)s[0] & 0xc0) == 0xc0 && k < 4)
			k++;
		char one[5] = { 0 }, piece[16];
		memcpy(one, s, k);
		size_t n = log_json_escape(piece, sizeof(piece), one);
		if (!test_utf8(one, k)) /* ... or a byte each */
			for (size_t b = 1; b <= k; b++)
				boundary[at + 3 * b] = true, n = 3 * k;
		at += n;
		boundary[at] = true;
		s += k;
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
		ck_assert_msg(test_utf8(out, n), "size %zu: not UTF-8", size);
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

/* The one line of the log at path, checked against the log room's table of events. */
static char *only_line(const char *path)
{
	char **lines;
	size_t count = test_event_lines(path, &lines);
	ck_assert_msg(count == 1, "%zu lines in %s", count, test_read_file(path));
	return lines[0];
}

/* An event with only its reason: a register of a library whose request was not seen. */
static void log_reason(const char *reason)
{
	log_event(&(struct log_event){ .event = "register", .reason = test_format("%s; the request was not seen", reason) });
}

/* The reason of an event logged by log_reason. */
static char *reason_of(const char *line)
{
	char *reason = test_event_value(line, "reason");
	*strchr(reason, ';') = '\0';
	return reason;
}

static struct log_event full_event(const char *event)
{
	static const struct log_looked looked[] = { { "/opt/a", "rpath" }, { NULL, "cache" }, { "/opt/b", "registered_origin" } };
	static const struct log_summary summary = { 4242, 3, 2, 1, 0 };
	return (struct log_event){ .event = event, .name = "libnvrtc-builtins.so.13.0", .path = "/opt/a/libnvrtc-builtins.so.13.0",
				   .folder = "/opt/a", .caller = "/opt/a/libnvrtc.so.13", .family = "nvrtc-builtins",
				   .policy = "fallback", .reason = "caller's folder", .own = "/opt/b/libnvrtc-builtins.so.13.0",
				   .looked = looked, .looked_count = 3, .summary = &summary };
}

START_TEST(test_event_is_one_json_line_with_every_field)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	struct log_event event = { .event = "redirect", .name = "libnvrtc-builtins.so.13.0",
				   .path = "/opt/a \"b\"/libnvrtc-builtins.so.13.0", .caller = "/opt/a/libnvrtc.so.13",
				   .family = "nvrtc-builtins", .policy = "fallback", .reason = "caller's\nfolder" };
	log_event(&event);
	char *text = test_read_file(path);
	char *line = only_line(path);
	char *pid = test_format(",\"pid\":%ld,", (long)getpid());
	ck_assert_msg(strncmp(text, "{\"time\":", 8) == 0, "%s", text);
	ck_assert_msg(test_contains(text, pid), "%s", text);
	ck_assert_msg(test_contains(text, "\"path\":\"/opt/a \\\"b\\\"/libnvrtc-builtins.so.13.0\""), "%s", text);
	ck_assert_msg(test_contains(text, "\"reason\":\"caller's\\u000afolder\"}\n"), "%s", text);
	ck_assert_str_eq(test_event_value(line, "event"), "redirect");
	ck_assert_str_eq(test_event_value(line, "name"), event.name);
	ck_assert_str_eq(test_event_value(line, "path"), event.path);
	ck_assert_str_eq(test_event_value(line, "caller"), event.caller);
	ck_assert_str_eq(test_event_value(line, "family"), event.family);
	ck_assert_str_eq(test_event_value(line, "policy"), event.policy);
	ck_assert_str_eq(test_event_value(line, "reason"), event.reason);
	ck_assert_msg(!test_contains(text, "\"folder\""), "a redirect names a file, not a folder: %s", text);
}
END_TEST

START_TEST(test_missing_event_fields_are_null)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	struct log_event event = { .event = "register", .folder = "/opt/cuda/lib64", .reason = "seen loaded" };
	log_event(&event);
	char *text = test_read_file(path);
	ck_assert_msg(test_contains(text, "\"name\":null,\"path\":null,\"folder\":\"/opt/cuda/lib64\",\"caller\":null,\"family\":null,"),
		      "%s", text);
	ck_assert_msg(test_contains(text, "\"reason\":\"seen loaded\"}\n"), "%s", text);
}
END_TEST

/* One event of every kind of the log room's table, with every value given: each line has exactly
   the fields log_event_field gives its kind, in its order (the writer and the table's reader walk
   the table apart). The documents test holds docs/event-log.md and nvinterpose(7) to the table. */
START_TEST(test_every_event_kind_has_the_fields_of_the_table)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	const char **kinds;
	size_t count = test_event_kinds(&kinds);
	for (size_t i = 0; i < count; i++) {
		struct log_event event = full_event(kinds[i]);
		log_event(&event);
	}
	char **lines;
	ck_assert_uint_eq(test_event_lines(path, &lines), count); /* a kind the log does not write is missing */
	for (size_t i = 0; i < count; i++)
		ck_assert_str_eq(test_event_value(lines[i], "event"), kinds[i]);
	char *miss = lines[0];
	for (size_t i = 0; i < count; i++)
		if (strcmp(kinds[i], "miss") == 0)
			miss = lines[i];
	ck_assert_str_eq(test_event_value(miss, "looked"),
			 "[{\"folder\":\"/opt/a\",\"step\":\"rpath\"},{\"folder\":null,\"step\":\"cache\"},{\"folder\":\"/opt/b\",\"step\":\"registered_origin\"}]");
}
END_TEST

START_TEST(test_event_of_an_unknown_kind_is_not_written)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	log_event(&(struct log_event){ .event = "third", .reason = "x" });
	ck_assert_str_eq(test_read_file(path), "");
}
END_TEST

START_TEST(test_summary_has_its_figures_as_numbers)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	struct log_event event = full_event("summary");
	log_event(&event);
	char *line = only_line(path);
	ck_assert_str_eq(test_event_value(line, "report_pid"), "4242");
	ck_assert_str_eq(test_event_value(line, "origins"), "3");
	ck_assert_str_eq(test_event_value(line, "redirects"), "2");
	ck_assert_str_eq(test_event_value(line, "misses"), "1");
	ck_assert_str_eq(test_event_value(line, "mixed_origins"), "0");
}
END_TEST

/* ---- text that is not UTF-8, and cuts ------------------------------------------------------------ */

START_TEST(test_name_that_is_not_utf8_is_replaced_and_kept_in_hex)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	struct log_event event = full_event("register");
	event.folder = "/opt/caf\xe9/lib"; /* Latin-1 */
	event.name = "lib\xff\xfe.so.1";
	log_event(&event);
	char *line = only_line(path); /* UTF-8 and JSON */
	ck_assert_str_eq(test_event_value(line, "folder"), "/opt/caf\xef\xbf\xbd/lib");
	ck_assert_str_eq(test_event_value(line, "folder_hex"), "2f6f70742f636166e92f6c6962");
	ck_assert_str_eq(test_event_value(line, "name"), "lib\xef\xbf\xbd\xef\xbf\xbd.so.1");
	ck_assert_str_eq(test_event_value(line, "name_hex"), "6c6962fffe2e736f2e31");
	ck_assert_msg(!test_contains(line, "path_hex"), "a UTF-8 field has no twin: %s", line);
}
END_TEST

static char *repeated(const char *piece, size_t times)
{
	size_t length = strlen(piece);
	char *text = malloc(length * times + 1);
	for (size_t i = 0; i < times; i++)
		memcpy(text + i * length, piece, length);
	text[length * times] = '\0';
	return text;
}

/* Values far longer than a line: the line is at most LOG_LINE_MAX, every field is there, the long
   values are cut to one length on a character boundary (each a prefix of the whole), the short
   ones whole, and "truncated" names exactly the fields cut. */
START_TEST(test_long_line_is_cut_on_a_character_boundary_and_marked)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	struct log_event event = full_event("mixed-origin");
	char *long_path = repeated("/caf\xc3\xa9\xe2\x82\xac", 1500);	/* 12,000 bytes of 3 characters' kinds */
	char *long_own = repeated("\xf0\x9f\x98\x80/x", 2000);		/* 12,000 bytes */
	char *long_caller = repeated("\"q\"", 3000);			/* each '"' escaped */
	event.path = long_path;
	event.own = long_own;
	event.caller = long_caller;
	log_event(&event);
	char *text = test_read_file(path);
	ck_assert_msg(strlen(text) <= LOG_LINE_MAX, "a line of %zu bytes", strlen(text));
	ck_assert_msg(strlen(text) > LOG_LINE_MAX - 64, "the line keeps as much as fits: %zu bytes", strlen(text));
	char *line = only_line(path);
	char *path_value = test_event_value(line, "path"), *own = test_event_value(line, "own"), *caller = test_event_value(line, "caller");
	ck_assert(strncmp(long_path, path_value, strlen(path_value)) == 0);
	ck_assert(strncmp(long_own, own, strlen(own)) == 0);
	ck_assert(strncmp(long_caller, caller, strlen(caller)) == 0);
	ck_assert_msg(strlen(path_value) > 1000 && strlen(own) > 1000 && strlen(caller) > 500, "%s", line);
	ck_assert_str_eq(test_event_value(line, "name"), event.name);
	ck_assert_str_eq(test_event_value(line, "reason"), event.reason);
	ck_assert_str_eq(test_event_value(line, "truncated"), "[\"path\",\"own\",\"caller\"]");
}
END_TEST

START_TEST(test_long_looked_list_drops_places_from_its_end_and_counts_them)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	struct log_looked looked[200];
	for (size_t i = 0; i < 200; i++)
		looked[i] = (struct log_looked){ test_format("/opt/folder-number-%03zu/with/a/longer/name/lib", i), "listed" };
	struct log_event event = full_event("miss");
	event.looked = looked;
	event.looked_count = 200;
	log_event(&event);
	char *line = only_line(path);
	long omitted = atol(test_event_value(line, "looked_omitted"));
	ck_assert_msg(omitted > 0 && omitted < 200, "%s", line);
	ck_assert_msg(test_contains(line, "/opt/folder-number-000/"), "the first places stay: %s", line);
	ck_assert_msg(!test_contains(line, "/opt/folder-number-199/"), "%s", line);
	ck_assert_msg(test_contains(test_event_value(line, "truncated"), "\"looked\""), "%s", line);
}
END_TEST

/* ---- the file ------------------------------------------------------------------------------------ */

/* The descriptors of this process open on path. */
static int descriptors_on(const char *path)
{
	char *real = realpath(path, NULL);
	int count = 0;
	for (int fd = 0; real && fd < 1024; fd++) {
		char link[64], target[4096];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		count += strcmp(target, real) == 0;
	}
	free(real);
	return count;
}

START_TEST(test_event_log_is_appended_to_and_holds_no_descriptor)
{
	char *path = event_log_path();
	test_write_file(path, "earlier line\n");
	ck_assert(log_open_event_file(path));
	ck_assert_int_eq(descriptors_on(path), 0);
	struct log_event event = full_event("register");
	log_event(&event);
	ck_assert_int_eq(descriptors_on(path), 0);
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

START_TEST(test_event_log_is_created_private)
{
	char *path = event_log_path();
	mode_t old = umask(0);
	bool opened = log_open_event_file(path);
	umask(old);
	ck_assert(opened);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
}
END_TEST

/* The program may use every descriptor its limit allows: the log takes none of them. An append
   needs one free descriptor, two for a moment in a privileged process where openat2 is missing (its
   walk holds a folder's while it opens the next): two are left free for the first event. */
START_TEST(test_event_log_takes_no_descriptor_from_the_program)
{
	char *path = event_log_path(), *data = test_format("%s.data", path);
	ck_assert(log_open_event_file(path));
	int lowest = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(lowest, 0);
	close(lowest);
	struct rlimit limit = { (rlim_t)lowest + 2, (rlim_t)lowest + 2 }, saved;
	getrlimit(RLIMIT_NOFILE, &saved);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &limit), 0);
	log_reason("first");
	int fds[2];
	for (int i = 0; i < 2; i++) {
		fds[i] = open(data, O_WRONLY | O_CREAT, 0600); /* the last descriptors the limit allows */
		int error = errno;
		ck_assert_msg(fds[i] >= 0, "the program's open failed: %s", strerror(error));
	}
	log_reason("second"); /* none left: no event, no harm */
	close(fds[0]);
	close(fds[1]);
	ck_assert_str_eq(reason_of(only_line(path)), "first");
}
END_TEST

/* What the program writes into a descriptor it opened after closing the ones it inherited (a
   daemon, closefrom) stays its own, and events go to the log. */
START_TEST(test_program_that_closes_inherited_descriptors_gets_no_event_lines)
{
	char *path = event_log_path(), *data = test_format("%s.data", path);
	ck_assert(log_open_event_file(path));
	pid_t child = fork();
	if (child == 0) {
		close_inherited_descriptors();
		int fd = open(data, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd < 0 || write(fd, "DATA\n", 5) != 5)
			_exit(2);
		/* no Check call here: Check's own descriptor is gone, and its number may be the file's */
		log_event(&(struct log_event){ .event = "register", .reason = "after closefrom; the request was not seen" });
		int again = dup2(fd, fd + 1); /* and a dup2 onto the next number */
		log_event(&(struct log_event){ .event = "register", .reason = "after dup2; the request was not seen" });
		_exit(again < 0 ? 3 : 0);
	}
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_str_eq(test_read_file(data), "DATA\n");
	char **lines;
	ck_assert_uint_eq(test_event_lines(path, &lines), 2);
}
END_TEST

#define RACE_EVENTS 1000
#define RACE_REOPENS 1000

static _Atomic bool race_over;
static _Atomic long reopens;

/* A thread that closes every descriptor but the standard ones, over and over, and opens, writes and
   closes its own file meanwhile: it takes the lowest free number, the one a descriptor of the log's
   would have had if it had been in this process's table. */
static void *close_and_reopen(void *arg)
{
	const char *data = arg;
	while (!race_over) {
		close_inherited_descriptors();
		int fd = open(data, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			if (write(fd, "DATA\n", 5) != 5)
				abort();
			close(fd);
			reopens++;
		}
	}
	return NULL;
}

static int race(const char *path, const char *data)
{
	pthread_t thread;
	if (pthread_create(&thread, NULL, close_and_reopen, (void *)data) != 0)
		return 2;
	/* Both sides at work for long enough, however busy the machine; no Check call in here. */
	int events = 0;
	for (time_t start = time(NULL); (events < RACE_EVENTS || reopens < RACE_REOPENS) && time(NULL) - start < 120; events++)
		log_event(&(struct log_event){ .event = "register", .reason = "race; the request was not seen" });
	race_over = true;
	pthread_join(thread, NULL);
	(void)path;
	return reopens >= RACE_REOPENS && events >= RACE_EVENTS ? 0 : 3;
}

/* The same while another thread closes and reopens descriptors during the events: no event line
   ever lands in the program's file, and every event reaches the log (a descriptor of the log's
   in the process's table, even for the few system calls of one event, loses this race). */
START_TEST(test_events_never_land_in_a_file_another_thread_reopens)
{
	char *path = event_log_path(), *data = test_format("%s.data", path);
	ck_assert(log_open_event_file(path));
	pid_t child = fork();
	if (child == 0)
		_exit(race(path, data));
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	char *text = test_read_file(data);
	size_t data_lines = test_count(text, "\n");
	ck_assert_msg(data_lines >= RACE_REOPENS, "the other thread hardly ran: %zu lines", data_lines);
	ck_assert_msg(test_count(text, "DATA\n") == data_lines, "event lines in the program's file: %zu of %zu lines are not its own",
		      data_lines - test_count(text, "DATA\n"), data_lines);
	char **lines;
	ck_assert_uint_ge(test_event_lines(path, &lines), RACE_EVENTS); /* each one checked */
}
END_TEST

START_TEST(test_symbolic_link_is_refused_and_its_target_untouched)
{
	char *dir = test_tmpdir(), *target = test_format("%s/profile", dir), *link = test_format("%s/events.jsonl", dir);
	test_write_file(target, "export X=1\n");
	ck_assert_int_eq(symlink(target, link), 0);
	struct test_capture capture = test_capture_stderr();
	bool opened = log_open_event_file(link);
	char *output = test_captured(&capture);
	ck_assert(!opened);
	ck_assert_msg(test_contains(output, "a symbolic link"), "%s", output);
	log_reason("x");
	ck_assert_str_eq(test_read_file(target), "export X=1\n");
	/* A dangling one creates nothing. */
	char *dangling = test_format("%s/dangling", dir), *nowhere = test_format("%s/created-by-the-log", dir);
	ck_assert_int_eq(symlink(nowhere, dangling), 0);
	capture = test_capture_stderr();
	ck_assert(!log_open_event_file(dangling));
	test_captured(&capture);
	ck_assert_int_ne(access(nowhere, F_OK), 0);
}
END_TEST

START_TEST(test_hard_link_is_refused)
{
	char *dir = test_tmpdir(), *target = test_format("%s/other", dir), *second = test_format("%s/events.jsonl", dir);
	test_write_file(target, "");
	ck_assert_int_eq(link(target, second), 0);
	struct test_capture capture = test_capture_stderr();
	bool opened = log_open_event_file(second);
	char *output = test_captured(&capture);
	ck_assert(!opened);
	ck_assert_msg(test_contains(output, "other names (hard links)"), "%s", output);
}
END_TEST

/* Owned by the effective user or root: a file another user made (and may have planted) is not. */
START_TEST(test_file_of_another_user_is_refused)
{
	if (geteuid() != 0) {
		printf("skipped: test_file_of_another_user_is_refused needs root (to give a file to nobody)\n");
		return;
	}
	char *path = event_log_path();
	test_write_file(path, "");
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	struct test_capture capture = test_capture_stderr();
	bool opened = log_open_event_file(path);
	char *output = test_captured(&capture);
	ck_assert(!opened);
	ck_assert_msg(test_contains(output, "owned by another user (it must belong to the effective user or root)"), "%s", output);
	/* The same file as root's own is taken. */
	ck_assert_int_eq(chown(path, 0, 0), 0);
	ck_assert(log_open_event_file(path));
}
END_TEST

/* A file renamed away (log rotation) and a new one in its place: the next events go to the new
   one; a file removed is made again. */
START_TEST(test_rotated_log_gets_the_next_events)
{
	char *path = event_log_path(), *rotated = test_format("%s.1", path);
	ck_assert(log_open_event_file(path));
	log_reason("before");
	ck_assert_int_eq(rename(path, rotated), 0);
	test_write_file(path, "");
	log_reason("after");
	ck_assert_str_eq(reason_of(only_line(rotated)), "before");
	ck_assert_str_eq(reason_of(only_line(path)), "after");
	ck_assert_int_eq(unlink(path), 0);
	log_reason("again");
	ck_assert_str_eq(reason_of(only_line(path)), "again");
}
END_TEST

START_TEST(test_relative_log_file_is_made_absolute_once)
{
	char *dir = test_tmpdir(), *other = test_tmpdir();
	char *cwd = getcwd(NULL, 0);
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert(log_open_event_file("events.jsonl"));
	ck_assert_int_eq(chdir(other), 0);
	log_reason("moved");
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_str_eq(reason_of(only_line(test_format("%s/events.jsonl", dir))), "moved");
	ck_assert_int_ne(access(test_format("%s/events.jsonl", other), F_OK), 0);
}
END_TEST

/* A line left without its end by an earlier writer: the next one starts on a line of its own. */
START_TEST(test_line_after_a_partial_one_starts_on_its_own)
{
	char *path = event_log_path();
	test_write_file(path, "{\"time\":1,\"pid\":1,\"ev");
	ck_assert(log_open_event_file(path));
	log_reason("whole");
	char *text = test_read_file(path);
	char *second = strchr(text, '\n');
	ck_assert_msg(second && strncmp(second, "\n{\"time\":", 9) == 0, "%s", text);
	test_check_event_line(strtok(second + 1, "\n"));
}
END_TEST

/* Under a seccomp filter the runtime makes no child (a filter may kill the process for a clone it
   did not expect) and appends from the thread itself: the same rules hold. The filter here allows
   everything. */
static void allow_everything_under_seccomp(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog program = { .len = 1, .filter = &allow };
	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ck_assert_int_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program), 0);
	ck_assert_int_eq(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 2);
}

/* Under a file size limit: a line that does not fit is not written at all (no partial line, no
   SIGXFSZ for the process), and the lines after it, once the file may grow, are whole. */
static void check_size_limit(bool under_seccomp)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	log_reason("one");
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	/* In a child that calls no Check function: the limit holds for every file the process writes,
	   Check's own too (each passing assertion writes there). */
	const char *reasons[] = { test_format("two; the request was not seen"), test_format("three; the request was not seen"),
				  test_format("four; the request was not seen") };
	pid_t child = fork();
	if (child == 0) {
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog program = { .len = 1, .filter = &allow };
		if (under_seccomp && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0))
			_exit(4);
		struct rlimit limit = { (rlim_t)st.st_size + 40, RLIM_INFINITY };
		if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
			_exit(2);
		log_event(&(struct log_event){ .event = "register", .reason = reasons[0] });
		/* A limit below the file's size: a write there would raise SIGXFSZ at once. */
		limit.rlim_cur = (rlim_t)st.st_size - 10;
		if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
			_exit(2);
		log_event(&(struct log_event){ .event = "register", .reason = reasons[1] });
		limit.rlim_cur = RLIM_INFINITY;
		if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
			_exit(3);
		log_event(&(struct log_event){ .event = "register", .reason = reasons[2] });
		_exit(0);
	}
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x%s", status,
		      WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ ? ": killed by SIGXFSZ" : "");
	char **lines;
	ck_assert_uint_eq(test_event_lines(path, &lines), 2);
	ck_assert_str_eq(reason_of(lines[0]), "one");
	ck_assert_str_eq(reason_of(lines[1]), "four");
}

START_TEST(test_file_size_limit_leaves_no_partial_line)
{
	check_size_limit(false);
}
END_TEST

START_TEST(test_in_thread_append_keeps_the_rules)
{
	check_size_limit(true);
	allow_everything_under_seccomp();
	char *path = event_log_path();
	test_write_file(path, "partial");
	ck_assert(log_open_event_file(path));
	ck_assert_int_eq(descriptors_on(path), 0);
	log_reason("whole");
	ck_assert_int_eq(descriptors_on(path), 0);
	ck_assert_msg(test_contains(test_read_file(path), "partial\n{\"time\":"), "%s", test_read_file(path));
}
END_TEST

/* ---- the file system and the path of the event log ----------------------------------------------- */

/* The kernel's own files pass "a regular file, one name, the effective user's or root's": procfs,
   sysfs and the like are refused by their file system, before a byte is written (a write there
   would change the host name, a process's name, or fail silently). /proc/PID, not /proc/self,
   which is a symbolic link that root follows to no event log anyway. */
static const char *const kernel_files[] = { "/proc/%d/status", "/proc/%d/comm", "/proc/sys/kernel/hostname",
					    "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/fs/cgroup/cgroup.procs" };

START_TEST(test_kernel_files_are_refused)
{
	const char *path = test_format(kernel_files[_i], (int)getpid());
	if (access(path, F_OK) != 0) {
		printf("skipped: test_kernel_files_are_refused: %s: not on this machine\n", path);
		return;
	}
	char *before = test_read_file("/proc/self/comm");
	struct test_capture capture = test_capture_stderr();
	bool opened = log_open_event_file(path);
	char *output = test_captured(&capture);
	ck_assert_msg(!opened, "%s taken for the event log", path);
	ck_assert_str_eq(output, test_format("nvinterpose: error: NVINTERPOSE_LOG_FILE='%s' cannot be opened for appending: a file of "
					     "the kernel's (procfs, sysfs, cgroupfs, debugfs and the like), not a file of data; no event log\n",
					     path));
	log_reason("not written");
	ck_assert_str_eq(test_read_file("/proc/self/comm"), before);
}
END_TEST

/* What a forked child reports: its exit status (0, 1 a check failed, 77 skipped) and its words. */
struct child_report {
	int status;
	char text[2048];
};

/* Runs body in a forked child that calls no Check function (an assertion there would report as
   this test's); body writes what it found to fd report and returns its status. */
static struct child_report run_in_child(int (*body)(int report, const char *dir), const char *dir)
{
	struct child_report result = { 0 };
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t child = fork();
	if (child == 0) {
		close(fds[0]);
		_exit(body(fds[1], dir));
	}
	close(fds[1]);
	size_t used = 0;
	for (ssize_t n; used + 1 < sizeof(result.text) && (n = read(fds[0], result.text + used, sizeof(result.text) - 1 - used)) > 0;)
		used += (size_t)n;
	close(fds[0]);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return result;
}

/* The test named test passes when body, run in a child, found every check to hold; it is skipped,
   saying why, when the child could not set itself up (77). */
static void expect_child(const char *test, int (*body)(int report, const char *dir), const char *dir)
{
	struct child_report child = run_in_child(body, dir);
	if (child.status == 77)
		printf("skipped: %s: %s\n", test, child.text);
	else
		ck_assert_msg(child.status == 0, "%d: %s", child.status, child.text);
}

/* log_open_event_file with its message caught (no Check function): true when it opened. */
static bool open_quietly(const char *path, char *message, size_t size)
{
	char file[] = "/tmp/nvinterpose-message-XXXXXX";
	int fd = mkstemp(file), saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	bool opened = log_open_event_file(path);
	dup2(saved, STDERR_FILENO);
	close(saved);
	ssize_t n = pread(fd, message, size - 1, 0);
	message[n > 0 ? (size_t)n : 0] = '\0';
	close(fd);
	unlink(file);
	return opened;
}

/* One check of a child: the event log at path opens (or not), its message holding expected. */
static bool expect_open(int report, const char *path, bool opens, const char *expected)
{
	char message[1024];
	bool opened = open_quietly(path, message, sizeof(message));
	if (opened == opens && (!expected || strstr(message, expected)))
		return true;
	dprintf(report, "%s: %s (%s)", path, opened ? "opened" : "refused", message);
	return false;
}

/* dir/real, dir/link -> real, dir/real/last -> dir/real/target */
static void make_links(const char *dir)
{
	test_mkdirs(test_format("%s/real", dir));
	ck_assert_int_eq(symlink("real", test_format("%s/link", dir)), 0);
	test_write_file(test_format("%s/real/target", dir), "");
	ck_assert_int_eq(symlink(test_format("%s/real/target", dir), test_format("%s/real/last", dir)), 0);
}

/* A privileged process (root) takes the event log through no symbolic link on its whole path,
   and makes nothing where one points; a path without one works; the kernel's files stay refused. */
static int check_privileged(int report, const char *dir)
{
	char *through = test_format("%s/link/events.jsonl", dir), *made = test_format("%s/real/events.jsonl", dir);
	const char *refused = "reached through a symbolic link, which a privileged process";
	if (!expect_open(report, through, false, refused) || !expect_open(report, test_format("%s/real/last", dir), false, refused) ||
	    !expect_open(report, test_format("/proc/%d/status", (int)getpid()), false, "a file of the kernel's"))
		return 1;
	if (access(made, F_OK) == 0) {
		dprintf(report, "%s made through the link", made);
		return 1;
	}
	if (!expect_open(report, made, true, NULL))
		return 1;
	log_event(&(struct log_event){ .event = "register", .reason = "written; the request was not seen" });
	char text[512] = "";
	int fd = open(made, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	if (n <= 0 || !strstr(text, "written")) {
		dprintf(report, "%s: no event written", made);
		return 1;
	}
	close(fd);
	return 0;
}

/* Root as it is; another user as root of a user namespace of its own (77 where it may make none). */
static int become_root(int report)
{
	uid_t uid = geteuid();
	if (uid == 0)
		return 0;
	if (unshare(CLONE_NEWUSER) != 0) {
		dprintf(report, "no user namespace may be made here (%s) to be root in", strerror(errno));
		return 77;
	}
	char map[64];
	int fd = open("/proc/self/uid_map", O_WRONLY);
	int n = snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	if (fd < 0 || write(fd, map, (size_t)n) != n || geteuid() != 0) {
		dprintf(report, "cannot map this user to root in a user namespace (%s)", strerror(errno));
		return 77;
	}
	close(fd);
	return 0;
}

static int privileged_body(int report, const char *dir)
{
	int status = become_root(report);
	if (status)
		return status;
	if ((status = check_privileged(report, dir)) != 0)
		return status;
	/* Where the kernel has no openat2 (before 5.6), or a seccomp filter refuses it: the same rules,
	   one component at a time. */
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 437 /* openat2 */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog program = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
		dprintf(report, "seccomp: %s", strerror(errno));
		return 1;
	}
	if (syscall(437, AT_FDCWD, "/", NULL, 0) != -1 || errno != ENOSYS) {
		dprintf(report, "the filter left openat2 callable");
		return 1;
	}
	unlink(test_format("%s/real/events.jsonl", dir));
	return check_privileged(report, dir);
}

START_TEST(test_privileged_process_follows_no_link_to_its_event_log)
{
	char *dir = test_tmpdir();
	make_links(dir);
	expect_child("test_privileged_process_follows_no_link_to_its_event_log", privileged_body, dir);
}
END_TEST

/* Another user follows links of folders as any program does (a home reached through /home ->
   /data/home); only the last component must be no link. Root checks it as nobody. */
static int unprivileged_body(int report, const char *dir)
{
	if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)) {
		dprintf(report, "cannot become nobody: %s", strerror(errno));
		return 1;
	}
	if (access(dir, X_OK) != 0) {
		dprintf(report, "nobody cannot reach %s (TMPDIR)", dir);
		return 77;
	}
	if (!expect_open(report, test_format("%s/link/events.jsonl", dir), true, NULL) ||
	    !expect_open(report, test_format("%s/real/last", dir), false, "a symbolic link (the event log is never reached through one)"))
		return 1;
	return access(test_format("%s/real/events.jsonl", dir), F_OK) == 0 ? 0 : (dprintf(report, "no log made through the link"), 1);
}

START_TEST(test_unprivileged_process_follows_links_of_folders)
{
	char *dir = test_tmpdir();
	make_links(dir);
	if (geteuid() == 0) {
		const char *const owned[] = { "", "/real", "/real/target" };
		for (size_t i = 0; i < 3; i++)
			ck_assert_int_eq(chown(test_format("%s%s", dir, owned[i]), 65534, 65534), 0);
	}
	expect_child("test_unprivileged_process_follows_links_of_folders", unprivileged_body, dir);
}
END_TEST

/* As root in a UTS namespace of its own: NVINTERPOSE_LOG_FILE=/proc/sys/kernel/hostname would
   make every event the host name. */
static int host_name_body(int report, const char *dir)
{
	(void)dir;
	char name[64] = "";
	if (unshare(CLONE_NEWUTS) != 0 || sethostname("nvi-test-host", 13) != 0) {
		dprintf(report, "no UTS namespace of its own here (%s)", strerror(errno));
		return 77;
	}
	if (!expect_open(report, "/proc/sys/kernel/hostname", false, "a file of the kernel's"))
		return 1;
	log_event(&(struct log_event){ .event = "register", .reason = "a host name; the request was not seen" });
	if (gethostname(name, sizeof(name)) != 0 || strcmp(name, "nvi-test-host") != 0) {
		dprintf(report, "the host name became '%s'", name);
		return 1;
	}
	return 0;
}

START_TEST(test_host_name_is_never_written)
{
	if (geteuid() != 0) {
		printf("skipped: test_host_name_is_never_written needs root (the host name of a UTS namespace, which /proc/sys "
		       "shows as root's, is root's to write)\n");
		return;
	}
	expect_child("test_host_name_is_never_written", host_name_body, NULL);
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
		struct log_event event = { .event = "redirect", .name = name, .path = long_path, .caller = "/opt/caller", .reason = "stress" };
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
	char **lines;
	ck_assert_uint_eq(test_event_lines(path, &lines), THREADS * EVENTS_PER_THREAD); /* each one checked */
	char *text = test_read_file(path);
	for (size_t t = 0; t < THREADS; t++) {
		char *last = test_format("\"thread-%zu-event-%d\"", t, EVENTS_PER_THREAD - 1);
		ck_assert_uint_eq(test_count(text, last), 1);
	}
}
END_TEST

/* A writer stopped while it holds the log's lock (SIGSTOP) leaves the others writing without it,
   each after its wait: their lines must stay whole and none may start with a stray line break. */
START_TEST(test_events_written_while_the_lock_is_held_elsewhere_stay_whole)
{
	char *path = event_log_path();
	ck_assert(log_open_event_file(path));
	memset(long_path, 'p', sizeof(long_path) - 1);
	int held = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(held, 0);
	ck_assert_int_eq(flock(held, LOCK_EX), 0);
	pthread_t threads[THREADS];
	for (size_t t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&threads[t], NULL, log_events, (void *)t), 0);
	for (size_t t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);
	close(held);
	char **lines;
	ck_assert_uint_eq(test_event_lines(path, &lines), THREADS * EVENTS_PER_THREAD); /* each one checked */
	char *text = test_read_file(path);
	ck_assert_msg(!test_contains(text, "\n\n") && text[0] != '\n', "an empty line in the event log");
}
END_TEST

START_TEST(test_unopenable_event_log_is_refused_with_a_message_naming_it)
{
	struct test_capture capture = test_capture_stderr();
	bool opened = log_open_event_file("/nonexistent-dir/x.log");
	char *output = test_captured(&capture);
	ck_assert(!opened);
	ck_assert_msg(test_contains(output, "/nonexistent-dir/x.log"), "stderr: %s", output);
	ck_assert_uint_eq(test_count(output, "\n"), 1);
}
END_TEST

START_TEST(test_event_without_event_log_prints_nothing_at_error_level)
{
	struct test_capture capture = test_capture_stderr();
	struct log_event event = { .event = "register", .folder = "/opt", .reason = "x" };
	log_event(&event);
	char *output = test_captured(&capture);
	ck_assert_str_eq(output, "");
}
END_TEST

/* The debug line of an event says what it has, with no empty parts: no "()" without a reason. */
START_TEST(test_debug_line_has_no_empty_parts)
{
	log_set_level(LOG_DEBUG);
	struct test_capture capture = test_capture_stderr();
	log_event(&(struct log_event){ .event = "register", .name = "libnvrtc.so.13", .folder = "/opt/lib", .reason = "" });
	log_event(&(struct log_event){ .event = "redirect", .name = "libx.so.1", .path = "/opt/libx.so.1", .caller = "/opt/c.so",
				       .reason = "registered origin" });
	char *output = test_captured(&capture);
	log_set_level(LOG_ERROR);
	ck_assert_str_eq(output, "nvinterpose: debug: event register libnvrtc.so.13 in /opt/lib\n"
				 "nvinterpose: debug: event redirect libx.so.1 -> /opt/libx.so.1 for /opt/c.so (registered origin)\n");
}
END_TEST

START_TEST(test_messages_obey_the_level)
{
	log_set_level(LOG_ERROR);
	struct test_capture capture = test_capture_stderr();
	log_message(LOG_DEBUG, "hidden debug %d", 1);
	log_message(LOG_INFO, "hidden info");
	log_message(LOG_WARN, "hidden warning");
	log_message(LOG_ERROR, "shown error %d", 2);
	char *output = test_captured(&capture);
	ck_assert_str_eq(output, "nvinterpose: error: shown error 2\n");
	ck_assert(!log_enabled(LOG_DEBUG));

	log_set_level(LOG_DEBUG);
	capture = test_capture_stderr();
	log_message(LOG_DEBUG, "shown debug");
	log_message(LOG_WARN, "shown warning");
	output = test_captured(&capture);
	log_set_level(LOG_ERROR);
	ck_assert_str_eq(output, "nvinterpose: debug: shown debug\nnvinterpose: warning: shown warning\n");
}
END_TEST

START_TEST(test_long_message_is_cut_to_one_line)
{
	char text[3000];
	memset(text, 'm', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	struct test_capture capture = test_capture_stderr();
	log_message(LOG_ERROR, "%s", text);
	char *output = test_captured(&capture);
	ck_assert_uint_eq(test_count(output, "\n"), 1);
	ck_assert_int_eq(output[strlen(output) - 1], '\n');
	ck_assert(strncmp(output, "nvinterpose: error: mmm", 23) == 0);
}
END_TEST

static const struct {
	const char *input;
	const char *shown;
} text_escapes[] = {
	{ "plain /usr/lib/libnvrtc.so.13", "plain /usr/lib/libnvrtc.so.13" },
	{ "C:\\cuda\\bin 'quoted' \"too\"", "C:\\cuda\\bin 'quoted' \"too\"" }, /* only controls are shown */
	{ "rel\nnvinterpose: report: forged", "rel\\x0anvinterpose: report: forged" },
	{ "tab\tcr\r\x01\x1f\x7f", "tab\\x09cr\\x0d\\x01\\x1f\\x7f" },
	{ "\033[31mred\033[0m", "\\x1b[31mred\\x1b[0m" },
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" }, /* UTF-8 kept */
	{ "\xc2\x9b" "31m \xc2\xa0", "\\xc2\\x9b31m \xc2\xa0" }, /* a C1 control (CSI), then a no-break space */
	{ "caf\xe9", "caf\\xe9" },                                  /* Latin-1: no character */
	{ "\x9b" "2J", "\\x9b2J" },
	{ "", "" },
};

START_TEST(test_text_escape_shows_control_characters_as_hex)
{
	char out[256];
	size_t n = log_text_escape(out, sizeof(out), text_escapes[_i].input);
	ck_assert_str_eq(out, text_escapes[_i].shown);
	ck_assert_uint_eq(n, strlen(text_escapes[_i].shown));
}
END_TEST

START_TEST(test_text_escape_stops_before_what_does_not_fit)
{
	char out[8];
	ck_assert_uint_eq(log_text_escape(out, sizeof(out), "abc\ndefgh"), 7);
	ck_assert_str_eq(out, "abc\\x0a");
	ck_assert_uint_eq(log_text_escape(out, 6, "abc\ndef"), 3);
	ck_assert_str_eq(out, "abc");
	ck_assert_uint_eq(log_text_escape(out, 5, "ab\xe2\x82\xac"), 2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(log_text_escape(out, 0, "x"), 0);
}
END_TEST

/* Every message carries its values escaped, whatever the call site: a value cannot forge a line
   of the runtime's, nor send the terminal an escape sequence. */
START_TEST(test_messages_cannot_forge_lines_or_reach_the_terminal_raw)
{
	struct test_capture capture = test_capture_stderr();
	log_message(LOG_ERROR, "NVINTERPOSE_PATH: relative entry '%s' ignored", "rel\nnvinterpose: report: forged");
	log_message(LOG_ERROR, "NVINTERPOSE_POLICY='%s' is not one of fallback", "\033]0;title\007\033[2J");
	log_report("origin nvrtc: %s", "/opt/caf\xe9\r");
	char *output = test_captured(&capture);
	ck_assert_str_eq(output, "nvinterpose: error: NVINTERPOSE_PATH: relative entry 'rel\\x0anvinterpose: report: forged' ignored\n"
				 "nvinterpose: error: NVINTERPOSE_POLICY='\\x1b]0;title\\x07\\x1b[2J' is not one of fallback\n"
				 "nvinterpose: report: origin nvrtc: /opt/caf\\xe9\\x0d\n");
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("log");
	TCase *tc = tcase_create("log");
	tcase_add_loop_test(tc, test_json_escape_quotes_backslashes_and_control_characters, 0,
			    sizeof(escapes) / sizeof(escapes[0]));
	tcase_add_test(tc, test_json_escape_of_null_is_empty);
	tcase_add_loop_test(tc, test_json_escape_truncates_between_escapes_and_always_terminates, 0,
			    sizeof(cut_inputs) / sizeof(cut_inputs[0]));
	tcase_add_test(tc, test_event_is_one_json_line_with_every_field);
	tcase_add_test(tc, test_missing_event_fields_are_null);
	tcase_add_test(tc, test_every_event_kind_has_the_fields_of_the_table);
	tcase_add_test(tc, test_event_of_an_unknown_kind_is_not_written);
	tcase_add_test(tc, test_summary_has_its_figures_as_numbers);
	tcase_add_test(tc, test_name_that_is_not_utf8_is_replaced_and_kept_in_hex);
	tcase_add_test(tc, test_long_line_is_cut_on_a_character_boundary_and_marked);
	tcase_add_test(tc, test_long_looked_list_drops_places_from_its_end_and_counts_them);
	tcase_add_test(tc, test_event_log_is_appended_to_and_holds_no_descriptor);
	tcase_add_test(tc, test_event_log_is_created_private);
	tcase_add_test(tc, test_event_log_takes_no_descriptor_from_the_program);
	tcase_add_test(tc, test_program_that_closes_inherited_descriptors_gets_no_event_lines);
	/* Under qemu-user (the arm64 suite) each event's child, a clone with CLONE_VFORK, is a fork of
	   qemu's, which deadlocks beside a thread in system calls (tests/roots/qemu_fork_syscall.c);
	   and qemu-user refuses seccomp filters, which would filter its own calls. */
	if (getenv("NVI_QEMU_USER"))
		printf("SKIP: test_events_never_land_in_a_file_another_thread_reopens: qemu-user deadlocks its event children\n");
	else
		tcase_add_test(tc, test_events_never_land_in_a_file_another_thread_reopens);
	tcase_add_test(tc, test_symbolic_link_is_refused_and_its_target_untouched);
	tcase_add_test(tc, test_hard_link_is_refused);
	tcase_add_loop_test(tc, test_kernel_files_are_refused, 0, sizeof(kernel_files) / sizeof(kernel_files[0]));
	if (getenv("NVI_QEMU_USER"))
		printf("SKIP: test_privileged_process_follows_no_link_to_its_event_log: qemu-user refuses seccomp filters\n");
	else
		tcase_add_test(tc, test_privileged_process_follows_no_link_to_its_event_log);
	tcase_add_test(tc, test_unprivileged_process_follows_links_of_folders);
	tcase_add_test(tc, test_host_name_is_never_written);
	tcase_add_test(tc, test_file_of_another_user_is_refused);
	tcase_add_test(tc, test_rotated_log_gets_the_next_events);
	tcase_add_test(tc, test_relative_log_file_is_made_absolute_once);
	tcase_add_test(tc, test_line_after_a_partial_one_starts_on_its_own);
	tcase_add_test(tc, test_file_size_limit_leaves_no_partial_line);
	if (getenv("NVI_QEMU_USER"))
		printf("SKIP: test_in_thread_append_keeps_the_rules: qemu-user refuses seccomp filters\n");
	else
		tcase_add_test(tc, test_in_thread_append_keeps_the_rules);
	tcase_add_test(tc, test_event_without_event_log_prints_nothing_at_error_level);
	tcase_add_test(tc, test_debug_line_has_no_empty_parts);
	tcase_add_test(tc, test_events_from_four_threads_give_whole_lines);
	tcase_add_test(tc, test_events_written_while_the_lock_is_held_elsewhere_stay_whole);
	tcase_add_test(tc, test_unopenable_event_log_is_refused_with_a_message_naming_it);
	tcase_add_test(tc, test_messages_obey_the_level);
	tcase_add_test(tc, test_long_message_is_cut_to_one_line);
	tcase_add_loop_test(tc, test_text_escape_shows_control_characters_as_hex, 0, sizeof(text_escapes) / sizeof(text_escapes[0]));
	tcase_add_test(tc, test_text_escape_stops_before_what_does_not_fit);
	tcase_add_test(tc, test_messages_cannot_forge_lines_or_reach_the_terminal_raw);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
