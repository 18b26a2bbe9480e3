/* What the Windows suite's programs share. Debian has no mingw build of Check: each program runs
   under Wine (or on Windows), prints one line for each thing it checked, and exits 0 when all held,
   1 when one failed, or 77 (skipped) with the reason. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>
#include <windows.h>

#define HARNESS_SKIP 77
#define HARNESS_PATH_MAX 1024

/* Prints "ok: DESCRIPTION" or "FAIL: DESCRIPTION" and counts the failures. */
void harness_check(bool held, const char *format, ...) __attribute__((format(gnu_printf, 2, 3)));
/* 0 when every check held, 1 otherwise. */
int harness_result(void);
/* Prints the reason and exits 77, or 1 when a check has failed already. */
void harness_skip(const char *format, ...) __attribute__((format(gnu_printf, 1, 2), noreturn));

/* A file the build made, named by an environment variable (a Unix path under Wine, which maps
   the Unix root to drive Z:), as a Windows path. Skips the test when the variable is not set. */
void harness_path_from_environment(const char *name, wchar_t *out);

/* This program's folder, and a fresh, empty folder for one test under it: scratch\NAME. */
void harness_own_folder(wchar_t *out);
void harness_fresh_folder(const char *name, wchar_t *out);

bool harness_make_folders(const wchar_t *folder);
bool harness_copy(const wchar_t *from, const wchar_t *to);
bool harness_write_text(const wchar_t *path, const char *text);
/* The whole file, NUL-terminated (malloc'd), or NULL. */
char *harness_read_text(const wchar_t *path);

/* Joins folder and name with a backslash into out (HARNESS_PATH_MAX characters). */
void harness_join(wchar_t *out, const wchar_t *folder, const wchar_t *name);

/* Runs a command line with stdout and stderr captured into output (NUL-terminated); returns its
   exit code, or -1 when it could not be started. */
long harness_run(const wchar_t *command_line, char *output, size_t size);
/* The same through CreateProcessA, the line in the code page. */
long harness_run_ansi(const char *command_line, char *output, size_t size);

/* Whether text (may be NULL) holds part. */
bool harness_contains(const char *text, const char *part);
/* Prints a child's output, each line as "    | LINE". */
void harness_print_indented(const char *output);

/* A wide string in UTF-8 for messages (a few rotating static buffers). */
const char *harness_utf8(const wchar_t *wide);
