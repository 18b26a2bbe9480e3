/* nvinterpose-run.exe, the Windows launcher: runs a program with nvinterpose.dll loaded into it
 * before its first line, or prints the settings as environment lines.
 *
 * The program is created suspended, the DLL goes into its import table (inject_into_child: its own
 * loader loads it on its main thread at start-up), and the program then runs; the launcher waits and
 * returns its exit code. Settings given as options become NVINTERPOSE_* variables of the program's
 * environment, checked by the runtime's own parsers (config.c). Usage errors say
 * "nvinterpose-run: SUBJECT: PROBLEM" and exit 2. */
#include "nvinterpose-run-windows.h"

#include "config.h"
#include "inject.h"
#include "log.h"
#include "nvinterpose.h"
#include "pe_file.h"
#include "report_section.h"
#include "utf16.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#define INJECT_TIMEOUT_MS 60000

static void usage(void)
{
	fputs("Usage: nvinterpose-run [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "       nvinterpose-run [OPTIONS] --print-env[=FORMAT]\n"
	      "\n"
	      "Runs PROGRAM with nvinterpose.dll loaded into it before it starts, so that NVIDIA\n"
	      "libraries find their dependents whoever loaded them. Returns PROGRAM's exit code.\n"
	      "Options take their value as --opt=VALUE or --opt VALUE.\n"
	      "\n"
	      "Options:\n"
	      "  --policy=P              fallback (default), coherent or off, any case (NVINTERPOSE_POLICY)\n"
	      "  --log=L                 error (default), warn, info or debug          (NVINTERPOSE_LOG)\n"
	      "  --log-file=F            append JSON-lines events to F (made absolute)  (NVINTERPOSE_LOG_FILE)\n"
	      "  --path=DIRS             extra folders, ';'-separated (made absolute)   (NVINTERPOSE_PATH)\n"
	      "  --no-add-dll-directory  registered folders do not go to AddDllDirectory\n"
	      "                                                          (NVINTERPOSE_ADD_DLL_DIRECTORY=0)\n"
	      "  --no-children           child processes run without the runtime       (NVINTERPOSE_CHILDREN=0)\n"
	      "  --report                at exit, PROGRAM's report on stderr           (NVINTERPOSE_REPORT)\n"
	      "  --library=F             use this nvinterpose.dll (default: the one beside this program)\n"
	      "  --print-env[=FORMAT]    print the settings (the options above and the NVINTERPOSE_*\n"
	      "                          variables already set, checked) instead of running a program:\n"
	      "                            cmd         @set \"NAME=value\" lines, for a batch file (default):\n"
	      "                                        nvinterpose-run --print-env > nvi.cmd && call nvi.cmd\n"
	      "                            powershell  $env:NAME = 'value' lines:\n"
	      "                                        nvinterpose-run --print-env=powershell | Invoke-Expression\n"
	      "                            github      NAME=value lines, for >> $env:GITHUB_ENV (UTF-8)\n"
	      "                            json        one object {\"NAME\": \"value\", ...} (UTF-8)\n"
	      "                          The variables carry settings only: a program still gets the runtime\n"
	      "                          from this launcher or by loading nvinterpose.dll itself.\n"
	      "  --format=FORMAT         the same as --print-env=FORMAT\n"
	      "  -h, --help              show this help\n"
	      "  -V, --version           show the version\n"
	      "\n"
	      "Exit status: PROGRAM's; 2 for a usage error or a missing DLL; 126 when PROGRAM cannot be\n"
	      "started or cannot take the DLL (another machine's program); 127 when it is not found.\n",
	      stdout);
}

/* A message quotes settings and paths: their control characters are shown as \xNN (log.c), so
   that none starts a line of its own or reaches the console as an escape sequence. */
void say(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	int n = vsnprintf(NULL, 0, format, args);
	va_end(args);
	char *message = n >= 0 ? malloc((size_t)n + 1) : NULL, *shown = message ? malloc(4 * (size_t)n + 1) : NULL;
	if (shown) {
		va_start(args, format);
		vsnprintf(message, (size_t)n + 1, format, args);
		va_end(args);
		log_text_escape(shown, 4 * (size_t)n + 1, message);
		fprintf(stderr, "nvinterpose-run: %s\n", shown);
	}
	free(message);
	free(shown);
}

const char *text(const wchar_t *wide)
{
	static char buffers[4][VALUE_MAX * 3];
	static int next;
	char *out = buffers[next++ % 4];
	return utf8_from_utf16(wide, out, sizeof(buffers[0])) ? out : "?";
}

static const char *error_text(DWORD error)
{
	static wchar_t wide[512];
	DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, error, 0, wide, 512, NULL);
	while (n > 0 && (wide[n - 1] == L'\n' || wide[n - 1] == L'\r' || wide[n - 1] == L'.'))
		wide[--n] = L'\0';
	if (n == 0)
		swprintf(wide, 512, L"error %lu", error);
	return text(wide);
}

/* ---- Options ------------------------------------------------------------------------------------- */

enum option_id {
	OPTION_POLICY,
	OPTION_LOG,
	OPTION_LOG_FILE,
	OPTION_PATH,
	OPTION_NO_ADD_DLL_DIRECTORY,
	OPTION_NO_CHILDREN,
	OPTION_REPORT,
	OPTION_LIBRARY,
	OPTION_PRINT_ENV,
	OPTION_FORMAT,
	OPTION_HELP,
	OPTION_VERSION,
};

enum takes { NO_VALUE, VALUE, OPTIONAL_VALUE };

static const struct option {
	const wchar_t *name;
	enum takes takes;
} options[] = {
	[OPTION_POLICY] = { L"policy", VALUE },
	[OPTION_LOG] = { L"log", VALUE },
	[OPTION_LOG_FILE] = { L"log-file", VALUE },
	[OPTION_PATH] = { L"path", VALUE },
	[OPTION_NO_ADD_DLL_DIRECTORY] = { L"no-add-dll-directory", NO_VALUE },
	[OPTION_NO_CHILDREN] = { L"no-children", NO_VALUE },
	[OPTION_REPORT] = { L"report", NO_VALUE },
	[OPTION_LIBRARY] = { L"library", VALUE },
	[OPTION_PRINT_ENV] = { L"print-env", OPTIONAL_VALUE },
	[OPTION_FORMAT] = { L"format", VALUE },
	[OPTION_HELP] = { L"help", NO_VALUE },
	[OPTION_VERSION] = { L"version", NO_VALUE },
};
#define OPTION_COUNT (sizeof(options) / sizeof(options[0]))

/* The long option that argument (after "--", up to any '=') names: its exact name, else the one
   option it abbreviates, as getopt_long takes them. -1 when none matches, -2 when several do. */
static int find_option(const wchar_t *name, size_t length)
{
	int found = -1;
	for (size_t i = 0; i < OPTION_COUNT; i++) {
		if (wcsncmp(options[i].name, name, length) != 0)
			continue;
		if (options[i].name[length] == L'\0')
			return (int)i;
		found = found == -1 ? (int)i : -2;
	}
	return found;
}

const wchar_t *const format_names[4] = { L"cmd", L"powershell", L"github", L"json" };

const wchar_t *const setting_names[SETTING_COUNT] = {
	L"NVINTERPOSE_POLICY",  L"NVINTERPOSE_LOG",   L"NVINTERPOSE_LOG_FILE", L"NVINTERPOSE_PATH",
	L"NVINTERPOSE_ADD_DLL_DIRECTORY", L"NVINTERPOSE_CHILDREN", L"NVINTERPOSE_DISABLE",
};

bool get_variable(const wchar_t *name, wchar_t *value)
{
	SetLastError(ERROR_SUCCESS);
	DWORD n = GetEnvironmentVariableW(name, value, VALUE_MAX);
	return n > 0 && n < VALUE_MAX;
}

/* A folder or file named on the command line, as the full path the program will see whatever
   folder it moves to. */
static bool absolute(const wchar_t *option, const wchar_t *path, wchar_t *out, size_t size)
{
	DWORD n = GetFullPathNameW(path, (DWORD)size, out, NULL);
	if (n == 0 || n >= size) {
		say("--%ls: '%s': %s", option, text(path), n ? "too long" : error_text(GetLastError()));
		return false;
	}
	return true;
}

/* --path: each ';'-separated entry made absolute (empty ones dropped). */
static bool absolute_list(const wchar_t *list, wchar_t *out)
{
	size_t used = 0;
	out[0] = L'\0';
	for (const wchar_t *s = list; *s;) {
		const wchar_t *end = wcschr(s, L';');
		size_t length = end ? (size_t)(end - s) : wcslen(s);
		if (length) {
			wchar_t entry[WIDE_PATH_MAX], full[WIDE_PATH_MAX];
			if (length >= WIDE_PATH_MAX) {
				say("--path: an entry is longer than %d characters", WIDE_PATH_MAX - 1);
				return false;
			}
			wmemcpy(entry, s, length);
			entry[length] = L'\0';
			if (!absolute(L"path", entry, full, WIDE_PATH_MAX))
				return false;
			size_t n = wcslen(full);
			if (used + n + 2 >= VALUE_MAX) {
				say("--path: the list is too long");
				return false;
			}
			if (used)
				out[used++] = L';';
			wmemcpy(out + used, full, n + 1);
			used += n;
		}
		s = end ? end + 1 : s + length;
	}
	return true;
}

bool valid_name(const wchar_t *value, bool policy)
{
	char utf8[64];
	enum policy parsed_policy;
	enum log_level parsed_level;
	if (!utf8_from_utf16(value, utf8, sizeof(utf8)))
		return false;
	return policy ? config_parse_policy(utf8, &parsed_policy) : config_parse_log_level(utf8, &parsed_level);
}

static bool set_variable(const wchar_t *name, const wchar_t *value)
{
	if (SetEnvironmentVariableW(name, value))
		return true;
	say("%ls: %s", name, error_text(GetLastError()));
	return false;
}

/* ---- Running the program --------------------------------------------------------------------------- */

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

/* nvinterpose.dll beside this program, or the one --library names (already absolute). */
static bool find_library(const wchar_t *given, wchar_t *library)
{
	if (given) {
		wcscpy(library, given);
	} else {
		DWORD n = GetModuleFileNameW(NULL, library, WIDE_PATH_MAX);
		wchar_t *slash = n && n < WIDE_PATH_MAX - 16 ? wcsrchr(library, L'\\') : NULL;
		if (!slash) {
			say("nvinterpose.dll: cannot tell where nvinterpose-run.exe lies (use --library)");
			return false;
		}
		wcscpy(slash + 1, L"nvinterpose.dll");
	}
	DWORD attributes = GetFileAttributesW(library);
	if (attributes == INVALID_FILE_ATTRIBUTES || (attributes & FILE_ATTRIBUTE_DIRECTORY)) {
		if (given)
			say("--library: no such file: %s", text(library));
		else
			say("nvinterpose.dll: not found beside nvinterpose-run.exe (%s); use --library", text(library));
		return false;
	}
	if (!pe_file_is_loadable_dll(library)) {
		say("%s: is not a DLL for %s programs", text(library), pe_machine_name(pe_this_machine()));
		return false;
	}
	return true;
}

/* What the NT status a program exited with says, when it is one of a start that failed in the
   loader: with an injected import that may be the runtime's doing. */
static const char *start_failure(DWORD code)
{
	switch (code) {
	case 0xC0000135: return "a DLL it imports was not found";
	case 0xC0000139: return "an entry point it imports was not found";
	case 0xC0000142: return "a DLL's initialization failed";
	case 0xC000007B: return "an image is not valid for this machine";
	default: return NULL;
	}
}

/* --report: NVINTERPOSE_REPORT names this launcher, and the section named for it (report_section.h)
   is to hold the program's pid, which only CreateProcess tells. The section, or NULL, said why. */
static HANDLE report_section(void)
{
	wchar_t name[REPORT_SECTION_NAME_MAX], pid[16];
	_snwprintf(name, REPORT_SECTION_NAME_MAX, REPORT_SECTION_FORMAT, GetCurrentProcessId());
	name[REPORT_SECTION_NAME_MAX - 1] = L'\0';
	HANDLE section = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE, 0, sizeof(DWORD), name);
	if (!section) {
		say("--report: %s", error_text(GetLastError()));
		return NULL;
	}
	swprintf(pid, 16, L"%lu", GetCurrentProcessId());
	if (!set_variable(L"NVINTERPOSE_REPORT", pid)) {
		CloseHandle(section);
		return NULL;
	}
	return section;
}

/* The program's pid into the section, before it runs. */
static void name_program(HANDLE section, DWORD pid)
{
	DWORD *view = section ? MapViewOfFile(section, FILE_MAP_WRITE, 0, 0, sizeof(DWORD)) : NULL;
	if (view) {
		*view = pid;
		UnmapViewOfFile(view);
	} else if (section) {
		say("--report: the program's pid cannot be written down (%s); no report", error_text(GetLastError()));
	}
}

/* report_program: --report's section, or NULL. */
static int run(wchar_t **args, int count, const wchar_t *library, bool warnings, HANDLE report_program)
{
	const char *program = text(args[0]);
	wchar_t *line = command_line(args, count);
	if (!line) {
		say("%s: out of memory", program);
		return EXIT_CANNOT_RUN;
	}
	STARTUPINFOW startup = { .cb = sizeof(startup) };
	PROCESS_INFORMATION process;
	BOOL started = CreateProcessW(NULL, line, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &startup, &process);
	DWORD error = GetLastError();
	free(line);
	if (!started) {
		if (error == ERROR_FILE_NOT_FOUND || error == ERROR_PATH_NOT_FOUND) {
			say("%s: program not found", program);
			return EXIT_NOT_FOUND;
		}
		say("%s: cannot be started: %s", program, error_text(error));
		return EXIT_CANNOT_RUN;
	}

	struct inject_report report;
	inject_into_child(process.hProcess, library, NULL, INJECT_TIMEOUT_MS, &report);
	if (report.way == INJECT_NONE) {
		/* Asked for the runtime, the program does not run without it. */
		say("%s: cannot take %s: %s", program, text(library), report.why);
		TerminateProcess(process.hProcess, EXIT_CANNOT_RUN);
		CloseHandle(process.hThread);
		CloseHandle(process.hProcess);
		return EXIT_CANNOT_RUN;
	}
	if (report.way == INJECT_REMOTE_THREAD && warnings)
		say("%s: nvinterpose.dll was loaded by a thread of its own, which also ran the program's DLL initialization "
		    "(its import table was not used: %s)",
		    program, report.why);

	name_program(report_program, process.dwProcessId);
	/* Ctrl+C reaches the program, which decides; the launcher waits for it either way. */
	SetConsoleCtrlHandler(NULL, TRUE);
	ResumeThread(process.hThread);
	CloseHandle(process.hThread);
	WaitForSingleObject(process.hProcess, INFINITE);
	DWORD code = EXIT_CANNOT_RUN;
	GetExitCodeProcess(process.hProcess, &code);
	CloseHandle(process.hProcess);
	const char *failure = report.way == INJECT_IMPORT_TABLE ? start_failure(code) : NULL;
	if (failure)
		say("%s: did not start (status 0x%08lx: %s; run it without the launcher to see whether nvinterpose.dll is the cause)",
		    program, code, failure);
	return (int)code;
}

/* What the command line asked for besides the settings it sets. */
struct command {
	bool has_library, print_env, format_given, report;
	enum format format;
	wchar_t library[WIDE_PATH_MAX]; /* --library, made absolute */
};

/* --print-env and --format: the format's name, when given. */
static int take_format(enum option_id id, const wchar_t *option, const wchar_t *value, struct command *command)
{
	if (id == OPTION_PRINT_ENV)
		command->print_env = true;
	else
		command->format_given = true;
	if (!value)
		return -1;
	size_t f = 0;
	while (f < 4 && _wcsicmp(value, format_names[f]) != 0)
		f++;
	if (f == 4) {
		say("--%ls: '%s' is not one of cmd, powershell, github, json", option, text(value));
		return EXIT_USAGE;
	}
	command->format = (enum format)f;
	return -1;
}

/* A file value (--log-file, --library): made absolute into out. */
static bool take_file(const wchar_t *option, const wchar_t *value, wchar_t *out)
{
	if (!value[0])
		say("--%ls: needs a file", option);
	return value[0] && absolute(option, value, out, WIDE_PATH_MAX);
}

/* One option with its value; -1 to go on, else the exit status. */
static int take_option(enum option_id id, const wchar_t *value, struct command *command)
{
	static wchar_t path_list[VALUE_MAX], full[WIDE_PATH_MAX];
	const wchar_t *option = options[id].name;
	switch (id) {
	case OPTION_HELP: usage(); return 0;
	case OPTION_VERSION: printf("nvinterpose-run %s\n", NVI_VERSION); return 0;
	case OPTION_POLICY:
	case OPTION_LOG:
		if (!valid_name(value, id == OPTION_POLICY)) {
			say("--%ls: '%s' is not one of %s", option, text(value),
			    id == OPTION_POLICY ? "fallback, coherent, off" : "error, warn, info, debug");
			return EXIT_USAGE;
		}
		return set_variable(id == OPTION_POLICY ? L"NVINTERPOSE_POLICY" : L"NVINTERPOSE_LOG", value) ? -1 : EXIT_USAGE;
	case OPTION_LOG_FILE: return take_file(option, value, full) && set_variable(L"NVINTERPOSE_LOG_FILE", full) ? -1 : EXIT_USAGE;
	case OPTION_PATH: return absolute_list(value, path_list) && set_variable(L"NVINTERPOSE_PATH", path_list) ? -1 : EXIT_USAGE;
	case OPTION_LIBRARY:
		command->has_library = true;
		return take_file(option, value, command->library) ? -1 : EXIT_USAGE;
	case OPTION_NO_ADD_DLL_DIRECTORY: return set_variable(L"NVINTERPOSE_ADD_DLL_DIRECTORY", L"0") ? -1 : EXIT_USAGE;
	case OPTION_NO_CHILDREN: return set_variable(L"NVINTERPOSE_CHILDREN", L"0") ? -1 : EXIT_USAGE;
	case OPTION_REPORT: command->report = true; return -1;
	case OPTION_PRINT_ENV:
	case OPTION_FORMAT: return take_format(id, option, value, command);
	}
	return -1;
}

/* The long option at argv[*i] and its value (after '=', or the next argument); -1 to go on, else
   the exit status. */
static int read_option(int argc, wchar_t **argv, int *i, struct command *command)
{
	const wchar_t *name = argv[*i] + 2, *equals = wcschr(name, L'=');
	size_t length = equals ? (size_t)(equals - name) : wcslen(name);
	int id = find_option(name, length);
	if (id < 0) {
		say("--%.*ls: %s option (see --help)", (int)length, name, id == -1 ? "unknown" : "ambiguous");
		return EXIT_USAGE;
	}
	const wchar_t *option = options[id].name, *value = equals ? equals + 1 : NULL;
	if (options[id].takes == NO_VALUE && value) {
		say("--%ls: takes no value", option);
		return EXIT_USAGE;
	}
	if (options[id].takes == VALUE && !value) {
		if (*i + 1 >= argc) {
			say("--%ls: needs a value (see --help)", option);
			return EXIT_USAGE;
		}
		value = argv[++*i];
	}
	return take_option((enum option_id)id, value, command);
}

/* The options before the program; *i is then the program's index. -1 to go on, else the exit status. */
static int read_options(int argc, wchar_t **argv, int *i, struct command *command)
{
	for (; *i < argc; ++*i) {
		const wchar_t *argument = argv[*i];
		if (wcscmp(argument, L"--") == 0) {
			++*i;
			return -1;
		}
		if (wcscmp(argument, L"-h") == 0)
			return take_option(OPTION_HELP, NULL, command);
		if (wcscmp(argument, L"-V") == 0)
			return take_option(OPTION_VERSION, NULL, command);
		if (argument[0] != L'-' || !argument[1])
			return -1; /* the program */
		if (argument[1] != L'-') {
			say("%s: unknown option (see --help)", text(argument));
			return EXIT_USAGE;
		}
		int status = read_option(argc, argv, i, command);
		if (status >= 0)
			return status;
	}
	return -1;
}

int wmain(int argc, wchar_t **argv);
int wmain(int argc, wchar_t **argv)
{
	static struct command command = { .format = FORMAT_CMD };
	int i = 1, status = read_options(argc, argv, &i, &command);
	if (status >= 0)
		return status;
	if (command.format_given && !command.print_env) {
		say("--format: goes with --print-env (see --help)");
		return EXIT_USAGE;
	}
	if (command.report && (command.print_env || i >= argc)) {
		say("--report: goes with a program: the report is for the program the launcher starts");
		return EXIT_USAGE;
	}
	if (command.print_env) {
		if (i < argc) {
			say("--print-env: takes no program ('%s' given)", text(argv[i]));
			return EXIT_USAGE;
		}
		return print_environment(command.format);
	}
	if (i >= argc) {
		say("PROGRAM: no program given (see --help)");
		return EXIT_USAGE;
	}
	wchar_t library[WIDE_PATH_MAX], level[16];
	if (!find_library(command.has_library ? command.library : NULL, library))
		return EXIT_USAGE;
	enum log_level log_level = LOG_ERROR;
	char level_utf8[16];
	if (get_variable(L"NVINTERPOSE_LOG", level) && wcslen(level) < 16 && utf8_from_utf16(level, level_utf8, sizeof(level_utf8)))
		config_parse_log_level(level_utf8, &log_level);
	/* Held open until this launcher ends, after its program: the program's runtime reads it at exit. */
	HANDLE report = NULL;
	if (command.report && !(report = report_section()))
		return EXIT_CANNOT_RUN;
	return run(argv + i, argc - i, library, log_level >= LOG_WARN, report);
}
