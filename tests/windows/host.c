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
