/* What the Windows launcher's files share: nvinterpose-run-windows.c (the command line and running
   the program) and nvinterpose-run-windows-print-env.c (--print-env). */
#pragma once

#include <stdbool.h>
#include <wchar.h>

#define WIDE_PATH_MAX 4352
#define VALUE_MAX 32768
/* Exit codes of the launcher itself, as shells use them. */
#define EXIT_USAGE 2
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

/* "nvinterpose-run: MESSAGE" on stderr, the values in it escaped. */
void say(const char *format, ...) __attribute__((format(gnu_printf, 1, 2)));
/* A wide string in UTF-8 for messages (a few rotating static buffers). */
const char *text(const wchar_t *wide);

/* The settings the launcher passes on, in the order --print-env prints them. */
#define SETTING_COUNT 7
extern const wchar_t *const setting_names[SETTING_COUNT];
/* An environment variable's value (VALUE_MAX characters); false when it is not set or too long. */
bool get_variable(const wchar_t *name, wchar_t *value);
/* A policy or log level as the runtime reads it: its own parser decides (any case). */
bool valid_name(const wchar_t *value, bool policy);

enum format { FORMAT_CMD, FORMAT_POWERSHELL, FORMAT_GITHUB, FORMAT_JSON };
extern const wchar_t *const format_names[4];
/* --print-env: the settings as lines of format on stdout; the exit status. */
int print_environment(enum format format);
