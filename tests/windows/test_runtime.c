/* The Windows runtime against the seed's bug, with stand-ins in a pip-wheel layout:
 *
 *   scratch\CASE\site-packages\nvidia\cuda_nvrtc\bin\nvrtc64_130_0.dll        (standin_nvrtc.c)
 *   scratch\CASE\site-packages\nvidia\cuda_nvrtc\bin\nvrtc-builtins64_130.dll (standin_builtins.c)
 *   scratch\CASE\site-packages\nvidia\nvjitlink\bin\nvJitLink_130_0.dll       (a wheel sibling)
 *
 * This program loads NVRTC by full path, as Python's loader helpers do; the stand-in then asks for
 * its builtins by bare name in five ways (standin_nvrtc.h). The plain loader finds none of them:
 * the folder is on no search path. Usage: test_runtime CASE (the cases are listed below), and the
 * modes the cases run as child processes of their own. */
#include "harness.h"
#include "nvinterpose.h"
#include "standin_nvrtc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILTINS L"nvrtc-builtins64_130.dll"
#define BUILTINS_VALUE 130
#define OUTPUT_BYTES 65536

static const char *const way_names[WAY_COUNT] = {
	[WAY_LOAD_LIBRARY_W] = "LoadLibraryW (import table)",
	[WAY_EX_W_FROM_GET_PROC_ADDRESS] = "LoadLibraryExW(0) from GetProcAddress",
	[WAY_EX_W_DEFAULT_DIRS] = "LoadLibraryExW(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)",
	[WAY_LOAD_LIBRARY_A] = "LoadLibraryA",
	[WAY_EX_A] = "LoadLibraryExA(0)",
};

struct tree {
	wchar_t root[HARNESS_PATH_MAX];
	wchar_t nvrtc_bin[HARNESS_PATH_MAX];
	wchar_t nvrtc[HARNESS_PATH_MAX];
	wchar_t jitlink_bin[HARNESS_PATH_MAX];
	wchar_t events[HARNESS_PATH_MAX];
};

static wchar_t runtime_path[HARNESS_PATH_MAX], launcher_path[HARNESS_PATH_MAX], self_path[HARNESS_PATH_MAX];
static wchar_t standin_nvrtc_path[HARNESS_PATH_MAX], standin_builtins_path[HARNESS_PATH_MAX];
static wchar_t probe_path[HARNESS_PATH_MAX];

static void copy_into(const wchar_t *from, const wchar_t *folder, const wchar_t *name)
{
	wchar_t to[HARNESS_PATH_MAX];
	harness_join(to, folder, name);
	if (!harness_copy(from, to))
		harness_skip("cannot copy %s to %s", harness_utf8(from), harness_utf8(to));
}

static void make_tree(const char *name, struct tree *tree)
{
	wchar_t site_packages[HARNESS_PATH_MAX];
	harness_fresh_folder(name, tree->root);
	harness_join(site_packages, tree->root, L"site-packages");
	harness_join(tree->nvrtc_bin, site_packages, L"nvidia\\cuda_nvrtc\\bin");
	harness_join(tree->jitlink_bin, site_packages, L"nvidia\\nvjitlink\\bin");
	harness_join(tree->nvrtc, tree->nvrtc_bin, L"nvrtc64_130_0.dll");
	harness_join(tree->events, tree->root, L"events.jsonl");
	if (!harness_make_folders(tree->nvrtc_bin) || !harness_make_folders(tree->jitlink_bin))
		harness_skip("cannot create the wheel folders under %s", harness_utf8(tree->root));
	copy_into(standin_nvrtc_path, tree->nvrtc_bin, L"nvrtc64_130_0.dll");
	copy_into(standin_builtins_path, tree->nvrtc_bin, BUILTINS);
	/* Not an NVIDIA name: the runtime never looks for it, so only AddDllDirectory can make a
	   LOAD_LIBRARY_SEARCH_DEFAULT_DIRS load of it succeed. */
	copy_into(standin_builtins_path, tree->nvrtc_bin, L"marker.dll");
	copy_into(standin_builtins_path, tree->jitlink_bin, L"nvJitLink_130_0.dll");
	/* A stray file with a builtins name: the runtime must not hand it to the loader. */
	wchar_t stray[HARNESS_PATH_MAX];
	harness_join(stray, tree->nvrtc_bin, L"nvrtc-builtins64_131.dll");
	harness_write_text(stray, "not a DLL\n");
}

static standin_load_function load_nvrtc(const struct tree *tree)
{
	HMODULE nvrtc = LoadLibraryW(tree->nvrtc);
	harness_check(nvrtc != NULL, "NVRTC loads by full path from %s (error %lu)", harness_utf8(tree->nvrtc),
		      nvrtc ? 0ul : GetLastError());
	standin_load_function load = nvrtc ? (standin_load_function)(void (*)(void))GetProcAddress(nvrtc, "standin_load") : NULL;
	if (!load) {
		printf("the stand-in NVRTC has no standin_load\n");
		exit(1);
	}
	return load;
}

static HMODULE load_runtime(void)
{
	HMODULE runtime = LoadLibraryW(runtime_path);
	harness_check(runtime != NULL, "nvinterpose.dll loads (error %lu)", runtime ? 0ul : GetLastError());
	if (!runtime)
		exit(harness_result());
	return runtime;
}

/* Every way finds the builtins (found), or every way fails as the plain loader does. */
static int check_ways(standin_load_function load, const wchar_t *name, bool found, const char *context)
{
	int held = 0;
	for (int way = 0; way < WAY_COUNT; way++) {
		int value = 0;
		unsigned long error = load(way, name, false, &value);
		bool ok = found ? error == 0 && value == BUILTINS_VALUE : error == ERROR_MOD_NOT_FOUND;
		harness_check(ok, "%s: %s %s %s (error %lu, value %d)", context, way_names[way],
			      found ? "finds" : "does not find", harness_utf8(name), error, value);
		held += ok;
	}
	return held == WAY_COUNT;
}

/* Runs this program again with arguments, prints what it said, returns its exit code. */
static long run_self(const wchar_t *prefix, const wchar_t *arguments, char *output)
{
	wchar_t line[HARNESS_PATH_MAX * 4];
	_snwprintf(line, HARNESS_PATH_MAX * 4, L"%ls\"%ls\" %ls", prefix, self_path, arguments);
	line[HARNESS_PATH_MAX * 4 - 1] = L'\0';
	long code = harness_run(line, output, OUTPUT_BYTES);
	harness_print_indented(output);
	return code;
}

/* ---- The cases --------------------------------------------------------------------------------- */

/* The seed's failure, so that the other cases mean something: without the runtime nothing finds
   the builtins. */
static void case_without_runtime(struct tree *tree)
{
	standin_load_function load = load_nvrtc(tree);
	check_ways(load, BUILTINS, false, "without the runtime");
	harness_check(!LoadLibraryW(BUILTINS) && GetLastError() == ERROR_MOD_NOT_FOUND,
		      "without the runtime the application does not find the builtins by name either");
}

static bool address_in(const void *address, HMODULE module)
{
	HMODULE holder = NULL;
	return GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				  (LPCWSTR)address, &holder) && holder == module;
}

static void check_origin(HMODULE runtime, const struct tree *tree)
{
	int (*family_origin)(const char *, char *, size_t) =
		(int (*)(const char *, char *, size_t))(void (*)(void))GetProcAddress(runtime, "nvi_family_origin");
	char folder[HARNESS_PATH_MAX * 3] = "";
	int result = family_origin ? family_origin("nvrtc", folder, sizeof(folder)) : -1;
	harness_check(result == 0 && _stricmp(folder, harness_utf8(tree->nvrtc_bin)) == 0,
		      "nvi_family_origin(\"nvrtc\") is the wheel folder (%d: '%s')", result, folder);
}

static void check_marker(const struct tree *tree, bool added)
{
	HMODULE marker = LoadLibraryExW(L"marker.dll", NULL, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
	harness_check((marker != NULL) == added, "NVRTC's folder %s on the AddDllDirectory list (marker.dll %s)",
		      added ? "is" : "is not", marker ? "loads" : "does not load");
	if (marker)
		FreeLibrary(marker);
	(void)tree;
}

/* A folder of its own with one stand-in under an NVIDIA name, on no search path and in no wheel. */
static void make_lone_folder(const struct tree *tree, const wchar_t *folder_name, const wchar_t *dll, wchar_t *folder)
{
	harness_join(folder, tree->root, folder_name);
	if (!harness_make_folders(folder))
		harness_skip("cannot create %s", harness_utf8(folder));
	copy_into(standin_builtins_path, folder, dll);
}

/* Through this program's import table as it is now: the compiler may keep an import's address in a
   register across calls within one function. */
static __attribute__((noinline)) void *fetch_load_library_ex_w(void)
{
	return (void *)GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryExW");
}

static void case_runtime_before(struct tree *tree)
{
	wchar_t extra[HARNESS_PATH_MAX], setting[HARNESS_PATH_MAX * 2];
	make_lone_folder(tree, L"on-nvinterpose-path", L"curand64_10.dll", extra);
	_snwprintf(setting, HARNESS_PATH_MAX * 2, L"Z:\\no\\such\\folder;%ls", extra);
	SetEnvironmentVariableW(L"NVINTERPOSE_PATH", setting);
	void *plain = fetch_load_library_ex_w();
	HMODULE runtime = load_runtime();
	void *fetched = fetch_load_library_ex_w();
	harness_check(fetched != plain && address_in(fetched, runtime),
		      "GetProcAddress(kernel32, \"LoadLibraryExW\") now gives the runtime's hook");
	standin_load_function load = load_nvrtc(tree);
	check_ways(load, BUILTINS, true, "runtime loaded before NVRTC");
	check_origin(runtime, tree);
	HMODULE builtins = LoadLibraryW(BUILTINS);
	harness_check(builtins != NULL, "the application finds the builtins by bare name too");
	if (builtins)
		FreeLibrary(builtins);
	check_marker(tree, true);
	HMODULE curand = LoadLibraryW(L"curand64_10.dll");
	harness_check(curand != NULL, "a DLL in an NVINTERPOSE_PATH folder (';'-separated) is found by bare name");
	FreeLibrary(runtime);
	harness_check(GetModuleHandleW(runtime_path) != NULL, "nvinterpose.dll stays loaded after FreeLibrary (it pins itself)");
}

static void case_runtime_after(struct tree *tree)
{
	standin_load_function load = load_nvrtc(tree);
	check_ways(load, BUILTINS, false, "before the runtime arrives");
	HMODULE runtime = load_runtime();
	check_ways(load, BUILTINS, true, "runtime loaded after NVRTC");
	check_origin(runtime, tree);

	/* The API: a folder registered by hand is searched like an origin; a rescan finds nothing new. */
	int (*register_folder)(const char *, const char *) =
		(int (*)(const char *, const char *))(void (*)(void))GetProcAddress(runtime, "nvi_register_folder");
	int (*rescan)(void) = (int (*)(void))(void (*)(void))GetProcAddress(runtime, "nvi_rescan");
	int (*list_origins)(const char *, struct nvi_origin *, size_t) =
		(int (*)(const char *, struct nvi_origin *, size_t))(void (*)(void))GetProcAddress(runtime, "nvi_list_origins");
	wchar_t lone[HARNESS_PATH_MAX];
	make_lone_folder(tree, L"registered-by-hand", L"cufft64_12.dll", lone);
	harness_check(register_folder && register_folder("cufft", harness_utf8(lone)) == 0,
		      "nvi_register_folder(\"cufft\", %s)", harness_utf8(lone));
	harness_check(register_folder && register_folder("cufft", "relative\\folder") == -EINVAL,
		      "nvi_register_folder refuses a relative folder");
	HMODULE cufft = LoadLibraryW(L"cufft64_12.dll");
	harness_check(cufft != NULL, "a DLL in a folder registered through the API is found by bare name");
	harness_check(rescan && rescan() == 0, "nvi_rescan() patches and registers again, and loads nothing");
	struct nvi_origin origins[8];
	int count = list_origins ? list_origins(NULL, origins, 8) : -1;
	harness_check(count >= 3, "nvi_list_origins lists nvrtc, nvrtc-builtins and cufft (%d)", count);
	check_ways(load, BUILTINS, true, "after nvi_rescan");
}

static void case_no_add_dll_directory(struct tree *tree)
{
	SetEnvironmentVariableW(L"NVINTERPOSE_ADD_DLL_DIRECTORY", L"0");
	SetEnvironmentVariableW(L"NVINTERPOSE_LOG_FILE", tree->events);
	load_runtime();
	standin_load_function load = load_nvrtc(tree);
	check_ways(load, BUILTINS, true, "NVINTERPOSE_ADD_DLL_DIRECTORY=0");
	check_marker(tree, false);
	char *events = harness_read_text(tree->events);
	harness_check(harness_contains(events, "\"event\":\"redirect\"") && !harness_contains(events, "add-dll-directory"),
		      "the event log shows redirects and no AddDllDirectory");
}

static void case_wheel_sibling(struct tree *tree)
{
	/* A file of that name on PATH that is no DLL: the loader stops at it (ERROR_BAD_EXE_FORMAT). */
	wchar_t bogus[HARNESS_PATH_MAX], file[HARNESS_PATH_MAX], path[HARNESS_PATH_MAX * 8] = L"";
	harness_join(bogus, tree->root, L"on-path");
	harness_make_folders(bogus);
	harness_join(file, bogus, L"nvJitLink_130_0.dll");
	harness_write_text(file, "MZ, but not a DLL\n");
	wcscpy(path, bogus);
	wcscat(path, L";");
	GetEnvironmentVariableW(L"PATH", path + wcslen(path), HARNESS_PATH_MAX * 7);
	SetEnvironmentVariableW(L"PATH", path);
	standin_load_function load = load_nvrtc(tree);
	int value = 0;
	unsigned long plain = load(WAY_LOAD_LIBRARY_W, L"nvJitLink_130_0.dll", false, &value);
	harness_check(plain != 0, "without the runtime NVRTC does not get nvJitLink (error %lu)", plain);

	SetEnvironmentVariableW(L"NVINTERPOSE_LOG_FILE", tree->events);
	SetEnvironmentVariableW(L"NVINTERPOSE_ADD_DLL_DIRECTORY", L"0");
	load_runtime();
	unsigned long error = load(WAY_LOAD_LIBRARY_W, L"nvJitLink_130_0.dll", false, &value);
	harness_check(error == 0 && value == BUILTINS_VALUE,
		      "NVRTC finds nvJitLink in the sibling wheel nvidia\\nvjitlink\\bin, past a non-DLL of that name on PATH (error %lu)",
		      error);
	char *events = harness_read_text(tree->events);
	harness_check(harness_contains(events, "\"reason\":\"wheel sibling\"") && harness_contains(events, "\"event\":\"register\""),
		      "the event log has the registration and the wheel-sibling redirect");
	if (events)
		harness_print_indented(events);
}

static void case_entry_points_and_repeats(struct tree *tree)
{
	load_runtime();
	standin_load_function load = load_nvrtc(tree);
	int held = 0;
	for (int round = 0; round < 3; round++)
		held += check_ways(load, BUILTINS, true, round ? "again" : "first");
	harness_check(held == 3, "three rounds of loads and frees, every entry point");
	int value = 0;
	HMODULE first = NULL, second = NULL;
	harness_check(load(WAY_LOAD_LIBRARY_W, BUILTINS, true, &value) == 0 && (first = GetModuleHandleW(BUILTINS)) != NULL,
		      "a kept load stays loaded");
	harness_check(load(WAY_EX_A, BUILTINS, true, &value) == 0 && (second = GetModuleHandleW(BUILTINS)) == first,
		      "a repeated load by another entry point gives the same module");
	HMODULE nvrtc_again = LoadLibraryW(L"nvrtc64_130_0.dll");
	harness_check(nvrtc_again == GetModuleHandleW(tree->nvrtc),
		      "a repeated load of NVRTC by bare name gives the loaded module");
}

static void case_missing_keeps_its_error(struct tree *tree)
{
	/* The plain loader's answers first, then the same calls through the runtime. */
	static const wchar_t *const names[] = { L"nvrtc-builtins64_999.dll", L"Z:\\no\\such\\folder\\nvrtc64_999_0.dll",
						L"no-such-library.dll", L"nvrtc-builtins64_131.dll" };
	DWORD plain[4];
	for (int i = 0; i < 4; i++) {
		HMODULE module = LoadLibraryW(names[i]);
		plain[i] = module ? 0 : GetLastError();
	}
	standin_load_function load = load_nvrtc(tree);
	int value = 0;
	unsigned long plain_stray = load(WAY_LOAD_LIBRARY_W, L"nvrtc-builtins64_131.dll", false, &value);
	load_runtime();
	for (int i = 0; i < 4; i++) {
		SetLastError(12345);
		HMODULE module = LoadLibraryW(names[i]);
		DWORD error = module ? 0 : GetLastError();
		harness_check(!module && error == plain[i], "%s still fails with the plain loader's error %lu (got %lu)",
			      harness_utf8(names[i]), plain[i], error);
	}
	unsigned long stray = load(WAY_LOAD_LIBRARY_W, L"nvrtc-builtins64_131.dll", false, &value);
	harness_check(stray == plain_stray && stray == ERROR_MOD_NOT_FOUND,
		      "a file in the wheel folder that is no DLL is not handed to the loader (error %lu, plain %lu)", stray,
		      plain_stray);
}

struct thread_work {
	standin_load_function load;
	int index;
	int failures;
};

static DWORD WINAPI load_repeatedly(void *arg)
{
	struct thread_work *work = arg;
	for (int i = 0; i < 40; i++) {
		int value = 0;
		if (work->load((work->index + i) % WAY_COUNT, BUILTINS, false, &value) != 0 || value != BUILTINS_VALUE)
			work->failures++;
	}
	return 0;
}

static void case_threads(struct tree *tree)
{
	load_runtime();
	standin_load_function load = load_nvrtc(tree);
	struct thread_work work[8];
	HANDLE threads[8];
	for (int t = 0; t < 8; t++) {
		work[t] = (struct thread_work){ load, t, 0 };
		threads[t] = CreateThread(NULL, 0, load_repeatedly, &work[t], 0, NULL);
	}
	WaitForMultipleObjects(8, threads, TRUE, INFINITE);
	int failures = 0;
	for (int t = 0; t < 8; t++)
		failures += work[t].failures;
	harness_check(failures == 0, "8 threads x 40 loads at once all find the builtins (%d failed)", failures);
}

static void child_arguments(wchar_t *out, const char *expect, const struct tree *tree)
{
	_snwprintf(out, HARNESS_PATH_MAX * 2, L"child-expect %hs \"%ls\"", expect, tree->nvrtc);
	out[HARNESS_PATH_MAX * 2 - 1] = L'\0';
}

/* ---- The probe: a child whose start-up is what is checked (probe.c) ---------------------------- */

/* What the probe says when the runtime came in through its import table: loaded by its own loader
   before its DLLs' initialization, on the main thread, no thread started for it, and the import
   directory put back. */
static const char *const by_import_table[] = {
	"runtime in this process: yes",
	"static initialization on the main thread: yes",
	"runtime loaded before static initialization: yes",
	"hooks in place at static initialization: yes",
	"threads started before main: 0",
	"import directory as in the file: yes",
};
/* And without the runtime: the probe's own baseline. */
static const char *const without_it[] = {
	"runtime in this process: no",
	"static initialization on the main thread: yes",
	"threads started before main: 0",
	"import directory as in the file: yes",
};
#define LINES(list) list, sizeof(list) / sizeof(list[0])

static void check_probe(const char *how, long code, const char *output, const char *const *lines, size_t count)
{
	harness_print_indented(output);
	harness_check(code == 0, "%s: the probe started and exited 0 (%ld)", how, code);
	for (size_t i = 0; i < count; i++)
		harness_check(harness_contains(output, lines[i]), "%s: %s", how, lines[i]);
}

static void case_child(struct tree *tree)
{
	static char output[OUTPUT_BYTES];
	wchar_t arguments[HARNESS_PATH_MAX * 2], line[HARNESS_PATH_MAX + 8];
	char narrow[HARNESS_PATH_MAX * 3 + 8];
	_snwprintf(line, HARNESS_PATH_MAX + 8, L"\"%ls\"", probe_path);
	snprintf(narrow, sizeof(narrow), "\"%s\"", harness_utf8(probe_path));
	check_probe("without the runtime", harness_run(line, output, OUTPUT_BYTES), output, LINES(without_it));

	/* The child's runtime says how it came in (on the child's stderr, captured with its stdout). */
	SetEnvironmentVariableW(L"NVINTERPOSE_LOG", L"debug");
	load_runtime();
	long code = harness_run(line, output, OUTPUT_BYTES);
	check_probe("CreateProcessW", code, output, LINES(by_import_table));
	harness_check(harness_contains(output, "loaded through the program's import table"), "CreateProcessW: the child's runtime says so");
	code = harness_run_ansi(narrow, output, OUTPUT_BYTES);
	check_probe("CreateProcessA", code, output, LINES(by_import_table));
	harness_check(harness_contains(output, "loaded through the program's import table"), "CreateProcessA: the child's runtime says so");
	SetEnvironmentVariableW(L"NVINTERPOSE_LOG", NULL);

	child_arguments(arguments, "found", tree);
	harness_check(run_self(L"", arguments, output) == 0 && harness_contains(output, "runtime in this process: yes"),
		      "a child started with CreateProcessW gets the runtime and finds the builtins");
	snprintf(narrow, sizeof(narrow), "\"%s\" child-expect found \"%s\"", harness_utf8(self_path), harness_utf8(tree->nvrtc));
	code = harness_run_ansi(narrow, output, OUTPUT_BYTES);
	harness_print_indented(output);
	harness_check(code == 0 && harness_contains(output, "runtime in this process: yes"),
		      "a child started with CreateProcessA gets the runtime and finds the builtins (exit %ld)", code);

	/* A child created suspended stays suspended until its creator resumes it. */
	wchar_t command[HARNESS_PATH_MAX * 4];
	_snwprintf(command, HARNESS_PATH_MAX * 4, L"\"%ls\" exit-with 7", self_path);
	STARTUPINFOW startup_w = { .cb = sizeof(startup_w) };
	PROCESS_INFORMATION process;
	DWORD exit_code = 1;
	if (CreateProcessW(NULL, command, NULL, NULL, FALSE, CREATE_SUSPENDED, NULL, NULL, &startup_w, &process)) {
		bool still_waiting = WaitForSingleObject(process.hProcess, 300) == WAIT_TIMEOUT;
		ResumeThread(process.hThread);
		WaitForSingleObject(process.hProcess, INFINITE);
		GetExitCodeProcess(process.hProcess, &exit_code);
		harness_check(still_waiting && exit_code == 7, "CREATE_SUSPENDED is kept: the child runs once resumed (exit %lu)",
			      exit_code);
		CloseHandle(process.hProcess);
		CloseHandle(process.hThread);
	} else {
		harness_check(false, "CreateProcessW with CREATE_SUSPENDED (error %lu)", GetLastError());
	}
}

/* A child whose creator's attribute list holds an attribute that may forbid the DLL (here a
   mitigation policy) gets the fallback, a thread of its own, and the log says so; the probe then
   sees its DLLs initialized on that thread, before the runtime came. A list with only a handle list,
   as Python's subprocess passes, keeps the import table. */
static void case_child_fallback(struct tree *tree)
{
	static char output[OUTPUT_BYTES];
	(void)tree;
	long code = run_self(L"", L"spawn-probe mitigation", output);
	harness_check(code == 0, "the spawning process ran (%ld)", code);
	harness_check(harness_contains(output, "the runtime was loaded by a thread of its own") &&
			      harness_contains(output, "attribute list holds a mitigation policy"),
		      "a mitigation policy attribute: the runtime's log says the fallback was used, and why");
	harness_check(harness_contains(output, "runtime in this process: yes"), "the child got the runtime all the same");
	harness_check(harness_contains(output, "static initialization on the main thread: no") &&
			      harness_contains(output, "runtime loaded before static initialization: no"),
		      "the probe tells the fallback from the import table (its DLLs ran on the injected thread, first)");

	code = run_self(L"", L"spawn-probe handle-list", output);
	harness_check(code == 0 && harness_contains(output, "probe exit: 0"), "a handle list: the probe ran (%ld)", code);
	harness_check(!harness_contains(output, "thread of its own"), "a handle list: no fallback");
	for (size_t i = 0; i < sizeof(by_import_table) / sizeof(by_import_table[0]); i++)
		harness_check(harness_contains(output, by_import_table[i]), "a handle list: %s", by_import_table[i]);
}

/* The DLL the runtime would give a child is no longer where it was loaded from: the child starts,
   without it, and the log says why. */
static void case_child_dll_missing(struct tree *tree)
{
	static char output[OUTPUT_BYTES];
	wchar_t arguments[HARNESS_PATH_MAX * 2];
	_snwprintf(arguments, HARNESS_PATH_MAX * 2, L"spawn-probe missing \"%ls\"", tree->root);
	long code = run_self(L"", arguments, output);
	harness_check(code == 0, "the spawning process ran (%ld)", code);
	harness_check(harness_contains(output, "runs without the runtime") && harness_contains(output, "is not there"),
		      "the runtime's log says the child runs without it, and why");
	harness_check(harness_contains(output, "probe exit: 0") && harness_contains(output, "runtime in this process: no"),
		      "the child started, without the runtime");
}

static void case_children_off(struct tree *tree)
{
	static char output[OUTPUT_BYTES];
	wchar_t arguments[HARNESS_PATH_MAX * 2];
	SetEnvironmentVariableW(L"NVINTERPOSE_CHILDREN", L"0");
	load_runtime();
	child_arguments(arguments, "missing", tree);
	harness_check(run_self(L"", arguments, output) == 0 && harness_contains(output, "runtime in this process: no"),
		      "with NVINTERPOSE_CHILDREN=0 a child runs without the runtime, and the builtins stay missing");
}

static void case_launcher(struct tree *tree)
{
	static char output[OUTPUT_BYTES];
	wchar_t prefix[HARNESS_PATH_MAX + 64], arguments[HARNESS_PATH_MAX * 2], line[HARNESS_PATH_MAX * 3];
	_snwprintf(prefix, HARNESS_PATH_MAX + 64, L"\"%ls\" ", launcher_path);

	child_arguments(arguments, "found", tree);
	harness_check(run_self(prefix, arguments, output) == 0 && harness_contains(output, "runtime in this process: yes"),
		      "nvinterpose-run.exe PROGRAM: the program gets the runtime and finds the builtins");
	harness_check(run_self(prefix, L"exit-with 42", output) == 42, "nvinterpose-run.exe returns the program's exit code");
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" \"%ls\"", launcher_path, probe_path);
	long probe_code = harness_run(line, output, OUTPUT_BYTES);
	check_probe("nvinterpose-run.exe", probe_code, output, LINES(by_import_table));
	_snwprintf(arguments, HARNESS_PATH_MAX * 2, L"spawn found \"%ls\"", tree->nvrtc);
	harness_check(run_self(prefix, arguments, output) == 0, "a child of a program run by the launcher gets the runtime");
	_snwprintf(prefix, HARNESS_PATH_MAX + 64, L"\"%ls\" --no-children -- ", launcher_path);
	_snwprintf(arguments, HARNESS_PATH_MAX * 2, L"spawn missing \"%ls\"", tree->nvrtc);
	harness_check(run_self(prefix, arguments, output) == 0, "--no-children: the child runs without it");

	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" Z:\\no\\such\\program.exe", launcher_path);
	long code = harness_run(line, output, OUTPUT_BYTES);
	harness_check(code == 127 && harness_contains(output, "program not found"), "a missing program: exit 127, said plainly (%ld: %s)",
		      code, output);
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" --library Z:\\no\\such\\nvinterpose.dll \"%ls\" exit-with 0",
		   launcher_path, self_path);
	code = harness_run(line, output, OUTPUT_BYTES);
	harness_check(code == 2 && harness_contains(output, "no such file"), "a missing DLL: exit 2, said plainly (%ld: %s)", code, output);
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" --library \"%ls\\nvrtc-builtins64_131.dll\" \"%ls\" exit-with 0",
		   launcher_path, tree->nvrtc_bin, self_path);
	code = harness_run(line, output, OUTPUT_BYTES);
	harness_check(code == 2 && harness_contains(output, "is not a DLL"), "a --library that is no DLL: exit 2, said plainly (%ld: %s)",
		      code, output);
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" --help", launcher_path);
	code = harness_run(line, output, OUTPUT_BYTES);
	harness_check(code == 0 && harness_contains(output, "Usage: nvinterpose-run"), "--help");
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" --version", launcher_path);
	code = harness_run(line, output, OUTPUT_BYTES);
	harness_check(code == 0 && harness_contains(output, "nvinterpose-run " NVI_VERSION), "--version (%s)", output);
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" --frobnicate x", launcher_path);
	code = harness_run(line, output, OUTPUT_BYTES);
	harness_check(code == 2 && harness_contains(output, "unknown option"), "an unknown option: exit 2");
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\"", launcher_path);
	code = harness_run(line, output, OUTPUT_BYTES);
	harness_check(code == 2 && harness_contains(output, "no program given"), "no program: exit 2");
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" --policy sideways x", launcher_path);
	code = harness_run(line, output, OUTPUT_BYTES);
	harness_check(code == 2 && harness_contains(output, "--policy"), "a bad --policy: exit 2");
}

static void case_disabled(struct tree *tree)
{
	SetEnvironmentVariableW(L"NVINTERPOSE_DISABLE", L"1");
	HMODULE runtime = load_runtime();
	check_ways(load_nvrtc(tree), BUILTINS, false, "NVINTERPOSE_DISABLE=1");
	harness_check(FreeLibrary(runtime) && !GetModuleHandleW(runtime_path),
		      "a disabled runtime hooks nothing and can be unloaded");
}

static void case_policy_off(struct tree *tree)
{
	SetEnvironmentVariableW(L"NVINTERPOSE_POLICY", L"off");
	HMODULE runtime = load_runtime();
	check_ways(load_nvrtc(tree), BUILTINS, false, "NVINTERPOSE_POLICY=off");
	check_origin(runtime, tree);
}

/* The DLL exports its API and nothing else. */
static void case_exports(struct tree *tree)
{
	(void)tree;
	static const char *const expected[] = { "nvi_family_origin", "nvi_list_families", "nvi_list_origins", "nvi_list_patches",
						"nvi_register_folder", "nvi_report", "nvi_rescan", "nvi_version" };
	const DWORD count = sizeof(expected) / sizeof(expected[0]);
	SetEnvironmentVariableW(L"NVINTERPOSE_DISABLE", L"1");
	HMODULE runtime = load_runtime();
	const unsigned char *base = (const unsigned char *)runtime;
	const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(base + ((const IMAGE_DOS_HEADER *)base)->e_lfanew);
	const IMAGE_DATA_DIRECTORY *entry = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
	const IMAGE_EXPORT_DIRECTORY *exports = (const IMAGE_EXPORT_DIRECTORY *)(base + entry->VirtualAddress);
	const DWORD *names = (const DWORD *)(base + exports->AddressOfNames);
	bool same = exports->NumberOfNames == count;
	for (DWORD i = 0; i < exports->NumberOfNames; i++) {
		const char *name = (const char *)(base + names[i]);
		printf("    export %s\n", name);
		same = same && i < count && strcmp(name, expected[i]) == 0;
	}
	harness_check(same, "nvinterpose.dll exports exactly the %lu nvi_ functions", (unsigned long)count);
	const char *(*version)(void) = (const char *(*)(void))(void (*)(void))GetProcAddress(runtime, "nvi_version");
	harness_check(version && strcmp(version(), NVI_VERSION) == 0, "nvi_version() is %s", NVI_VERSION);
	int (*list_patches)(void *, size_t) = (int (*)(void *, size_t))(void (*)(void))GetProcAddress(runtime, "nvi_list_patches");
	harness_check(list_patches && list_patches(NULL, 0) == 0, "nvi_list_patches() lists nothing (the import tables are not listed)");
}

/* ---- Modes for child processes ----------------------------------------------------------------- */

/* child-expect found|missing NVRTC: loads NVRTC by path and checks what the five ways get. */
static int mode_child_expect(const wchar_t *expect, const wchar_t *nvrtc_path)
{
	bool runtime_here = GetModuleHandleW(L"nvinterpose.dll") != NULL;
	printf("runtime in this process: %s\n", runtime_here ? "yes" : "no");
	struct tree tree = { 0 };
	wcsncpy(tree.nvrtc, nvrtc_path, HARNESS_PATH_MAX - 1);
	check_ways(load_nvrtc(&tree), BUILTINS, wcscmp(expect, L"found") == 0, "in the child");
	return harness_result();
}

/* spawn found|missing NVRTC: starts a child-expect child (the runtime, if here, follows). */
static int mode_spawn(const wchar_t *expect, const wchar_t *nvrtc_path)
{
	static char output[OUTPUT_BYTES];
	wchar_t arguments[HARNESS_PATH_MAX * 2];
	_snwprintf(arguments, HARNESS_PATH_MAX * 2, L"child-expect %ls \"%ls\"", expect, nvrtc_path);
	long code = run_self(L"", arguments, output);
	harness_check(code == 0, "the grandchild's expectation (%ls) held", expect);
	return harness_result();
}

/* A real x86 program: another machine than the runtime's. The parent decides from its header; the
   child starts without the runtime, where this machine runs 32-bit programs at all (the plain run
   says whether it does). The launcher refuses it: asked for the runtime, it runs nothing without. */
static void case_child_other_machine(struct tree *tree)
{
	static char output[OUTPUT_BYTES];
	wchar_t probe32[HARNESS_PATH_MAX], line[HARNESS_PATH_MAX * 2], arguments[HARNESS_PATH_MAX + 32];
	(void)tree;
	if (!getenv("NVI_PROBE32"))
		harness_skip("no 32-bit probe: i686-w64-mingw32-gcc was not found when the build was configured");
	harness_path_from_environment("NVI_PROBE32", probe32);
	_snwprintf(line, HARNESS_PATH_MAX * 2, L"\"%ls\"", probe32);
	long plain = harness_run(line, output, OUTPUT_BYTES);
	bool runs_here = plain == 3 && harness_contains(output, "32-bit probe ran");
	if (!runs_here)
		printf("32-bit programs do not run here (exit %ld without the runtime): only the decisions are checked\n", plain);

	_snwprintf(arguments, HARNESS_PATH_MAX + 32, L"spawn-probe x86 \"%ls\"", probe32);
	long code = run_self(L"", arguments, output);
	harness_check(code == 0, "the spawning process ran (%ld)", code);
	harness_check(harness_contains(output, "runs without the runtime: the program is for x86 and nvinterpose.dll for x64"),
		      "the runtime's log says the x86 child runs without it, and why");
	if (runs_here)
		harness_check(harness_contains(output, "32-bit probe ran") && harness_contains(output, "probe exit: 3"),
			      "the x86 child started and ran to its end");

	_snwprintf(line, HARNESS_PATH_MAX * 2, L"\"%ls\" \"%ls\"", launcher_path, probe32);
	code = harness_run(line, output, OUTPUT_BYTES);
	harness_print_indented(output);
	harness_check(code == 126 && harness_contains(output, "cannot take") && harness_contains(output, "the program is for x86") &&
			      !harness_contains(output, "32-bit probe ran"),
		      "nvinterpose-run.exe refuses the x86 program with exit 126, saying why, and runs nothing (%ld)", code);
}

/* spawn-probe mitigation | handle-list | missing FOLDER | x86 PROGRAM: loads the runtime (missing: a
   copy in FOLDER, which is then renamed; x86: PROGRAM instead of the probe, with
   NVINTERPOSE_LOG=info), starts the probe (mitigation, handle-list: with that attribute in its
   list) and prints its exit code; the
   probe writes to this process's output, and the runtime logs warnings there too. */
static int mode_spawn_probe(int argc, wchar_t **argv)
{
	bool missing = wcscmp(argv[2], L"missing") == 0, x86 = wcscmp(argv[2], L"x86") == 0;
	SetEnvironmentVariableW(L"NVINTERPOSE_LOG", x86 ? L"info" : L"warn");
	if (x86 && argc < 4)
		return 2;
	wchar_t copy[HARNESS_PATH_MAX], moved[HARNESS_PATH_MAX];
	if (missing) {
		if (argc < 4)
			return 2;
		harness_join(copy, argv[3], L"nvinterpose.dll");
		harness_join(moved, argv[3], L"nvinterpose.dll.moved");
		if (!harness_copy(runtime_path, copy) || !LoadLibraryW(copy) || !MoveFileW(copy, moved)) {
			printf("cannot load a copy of the runtime and move it away (error %lu)\n", GetLastError());
			return 1;
		}
	} else if (!LoadLibraryW(runtime_path)) {
		printf("the runtime does not load (error %lu)\n", GetLastError());
		return 1;
	}
	wchar_t line[HARNESS_PATH_MAX + 8];
	_snwprintf(line, HARNESS_PATH_MAX + 8, L"\"%ls\"", x86 ? argv[3] : probe_path);
	/* mitigation: an attribute that can forbid a DLL (its value asks for no mitigation at all);
	   handle-list: one that cannot, the probe's output handle, as Python's subprocess passes it. */
	bool mitigation = wcscmp(argv[2], L"mitigation") == 0, handle_list = wcscmp(argv[2], L"handle-list") == 0;
	STARTUPINFOEXW startup = { .StartupInfo.cb = sizeof(startup) };
	SIZE_T size = 0;
	InitializeProcThreadAttributeList(NULL, 1, 0, &size);
	startup.lpAttributeList = malloc(size);
	if (!startup.lpAttributeList || !InitializeProcThreadAttributeList(startup.lpAttributeList, 1, 0, &size))
		return 1;
	DWORD64 no_mitigation = 0;
	HANDLE inherited[1] = { GetStdHandle(STD_OUTPUT_HANDLE) };
	if ((mitigation && !UpdateProcThreadAttribute(startup.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_MITIGATION_POLICY,
						     &no_mitigation, sizeof(no_mitigation), NULL, NULL)) ||
	    (handle_list && !UpdateProcThreadAttribute(startup.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited,
						      sizeof(inherited), NULL, NULL))) {
		printf("the attribute cannot be set (error %lu)\n", GetLastError());
		return 1;
	}
	PROCESS_INFORMATION process;
	DWORD flags = mitigation || handle_list ? EXTENDED_STARTUPINFO_PRESENT : 0;
	if (!CreateProcessW(NULL, line, NULL, NULL, TRUE, flags, NULL, NULL, &startup.StartupInfo, &process)) {
		printf("the probe could not be started (error %lu)\n", GetLastError());
		return 1;
	}
	WaitForSingleObject(process.hProcess, INFINITE);
	DWORD code = 1;
	GetExitCodeProcess(process.hProcess, &code);
	printf("probe exit: %lu\n", code);
	DeleteProcThreadAttributeList(startup.lpAttributeList);
	return 0;
}

static const struct {
	const char *name;
	void (*run)(struct tree *tree);
} cases[] = {
	{ "without_runtime", case_without_runtime },
	{ "runtime_before", case_runtime_before },
	{ "runtime_after", case_runtime_after },
	{ "no_add_dll_directory", case_no_add_dll_directory },
	{ "wheel_sibling", case_wheel_sibling },
	{ "entry_points_and_repeats", case_entry_points_and_repeats },
	{ "missing_keeps_its_error", case_missing_keeps_its_error },
	{ "threads", case_threads },
	{ "child", case_child },
	{ "child_fallback", case_child_fallback },
	{ "child_dll_missing", case_child_dll_missing },
	{ "child_other_machine", case_child_other_machine },
	{ "children_off", case_children_off },
	{ "launcher", case_launcher },
	{ "disabled", case_disabled },
	{ "policy_off", case_policy_off },
	{ "exports", case_exports },
};

int wmain(int argc, wchar_t **argv);
int wmain(int argc, wchar_t **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	GetModuleFileNameW(NULL, self_path, HARNESS_PATH_MAX);
	if (argc == 3 && wcscmp(argv[1], L"exit-with") == 0)
		return _wtoi(argv[2]);
	if (argc == 4 && wcscmp(argv[1], L"child-expect") == 0)
		return mode_child_expect(argv[2], argv[3]);
	if (argc == 4 && wcscmp(argv[1], L"spawn") == 0)
		return mode_spawn(argv[2], argv[3]);
	if (argc >= 3 && wcscmp(argv[1], L"spawn-probe") == 0) {
		harness_path_from_environment("NVI_RUNTIME", runtime_path);
		harness_path_from_environment("NVI_PROBE", probe_path);
		return mode_spawn_probe(argc, argv);
	}
	if (argc != 2) {
		fprintf(stderr, "usage: test_runtime CASE\n");
		return 2;
	}
	harness_path_from_environment("NVI_RUNTIME", runtime_path);
	harness_path_from_environment("NVI_LAUNCHER", launcher_path);
	harness_path_from_environment("NVI_STANDIN_NVRTC", standin_nvrtc_path);
	harness_path_from_environment("NVI_STANDIN_BUILTINS", standin_builtins_path);
	harness_path_from_environment("NVI_PROBE", probe_path);
	char name[64];
	WideCharToMultiByte(CP_UTF8, 0, argv[1], -1, name, sizeof(name), NULL, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, name) != 0)
			continue;
		struct tree tree;
		make_tree(name, &tree);
		cases[i].run(&tree);
		return harness_result();
	}
	fprintf(stderr, "test_runtime: no case '%s'\n", name);
	return 2;
}
