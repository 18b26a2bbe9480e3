/* Helpers shared by the test suites: temporary trees, stand-in libraries compiled at test time,
   child processes run with a chosen environment and their output captured. */
#pragma once

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit status meaning "skipped" for meson. */
#define TEST_SKIP 77

/* A setting the build passes to the tests (NVI_RUNTIME, NVI_PROBE, ...); aborts the test if unset. */
const char *test_setting(const char *name);
/* The shared check NAME (NVI_SHARED_CHECKS/NAME) when it is here; NULL when it is not, having said
   so on stdout: a suite adds the tests that run it only when it is. Usable outside a test. */
char *test_shared_check(const char *name);

/* A fresh folder under $TMPDIR, removed when the test program exits. */
char *test_tmpdir(void);
/* mkdir -p; returns its argument. */
const char *test_mkdirs(const char *path);
/* printf into a new string. */
char *test_format(const char *format, ...) __attribute__((format(printf, 1, 2)));
void test_write_file(const char *path, const char *content);
/* "PATH=FOLDER:/usr/bin:/bin", FOLDER a new one holding stand-ins for getconf (GNU_LIBC_VERSION
   says glibc VERSION) and, unless machine is NULL, uname (-m says machine): what the launcher asks
   of the system. */
const char *test_system_path(const char *machine, const char *glibc);
char *test_read_file(const char *path);
/* Everything left in f (binary safe: its length in *length when length is not NULL); closes f. */
char *test_read_stream(FILE *f, size_t *length);
void test_copy_file(const char *from, const char *to);

/* The regular files (not links) of folder whose names match the fnmatch pattern, as malloc'd
   paths in *paths; returns how many. */
size_t test_regular_files(const char *folder, const char *pattern, char ***paths);

/* Compiles tests/fixtures/SOURCE into a shared library at path with the given soname ("" for none)
   and extra cc flags (e.g. "-Wl,--enable-new-dtags,-rpath,$ORIGIN -DVALUE=7"). */
void test_build_library(const char *source, const char *path, const char *soname, const char *flags);

/* Compiles tests/fixtures/SOURCE into the program FOLDER/program with the extra cc flags (the
   libraries it links against, -D definitions, its RPATH or RUNPATH); returns its path. */
char *test_build_program(const char *source, const char *folder, const char *flags);

/* The glibc this process runs on is MAJOR.MINOR or newer. */
bool test_glibc_at_least(int major, int minor);

struct test_run {
	int status;   /* exit status, or 128 + signal */
	char *output; /* stdout and stderr together */
};

/* Runs argv (NULL-terminated) in an environment built from nothing (tests/environment.h: PATH,
   HOME, TMPDIR, the sanitizers' settings) and the NAME=VALUE strings in env (NULL-terminated;
   "NAME=" leaves NAME out); waits at most timeout seconds (then kills: status 137). */
struct test_run test_run(const char *const *argv, const char *const *env, int timeout);

/* The dynamic loader named in this test program's PT_INTERP (the build's loader, on any machine). */
const char *test_interpreter(void);

/* Runs the probe program (tests/probe.c) with args, under env; output as test_run. */
struct test_run test_probe(const char *const *env, const char *args);

/* The same, the probe started through the loader with its cache off (ld.so --inhibit-cache): what
   only ld.so.cache names (a toolkit folder in ld.so.conf) is not found. */
struct test_run test_probe_without_cache(const char *const *env, const char *args);

/* ---- the other kind of CPU ---- */
/* glibc's $PLATFORM (dl_platform) is "haswell" on many Intel x86-64 CPUs and "x86_64" on AMD and
   older Intel ones (AT_PLATFORM says x86_64 on both). A test of a rule that depends on it runs for
   each kind (tcase_add_loop_test over TEST_CPU_KINDS): kind 0 is this machine as it is; kind 1
   runs the test's programs under qemu-user (the static qemu-x86_64: the dynamic one takes
   LD_PRELOAD for itself) with a CPU model under which the loader reports the other value, as the
   loader says. qemu-user starts a child natively: a program and the loader that answers it run in
   one emulated process (the probe, `ld.so --list`), or the program's children are sent through the
   emulator too (test_cpu_spawn_setting). qemu turns vfork into fork: no event log in these tests. */
#define TEST_CPU_KINDS 2
/* Makes test_probe, test_probe_without_cache and test_loader_expansion run as kind (a probe's shell
   runs natively and execs the emulator). True when it
   can be had here; false, having said why, where not (on aarch64, without qemu-x86_64-static, or
   where the emulated loader reports the same value): the test then returns, skipped. */
bool test_cpu_kind(int kind);
/* The words that run a program of this machine as the test's kind, each followed by a space, quoted
   for sh: "" natively. */
const char *test_cpu_prefix(void);
/* argv with the emulator's words in front (a new array; argv's strings): argv as it is natively. */
const char **test_cpu_argv(const char *const *argv);
/* The environment entry for a program that starts others (its children run as the same kind), or
   NULL natively. */
const char *test_cpu_spawn_setting(void);

/* What the loader makes of one search-list element (its tokens expanded), asked of the loader. */
char *test_loader_expansion(const char *element);

/* What this process writes on stderr between the two calls (a file under test_tmpdir()). */
struct test_capture {
	char *path;
	int saved;
};
struct test_capture test_capture_stderr(void);
char *test_captured(struct test_capture *capture);

bool test_contains(const char *haystack, const char *needle);
size_t test_count(const char *haystack, const char *needle);

/* ---- JSON and UTF-8 ---- */
/* True when the bytes are valid UTF-8 (no overlong form, no surrogate, nothing past U+10FFFF). */
bool test_utf8(const char *text, size_t length);
/* True when text is one JSON value (RFC 8259), surrounded by white space at most, in UTF-8. */
bool test_json_document(const char *text);
/* The members of the JSON object text: keys decoded, values as spans of text. The count, or
   (size_t)-1 when text is not an object or has more than capacity members. */
struct test_json_member {
	char *key;
	const char *value;
	size_t length;
};
size_t test_json_members(const char *object, struct test_json_member *members, size_t capacity);
/* A JSON string decoded (escapes undone), or NULL for null. */
char *test_json_string(const char *value, size_t length);

/* ---- the event log ---- */
/* The oracle of one event line: UTF-8, one JSON object, time, pid and event first, then exactly the
   fields the log room's table of events (log_event_field) gives its kind, in that order (and
   FIELD_hex twins, "truncated", "looked_omitted" where they apply), a reason, and a caller wherever
   the kind has one (unless the reason says the request was not seen). Fails the test, quoting the
   line. */
void test_check_event_line(const char *line);
/* Every line of the event log at path, each checked with test_check_event_line; the file must end
   with a newline. The lines are NUL-terminated in *lines. */
size_t test_event_lines(const char *path, char ***lines);
/* The value of key in an event line: text decoded, NULL for null, a number or list as written;
   fails the test when the line has no such key. */
char *test_event_value(const char *line, const char *key);
/* The first line of the checked log at path of this event kind whose key has value (key NULL: any;
   value NULL: null), or NULL. */
char *test_find_event(const char *path, const char *event, const char *key, const char *value);
/* The event kinds of the log room's table (log_event_kind). */
size_t test_event_kinds(const char ***events);

/* Runs the suite, prints the closing line, returns the exit status for main(). */
int test_main(Suite *suite);

/* ---- the installed tree and the documents ---- */
/* `meson install` of this build into a fresh DESTDIR (NVI_MESON, NVI_BUILD_ROOT); returns the
   DESTDIR, under which the build's prefix (NVI_PREFIX) lies. NULL, with the reason printed, where
   meson is not there to ask. */
char *test_meson_install(void);
/* The project's documents that tests hold to the code: the Markdown pages of docs/, HACKING.md and
   the manual pages' sources (man/NAME.in, with roff's escapes undone: \- reads -, \(dq reads "),
   in the order of their paths. README.md is not among them: no test pins it. */
struct test_document {
	char *path; /* from the source root: "docs/ci.md", "man/nvinterpose.7.in" */
	char *text;
};
size_t test_documents(const struct test_document **documents);
/* Every distinct line of the documents that starts with prefix (after its leading blanks), with
   the indented lines under it when block, and the first document that shows it; at most capacity. */
struct test_document_line {
	const char *document;
	char *text;
};
size_t test_document_lines(const char *prefix, bool block, struct test_document_line *lines, size_t capacity);
