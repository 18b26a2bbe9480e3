/* The test hosts' steps (host.h). */
#include "host.h"

#include "standin_nvrtc.h"

#include <stdio.h>
#include <wchar.h>

static const char *const way_names[WAY_COUNT] = {
	[WAY_LOAD_LIBRARY_W] = "LoadLibraryW",
	[WAY_EX_W_FROM_GET_PROC_ADDRESS] = "LoadLibraryExW(GetProcAddress)",
	[WAY_EX_W_DEFAULT_DIRS] = "LoadLibraryExW(DEFAULT_DIRS)",
	[WAY_LOAD_LIBRARY_A] = "LoadLibraryA",
	[WAY_EX_A] = "LoadLibraryExA",
};

static const wchar_t *base_name(const wchar_t *path)
{
	const wchar_t *base = path;
	for (const wchar_t *s = path; *s; s++)
		if (*s == L'\\' || *s == L'/')
			base = s + 1;
	return base;
}

/* "STEP NAME: ok value V" for a module that exports standin_value, "STEP NAME: ok" for one that does
   not, "STEP NAME: error N" for a load that failed. */
static void say_loaded(const char *step, const wchar_t *name, HMODULE module, DWORD error)
{
	if (!module) {
		printf("%s %ls: error %lu\n", step, name, error);
		return;
	}
	int (*value)(void) = (int (*)(void))(void (*)(void))GetProcAddress(module, "standin_value");
	if (value)
		printf("%s %ls: ok value %d\n", step, name, value());
	else
		printf("%s %ls: ok\n", step, name);
}

static void ask(HMODULE nvrtc, const wchar_t *name)
{
	standin_load_function load = nvrtc ? (standin_load_function)(void (*)(void))GetProcAddress(nvrtc, "standin_load") : NULL;
	if (!load) {
		printf("ask: no NVRTC stand-in was loaded before\n");
		return;
	}
	for (int way = 0; way < WAY_COUNT; way++) {
		int value = 0;
		unsigned long error = load(way, name, false, &value);
		if (error)
			printf("ask %s %ls: error %lu\n", way_names[way], name, error);
		else
			printf("ask %s %ls: ok value %d\n", way_names[way], name, value);
	}
}

/* The child shares this process's output handles, so its lines (and its runtime's) come out here. */
static void run_child(const wchar_t *steps)
{
	wchar_t self[MAX_PATH * 4], line[MAX_PATH * 16];
	STARTUPINFOW startup = { .cb = sizeof(startup) };
	PROCESS_INFORMATION process;
	DWORD code = 1;
	if (!GetModuleFileNameW(NULL, self, MAX_PATH * 4) || _snwprintf(line, MAX_PATH * 16, L"\"%ls\" %ls", self, steps) < 0 ||
	    !CreateProcessW(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &startup, &process)) {
		printf("child: not started (error %lu)\n", GetLastError());
		return;
	}
	WaitForSingleObject(process.hProcess, INFINITE);
	GetExitCodeProcess(process.hProcess, &code);
	CloseHandle(process.hProcess);
	CloseHandle(process.hThread);
	printf("child: exit %lu\n", code);
}

static void set_variable(const wchar_t *assignment)
{
	wchar_t name[256], value[64];
	const wchar_t *equals = wcschr(assignment, L'=');
	size_t length = equals ? (size_t)(equals - assignment) : 0;
	if (!length || length >= 256) {
		printf("setenv %ls: not NAME=VALUE\n", assignment);
		return;
	}
	wmemcpy(name, assignment, length);
	name[length] = L'\0';
	if (wcscmp(equals + 1, L"pid") == 0)
		swprintf(value, 64, L"%lu", GetCurrentProcessId());
	SetEnvironmentVariableW(name, wcscmp(equals + 1, L"pid") == 0 ? value : equals + 1);
	printf("setenv %ls=%ls\n", name, wcscmp(equals + 1, L"pid") == 0 ? value : equals + 1);
}

int host_run(const struct host *host, int argc, wchar_t **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("host: %s\n", host->imitates);
	if (host->start)
		host->start();
	HMODULE last = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		const wchar_t *step = argv[i], *argument = argv[i + 1];
		HMODULE module;
		if (wcscmp(step, L"runtime") == 0) {
			module = host->load_path(argument);
			if (module)
				printf("runtime: ok\n");
			else
				printf("runtime: error %lu\n", GetLastError());
		} else if (wcscmp(step, L"add") == 0) {
			if (AddDllDirectory(argument))
				printf("add %ls: ok\n", argument);
			else
				printf("add %ls: error %lu\n", argument, GetLastError());
		} else if (wcscmp(step, L"load") == 0) {
			module = host->load_path(argument);
			say_loaded("load", base_name(argument), module, module ? 0 : GetLastError());
			last = module ? module : last;
		} else if (wcscmp(step, L"name") == 0) {
			module = host->load_name(argument);
			say_loaded("name", argument, module, module ? 0 : GetLastError());
		} else if (wcscmp(step, L"ask") == 0) {
			ask(last, argument);
		} else if (wcscmp(step, L"free") == 0) {
			module = GetModuleHandleW(argument);
			printf("free %ls: %s\n", argument, module && FreeLibrary(module) ? "ok" : "not loaded");
		} else if (wcscmp(step, L"child") == 0) {
			run_child(argument);
		} else if (wcscmp(step, L"setenv") == 0) {
			set_variable(argument);
		} else if (wcscmp(step, L"which") == 0) {
			wchar_t path[MAX_PATH * 4];
			module = GetModuleHandleW(argument);
			if (module && GetModuleFileNameW(module, path, MAX_PATH * 4))
				printf("which %ls: %ls\n", argument, path);
			else
				printf("which %ls: not loaded\n", argument);
		} else {
			fprintf(stderr, "host: unknown step '%ls'\n", step);
			return 2;
		}
	}
	if (argc % 2 == 0) {
		fprintf(stderr, "host: '%ls' wants an argument\n", argv[argc - 1]);
		return 2;
	}
	return 0;
}
