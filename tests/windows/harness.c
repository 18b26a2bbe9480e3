/* The Windows suite's helpers: reporting, scratch folders, files and child processes. */
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

void harness_check(bool held, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	fputs(held ? "ok: " : "FAIL: ", stdout);
	vprintf(format, args);
	putchar('\n');
	fflush(stdout);
	va_end(args);
	failures += !held;
}

int harness_result(void)
{
	printf("%s\n", failures ? "some checks failed" : "all checks held");
	return failures ? 1 : 0;
}

void harness_skip(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	fputs(failures ? "stopped: " : "skipped: ", stdout);
	vprintf(format, args);
	putchar('\n');
	fflush(stdout);
	va_end(args);
	/* A skip after a failed check would hide the failure. */
	exit(failures ? 1 : HARNESS_SKIP);
}

bool harness_contains(const char *text, const char *part) { return text && strstr(text, part); }

void harness_print_indented(const char *output)
{
	for (const char *s = output; *s;) {
		size_t n = strcspn(s, "\n");
		printf("    | %.*s\n", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

const char *harness_utf8(const wchar_t *wide)
{
	static char buffers[4][HARNESS_PATH_MAX * 3];
	static int next;
	char *out = buffers[next++ % 4];
	if (!WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, (int)sizeof(buffers[0]), NULL, NULL))
		strcpy(out, "?");
	return out;
}

void harness_path_from_environment(const char *name, wchar_t *out)
{
	const char *value = getenv(name);
	if (!value || !value[0])
		harness_skip("%s is not set: run this program through meson test", name);
	wchar_t *s = out;
	if (value[0] == '/') {
		/* Wine's drive Z: is the Unix root. */
		*s++ = L'Z';
		*s++ = L':';
	}
	if (!MultiByteToWideChar(CP_UTF8, 0, value, -1, s, HARNESS_PATH_MAX - 2))
		harness_skip("%s is too long", name);
	for (; *s; s++)
		if (*s == L'/')
			*s = L'\\';
}

void harness_join(wchar_t *out, const wchar_t *folder, const wchar_t *name)
{
	_snwprintf(out, HARNESS_PATH_MAX, L"%ls\\%ls", folder, name);
	out[HARNESS_PATH_MAX - 1] = L'\0';
}

void harness_own_folder(wchar_t *out)
{
	DWORD n = GetModuleFileNameW(NULL, out, HARNESS_PATH_MAX);
	wchar_t *slash = n ? wcsrchr(out, L'\\') : NULL;
	if (!slash)
		harness_skip("this program's own path is unknown");
	*slash = L'\0';
}

bool harness_make_folders(const wchar_t *folder)
{
	wchar_t path[HARNESS_PATH_MAX];
	wcsncpy(path, folder, HARNESS_PATH_MAX - 1);
	path[HARNESS_PATH_MAX - 1] = L'\0';
	for (wchar_t *s = path + 3; *s; s++) {
		if (*s != L'\\')
			continue;
		*s = L'\0';
		CreateDirectoryW(path, NULL);
		*s = L'\\';
	}
	return CreateDirectoryW(path, NULL) || GetLastError() == ERROR_ALREADY_EXISTS;
}

static void remove_tree(const wchar_t *folder)
{
	wchar_t pattern[HARNESS_PATH_MAX];
	harness_join(pattern, folder, L"*");
	WIN32_FIND_DATAW found;
	HANDLE find = FindFirstFileW(pattern, &found);
	if (find != INVALID_HANDLE_VALUE) {
		do {
			if (wcscmp(found.cFileName, L".") == 0 || wcscmp(found.cFileName, L"..") == 0)
				continue;
			wchar_t path[HARNESS_PATH_MAX];
			harness_join(path, folder, found.cFileName);
			if (found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
				remove_tree(path);
			else
				DeleteFileW(path);
		} while (FindNextFileW(find, &found));
		FindClose(find);
	}
	RemoveDirectoryW(folder);
}

void harness_fresh_folder(const char *name, wchar_t *out)
{
	wchar_t own[HARNESS_PATH_MAX], wide_name[128];
	harness_own_folder(own);
	MultiByteToWideChar(CP_UTF8, 0, name, -1, wide_name, 128);
	_snwprintf(out, HARNESS_PATH_MAX, L"%ls\\scratch\\%ls", own, wide_name);
	out[HARNESS_PATH_MAX - 1] = L'\0';
	remove_tree(out);
	if (!harness_make_folders(out))
		harness_skip("cannot create %s", harness_utf8(out));
}

bool harness_copy(const wchar_t *from, const wchar_t *to) { return CopyFileW(from, to, FALSE); }

bool harness_write_text(const wchar_t *path, const char *text)
{
	HANDLE file = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	if (file == INVALID_HANDLE_VALUE)
		return false;
	DWORD written = 0;
	bool ok = WriteFile(file, text, (DWORD)strlen(text), &written, NULL) && written == strlen(text);
	CloseHandle(file);
	return ok;
}

char *harness_read_text(const wchar_t *path)
{
	HANDLE file = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
				  FILE_ATTRIBUTE_NORMAL, NULL);
	if (file == INVALID_HANDLE_VALUE)
		return NULL;
	DWORD size = GetFileSize(file, NULL), got = 0;
	char *text = size != INVALID_FILE_SIZE ? malloc(size + 1) : NULL;
	if (text && (!ReadFile(file, text, size, &got, NULL) || got != size)) {
		free(text);
		text = NULL;
	}
	if (text)
		text[size] = '\0';
	CloseHandle(file);
	return text;
}

/* One body for both entries: the process is started by CreateProcessW, or by CreateProcessA with
   the line in the code page, so that a hooked CreateProcessA is exercised as it is. */
static long run_and_capture(const wchar_t *wide_line, const char *narrow_line, char *output, size_t size)
{
	SECURITY_ATTRIBUTES inherit = { sizeof(inherit), NULL, TRUE };
	HANDLE read_end, write_end;
	output[0] = '\0';
	if (!CreatePipe(&read_end, &write_end, &inherit, 0))
		return -1;
	SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
	PROCESS_INFORMATION process;
	bool started = false;
	if (wide_line) {
		STARTUPINFOW startup = { .cb = sizeof(startup), .dwFlags = STARTF_USESTDHANDLES };
		startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
		startup.hStdOutput = startup.hStdError = write_end;
		wchar_t *line = _wcsdup(wide_line);
		started = line && CreateProcessW(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &startup, &process);
		free(line);
	} else {
		STARTUPINFOA startup = { .cb = sizeof(startup), .dwFlags = STARTF_USESTDHANDLES };
		startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
		startup.hStdOutput = startup.hStdError = write_end;
		char *line = _strdup(narrow_line);
		started = line && CreateProcessA(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &startup, &process);
		free(line);
	}
	CloseHandle(write_end);
	if (!started) {
		CloseHandle(read_end);
		return -1;
	}
	size_t used = 0;
	char chunk[4096];
	DWORD got;
	while (ReadFile(read_end, chunk, sizeof(chunk), &got, NULL) && got > 0) {
		size_t keep = got < size - 1 - used ? got : size - 1 - used;
		memcpy(output + used, chunk, keep);
		used += keep;
	}
	output[used] = '\0';
	CloseHandle(read_end);
	WaitForSingleObject(process.hProcess, INFINITE);
	DWORD code = (DWORD)-1;
	GetExitCodeProcess(process.hProcess, &code);
	CloseHandle(process.hProcess);
	CloseHandle(process.hThread);
	return (long)code;
}

long harness_run(const wchar_t *command_line, char *output, size_t size)
{
	return run_and_capture(command_line, NULL, output, size);
}

long harness_run_ansi(const char *command_line, char *output, size_t size)
{
	return run_and_capture(NULL, command_line, output, size);
}
