/* nvinterpose-run.exe --print-env: the settings (the options and the NVINTERPOSE_* variables
   already set, each checked as the runtime reads it) as lines for the shell that reads them. */
#include "nvinterpose-run-windows.h"

#include "config.h"
#include "log.h"
#include "utf16.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

/* ---- --print-env ----------------------------------------------------------------------------------- */

/* Absolute as the runtime's NVINTERPOSE_PATH reader takes it (config.c): a drive's path or a share's. */
static bool is_absolute(const wchar_t *path)
{
	return (path[0] && path[1] == L':' && (path[2] == L'\\' || path[2] == L'/')) || (path[0] == L'\\' && path[1] == L'\\');
}

/* An inherited setting the runtime would refuse or read otherwise than it looks: a usage error. */
static bool check_inherited(const wchar_t *name, const wchar_t *value)
{
	bool policy = wcscmp(name, L"NVINTERPOSE_POLICY") == 0;
	if (policy || wcscmp(name, L"NVINTERPOSE_LOG") == 0) {
		if (!valid_name(value, policy)) {
			say("%ls: '%s' is not one of %s", name, text(value), policy ? "fallback, coherent, off" : "error, warn, info, debug");
			return false;
		}
	} else if (wcscmp(name, L"NVINTERPOSE_ADD_DLL_DIRECTORY") == 0 || wcscmp(name, L"NVINTERPOSE_CHILDREN") == 0 ||
		   wcscmp(name, L"NVINTERPOSE_DISABLE") == 0) {
		if (wcscmp(value, L"0") != 0 && wcscmp(value, L"1") != 0) {
			say("%ls: '%s' is not 0 or 1", name, text(value));
			return false;
		}
	} else if (wcscmp(name, L"NVINTERPOSE_LOG_FILE") == 0 && !is_absolute(value)) {
		say("%ls: '%s' is not an absolute path (give --log-file)", name, text(value));
		return false;
	} else if (wcscmp(name, L"NVINTERPOSE_PATH") == 0) {
		for (const wchar_t *s = value; *s;) {
			const wchar_t *end = wcschr(s, L';');
			if (s != end && !is_absolute(s)) {
				say("%ls: an entry is not an absolute path (give --path): '%s'", name, text(value));
				return false;
			}
			s = end ? end + 1 : s + wcslen(s);
		}
	}
	return true;
}

/* Characters a format cannot carry on one line as they are: cmd expands % and ! even inside
   quotes; no line format holds a line break. */
static bool format_can_hold(enum format format, const wchar_t *value)
{
	const wchar_t *refused = format == FORMAT_CMD ? L"\"%!\r\n" : format == FORMAT_JSON ? L"" : L"\r\n";
	return !wcspbrk(value, refused);
}

struct output {
	UINT code_page;
	bool console; /* stdout is a console: written as UTF-16, no code page involved */
	wchar_t *text;
	size_t used, size;
};

static bool append(struct output *out, const wchar_t *format, ...)
{
	va_list args;
	va_start(args, format);
	int n = _vsnwprintf(out->text + out->used, out->size - out->used, format, args);
	va_end(args);
	if (n < 0 || (size_t)n >= out->size - out->used)
		return false;
	out->used += (size_t)n;
	return true;
}

/* A PowerShell single-quoted string: each quote doubled, the typographic ones too (PowerShell
   takes U+2018..U+201B as quotes). */
static bool append_powershell_quoted(struct output *out, const wchar_t *value)
{
	if (!append(out, L"'"))
		return false;
	for (const wchar_t *s = value; *s; s++) {
		bool quote = *s == L'\'' || (*s >= 0x2018 && *s <= 0x201b);
		if (!append(out, quote ? L"%lc%lc" : L"%lc", *s, *s))
			return false;
	}
	return append(out, L"'");
}

static bool append_json_string(struct output *out, const wchar_t *value)
{
	static char utf8[VALUE_MAX * 3], escaped[VALUE_MAX * 18];
	static wchar_t wide[VALUE_MAX * 18];
	if (!utf8_from_utf16(value, utf8, sizeof(utf8)))
		return false;
	log_json_escape(escaped, sizeof(escaped), utf8);
	return utf16_from_utf8(escaped, wide, VALUE_MAX * 18) && append(out, L"\"%ls\"", wide);
}

/* Writes the lines: UTF-16 to a console; else bytes, UTF-8 for github and json, and for cmd and
   powershell the console's output code page (what cmd reads a batch file in and PowerShell decodes
   a program's output with), refusing a character that code page lacks. */
static bool write_output(const struct output *out, enum format format)
{
	HANDLE handle = GetStdHandle(STD_OUTPUT_HANDLE);
	DWORD written;
	if (out->used == 0)
		return true;
	if (out->console)
		return WriteConsoleW(handle, out->text, (DWORD)out->used, &written, NULL);
	UINT code_page = format == FORMAT_GITHUB || format == FORMAT_JSON ? CP_UTF8 : out->code_page;
	BOOL lost = FALSE;
	int n = WideCharToMultiByte(code_page, code_page == CP_UTF8 ? 0 : WC_NO_BEST_FIT_CHARS, out->text, (int)out->used,
				    NULL, 0, NULL, code_page == CP_UTF8 ? NULL : &lost);
	char *bytes = n > 0 ? malloc((size_t)n) : NULL;
	if (n <= 0 || lost || !bytes) {
		free(bytes);
		say("--print-env=%ls: a value has a character that code page %u lacks (use --print-env=json or github)",
		    format_names[format], code_page);
		return false;
	}
	WideCharToMultiByte(code_page, code_page == CP_UTF8 ? 0 : WC_NO_BEST_FIT_CHARS, out->text, (int)out->used, bytes, n,
			    NULL, NULL);
	bool ok = WriteFile(handle, bytes, (DWORD)n, &written, NULL) && written == (DWORD)n;
	free(bytes);
	return ok;
}

int print_environment(enum format format)
{
	static wchar_t values[SETTING_COUNT][VALUE_MAX];
	bool set[SETTING_COUNT];
	for (size_t i = 0; i < SETTING_COUNT; i++) {
		set[i] = get_variable(setting_names[i], values[i]);
		if (set[i] && !check_inherited(setting_names[i], values[i]))
			return EXIT_USAGE;
		if (set[i] && !format_can_hold(format, values[i])) {
			say("%ls: '%s' cannot be written as a %ls line (use --print-env=json)", setting_names[i], text(values[i]),
			    format_names[format]);
			return EXIT_USAGE;
		}
	}
	DWORD mode;
	struct output out = { .console = GetConsoleMode(GetStdHandle(STD_OUTPUT_HANDLE), &mode),
			      .code_page = GetConsoleOutputCP() ? GetConsoleOutputCP() : GetOEMCP(),
			      .size = SETTING_COUNT * (VALUE_MAX * 6 + 64) };
	out.text = malloc(out.size * sizeof(wchar_t));
	bool ok = out.text != NULL, first = true;
	if (ok && format == FORMAT_JSON)
		ok = append(&out, L"{");
	for (size_t i = 0; ok && i < SETTING_COUNT; i++) {
		if (!set[i])
			continue;
		const wchar_t *name = setting_names[i], *value = values[i];
		switch (format) {
		/* @: a batch file that sets them does not echo them. */
		case FORMAT_CMD: ok = append(&out, L"@set \"%ls=%ls\"\r\n", name, value); break;
		case FORMAT_POWERSHELL:
			ok = append(&out, L"$env:%ls = ", name) && append_powershell_quoted(&out, value) && append(&out, L"\r\n");
			break;
		case FORMAT_GITHUB: ok = append(&out, L"%ls=%ls\n", name, value); break;
		case FORMAT_JSON:
			ok = append(&out, first ? L"\"%ls\": " : L", \"%ls\": ", name) && append_json_string(&out, value);
			break;
		}
		first = false;
	}
	if (ok && format == FORMAT_JSON)
		ok = append(&out, L"}\n");
	if (!ok) {
		free(out.text);
		say("--print-env: out of memory");
		return EXIT_CANNOT_RUN;
	}
	int status = write_output(&out, format) ? 0 : EXIT_USAGE;
	free(out.text);
	return status;
}

