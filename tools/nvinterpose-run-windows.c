/* nvinterpose-run.exe, the Windows launcher: runs a program with nvinterpose.dll loaded into it
 * before its first line.
 *
 * The program is created suspended, the DLL is loaded into it by a thread of its own
 * (inject_library), and the program then runs; the launcher waits and returns its exit code.
 * Settings given as options become NVINTERPOSE_* variables of the program's environment. */
#include "inject.h"
#include "nvinterpose.h"
#include "pe_file.h"
#include "utf16.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#define WIDE_PATH_MAX 4352
/* Exit codes of the launcher itself, as shells use them. */
#define EXIT_USAGE 2
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127
#define INJECT_TIMEOUT_MS 60000

static void usage(void)
{
	fputs("Usage: nvinterpose-run [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "\n"
	      "Runs PROGRAM with nvinterpose.dll loaded into it before it starts, so that NVIDIA\n"
	      "libraries find their dependents whoever loaded them. Returns PROGRAM's exit code.\n"
	      "\n"
	      "Options:\n"
	      "  --policy P              fallback (default), coherent or off       (NVINTERPOSE_POLICY)\n"
	      "  --log L                 error (default), warn, info or debug      (NVINTERPOSE_LOG)\n"
	      "  --log-file F            append JSON-lines events to F             (NVINTERPOSE_LOG_FILE)\n"
	      "  --path DIRS             extra folders, ';'-separated              (NVINTERPOSE_PATH)\n"
	      "  --no-add-dll-directory  registered folders do not go to AddDllDirectory\n"
	      "                                                            (NVINTERPOSE_ADD_DLL_DIRECTORY=0)\n"
	      "  --no-children           child processes run without the runtime   (NVINTERPOSE_CHILDREN=0)\n"
	      "  --library F             use this nvinterpose.dll (default: the one beside this program)\n"
	      "  -h, --help              show this help\n"
	      "  --version               show the version\n",
	      stdout);
}

static void say(const char *format, ...) __attribute__((format(gnu_printf, 1, 2)));
static void say(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	fputs("nvinterpose-run: ", stderr);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	va_end(args);
}

/* A wide argument in UTF-8 for messages (a static buffer per slot). */
static const char *text(const wchar_t *wide, int slot)
{
	static char buffers[2][WIDE_PATH_MAX * 3];
	if (!utf8_from_utf16(wide, buffers[slot], sizeof(buffers[slot])))
		return "?";
	return buffers[slot];
}

static const char *error_text(DWORD error)
{
	static wchar_t wide[512];
	static char message[512 * 3];
	DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, error, 0, wide, 512, NULL);
	while (n > 0 && (wide[n - 1] == L'\n' || wide[n - 1] == L'\r' || wide[n - 1] == L'.'))
		wide[--n] = L'\0';
	if (n == 0)
		swprintf(wide, 512, L"error %lu", error);
	return utf8_from_utf16(wide, message, sizeof(message)) ? message : "?";
}

static bool one_of(const wchar_t *value, const wchar_t *const *choices)
{
	for (; *choices; choices++)
		if (_wcsicmp(value, *choices) == 0)
			return true;
	return false;
}

/* The command line CreateProcess passes on, quoted so that the program's CommandLineToArgvW (or
   C runtime) splits it back into exactly args: backslashes double only before a quote. */
static wchar_t *command_line(wchar_t **args, int count)
{
	size_t size = 1;
	for (int i = 0; i < count; i++)
		size += wcslen(args[i]) * 2 + 3;
	wchar_t *line = malloc(size * sizeof(wchar_t)), *out = line;
	if (!line)
		return NULL;
	for (int i = 0; i < count; i++) {
		const wchar_t *arg = args[i];
		if (i)
			*out++ = L' ';
		if (arg[0] && !wcspbrk(arg, L" \t\n\v\"")) {
			out = wcscpy(out, arg) + wcslen(arg);
			continue;
		}
		*out++ = L'"';
		for (const wchar_t *s = arg;; s++) {
			size_t backslashes = 0;
			while (*s == L'\\') {
				backslashes++;
				s++;
			}
			if (*s == L'\0' || *s == L'"') {
				/* Before the closing quote or a literal quote, each backslash is doubled. */
				for (size_t k = 0; k < backslashes * 2 + (*s == L'"'); k++)
					*out++ = L'\\';
				if (*s == L'\0')
					break;
				*out++ = L'"';
			} else {
				for (size_t k = 0; k < backslashes; k++)
					*out++ = L'\\';
				*out++ = *s;
			}
		}
		*out++ = L'"';
	}
	*out = L'\0';
	return line;
}

/* nvinterpose.dll beside this program, or the one --library names, as a full path. */
static bool find_library(const wchar_t *given, wchar_t *library)
{
	wchar_t path[WIDE_PATH_MAX];
	if (given) {
		if (!GetFullPathNameW(given, WIDE_PATH_MAX, library, NULL)) {
			say("--library: %s: %s", text(given, 0), error_text(GetLastError()));
			return false;
		}
	} else {
		DWORD n = GetModuleFileNameW(NULL, path, WIDE_PATH_MAX);
		wchar_t *slash = n && n < WIDE_PATH_MAX ? wcsrchr(path, L'\\') : NULL;
		if (!slash) {
			say("cannot tell where nvinterpose-run.exe lies (use --library)");
			return false;
		}
		wcscpy(slash + 1, L"nvinterpose.dll");
		wcscpy(library, path);
	}
	DWORD attributes = GetFileAttributesW(library);
	if (attributes == INVALID_FILE_ATTRIBUTES || (attributes & FILE_ATTRIBUTE_DIRECTORY)) {
		if (given)
			say("--library: no such file: %s", text(library, 0));
		else
			say("nvinterpose.dll not found beside nvinterpose-run.exe (%s); use --library", text(library, 0));
		return false;
	}
	if (!pe_file_is_loadable_dll(library)) {
		say("%s is not a DLL for this machine's 64-bit programs", text(library, 0));
		return false;
	}
	return true;
}

static void set_variable(const wchar_t *name, const wchar_t *value) { SetEnvironmentVariableW(name, value); }

int wmain(int argc, wchar_t **argv);
int wmain(int argc, wchar_t **argv)
{
	static const wchar_t *const policies[] = { L"fallback", L"coherent", L"off", NULL };
	static const wchar_t *const levels[] = { L"error", L"warn", L"info", L"debug", NULL };
	const wchar_t *library_option = NULL;
	int i = 1;
	for (; i < argc; i++) {
		const wchar_t *option = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes_value = wcscmp(option, L"--policy") == 0 || wcscmp(option, L"--log") == 0 ||
				   wcscmp(option, L"--log-file") == 0 || wcscmp(option, L"--path") == 0 ||
				   wcscmp(option, L"--library") == 0;
		if (takes_value && !value) {
			say("%s needs a value (see --help)", text(option, 0));
			return EXIT_USAGE;
		}
		if (wcscmp(option, L"--") == 0) {
			i++;
			break;
		} else if (wcscmp(option, L"-h") == 0 || wcscmp(option, L"--help") == 0) {
			usage();
			return 0;
		} else if (wcscmp(option, L"--version") == 0) {
			printf("nvinterpose-run %s\n", NVI_VERSION);
			return 0;
		} else if (wcscmp(option, L"--policy") == 0) {
			if (!one_of(value, policies)) {
				say("--policy: '%s' is not one of fallback, coherent, off", text(value, 0));
				return EXIT_USAGE;
			}
			set_variable(L"NVINTERPOSE_POLICY", value);
		} else if (wcscmp(option, L"--log") == 0) {
			if (!one_of(value, levels)) {
				say("--log: '%s' is not one of error, warn, info, debug", text(value, 0));
				return EXIT_USAGE;
			}
			set_variable(L"NVINTERPOSE_LOG", value);
		} else if (wcscmp(option, L"--log-file") == 0) {
			set_variable(L"NVINTERPOSE_LOG_FILE", value);
		} else if (wcscmp(option, L"--path") == 0) {
			set_variable(L"NVINTERPOSE_PATH", value);
		} else if (wcscmp(option, L"--library") == 0) {
			library_option = value;
		} else if (wcscmp(option, L"--no-add-dll-directory") == 0) {
			set_variable(L"NVINTERPOSE_ADD_DLL_DIRECTORY", L"0");
			continue;
		} else if (wcscmp(option, L"--no-children") == 0) {
			set_variable(L"NVINTERPOSE_CHILDREN", L"0");
			continue;
		} else if (option[0] == L'-' && option[1]) {
			say("unknown option '%s' (see --help)", text(option, 0));
			return EXIT_USAGE;
		} else {
			break;
		}
		i++; /* the option's value */
	}
	if (i >= argc) {
		say("no program given (see --help)");
		return EXIT_USAGE;
	}

	wchar_t library[WIDE_PATH_MAX];
	if (!find_library(library_option, library))
		return EXIT_USAGE;
	wchar_t *line = command_line(argv + i, argc - i);
	if (!line) {
		say("out of memory");
		return EXIT_CANNOT_RUN;
	}
	STARTUPINFOW startup = { .cb = sizeof(startup) };
	PROCESS_INFORMATION process;
	if (!CreateProcessW(NULL, line, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &startup, &process)) {
		DWORD error = GetLastError();
		if (error == ERROR_FILE_NOT_FOUND || error == ERROR_PATH_NOT_FOUND) {
			say("%s: program not found", text(argv[i], 0));
			return EXIT_NOT_FOUND;
		}
		say("cannot start %s: %s", text(argv[i], 0), error_text(error));
		return EXIT_CANNOT_RUN;
	}
	free(line);

	DWORD result = inject_library(process.hProcess, library, INJECT_TIMEOUT_MS);
	if (result != 0) {
		if (result == ERROR_NOT_SUPPORTED)
			say("%s is not a 64-bit program: %s cannot be loaded into it", text(argv[i], 0), text(library, 1));
		else if (result == ERROR_MOD_NOT_FOUND)
			say("%s could not be loaded into %s (run with NVINTERPOSE_LOG=debug, or check what the DLL needs)",
			    text(library, 1), text(argv[i], 0));
		else
			say("%s could not be loaded into %s: %s", text(library, 0), text(argv[i], 1), error_text(result));
		TerminateProcess(process.hProcess, EXIT_CANNOT_RUN);
		return EXIT_CANNOT_RUN;
	}

	/* Ctrl+C reaches the program, which decides; the launcher waits for it either way. */
	SetConsoleCtrlHandler(NULL, TRUE);
	ResumeThread(process.hThread);
	CloseHandle(process.hThread);
	WaitForSingleObject(process.hProcess, INFINITE);
	DWORD code = EXIT_CANNOT_RUN;
	GetExitCodeProcess(process.hProcess, &code);
	CloseHandle(process.hProcess);
	return (int)code;
}
