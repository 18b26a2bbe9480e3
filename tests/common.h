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

/* A fresh folder under $TMPDIR, removed by test_cleanup(). */
char *test_tmpdir(void);
/* mkdir -p; returns its argument. */
const char *test_mkdirs(const char *path);
/* printf into a new string. */
char *test_format(const char *format, ...) __attribute__((format(printf, 1, 2)));
void test_write_file(const char *path, const char *content);
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

struct test_run {
	int status;   /* exit status, or 128 + signal */
	char *output; /* stdout and stderr together */
};

/* Runs argv (NULL-terminated) with the current environment plus the NAME=VALUE strings in env
   (NULL-terminated; "NAME=" unsets); waits at most timeout seconds (then kills: status 137). */
struct test_run test_run(const char *const *argv, const char *const *env, int timeout);

/* The dynamic loader named in this test program's PT_INTERP (the build's loader, on any machine). */
const char *test_interpreter(void);

/* Runs the probe program (tests/probe.c) with args, under env; output as test_run. */
struct test_run test_probe(const char *const *env, const char *args);

bool test_contains(const char *haystack, const char *needle);
size_t test_count(const char *haystack, const char *needle);

/* Runs the suite, prints the closing line, returns the exit status for main(). */
int test_main(Suite *suite);
