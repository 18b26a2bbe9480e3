/* The hooks: LoadLibraryA/W/ExA/ExW, GetProcAddress and CreateProcessA/W.
 *
 * A LoadLibrary call goes to the loader first, with the caller's own name and flags, unless the
 * coherent policy decides an NVIDIA module's bare NVIDIA name before it (below). Then:
 *   - when it succeeds (a first load or a repeated one) an NVIDIA module's origin is registered;
 *   - when it fails with ERROR_MOD_NOT_FOUND, whatever the name, the files the load would map (the
 *     file named, or the one the loader's search path holds for a bare name) are walked through
 *     their import tables, the NVIDIA DLLs they miss are loaded from the runtime's places, leaves
 *     first (imports.c), and the call is made once more; the runtime's own references go after;
 *   - when it still cannot load a bare NVIDIA name (ERROR_MOD_NOT_FOUND; ERROR_BAD_EXE_FORMAT for a
 *     foreign copy on the path), the policy (decide.c) looks in the folder of the NVIDIA module
 *     that asked, the registered origins, their wheel siblings and NVINTERPOSE_PATH, and the first
 *     DLL of this machine there is loaded by full path, or the miss is said;
 *   - when that fails too, the caller gets NULL and the loader's own error code.
 * Under coherent, a bare NVIDIA name that an NVIDIA module asks for comes from that module's
 * folder or its wheel siblings before the loader's copy, and an NVIDIA DLL's NVIDIA imports too,
 * as on Linux; a name already loaded is used (first loaded wins). Windows' loader does not look at
 * who calls it (no $ORIGIN, no caller's RUNPATH), so the hooks may be plain C functions that call
 * the real ones. */
#include "hooks.h"

#include "config.h"
#include "decide.h"
#include "imports.h"
#include "inject.h"
#include "libnames.h"
#include "loader_path.h"
#include "log.h"
#include "modules.h"
#include "policy.h"
#include "utf16.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define WIDE_PATH_MAX 4352
/* How long a CreateProcess waits for the fallback's thread to load the runtime in the child. */
#define CHILD_INJECT_TIMEOUT_MS 30000

/* Loads that map a file without running it: nothing to register, nothing to look for. */
#define DATA_LOAD_FLAGS                                                                                            \
	(DONT_RESOLVE_DLL_REFERENCES | LOAD_LIBRARY_AS_DATAFILE | LOAD_LIBRARY_AS_DATAFILE_EXCLUSIVE |            \
	 LOAD_LIBRARY_AS_IMAGE_RESOURCE)
#define SEARCH_FLAGS                                                                                               \
	(LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_APPLICATION_DIR | LOAD_LIBRARY_SEARCH_USER_DIRS |   \
	 LOAD_LIBRARY_SEARCH_SYSTEM32 | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)

enum hook_index {
	HOOK_LOAD_LIBRARY_A,
	HOOK_LOAD_LIBRARY_W,
	HOOK_LOAD_LIBRARY_EX_A,
	HOOK_LOAD_LIBRARY_EX_W,
	HOOK_GET_PROC_ADDRESS,
	HOOK_CREATE_PROCESS_A,
	HOOK_CREATE_PROCESS_W,
	HOOK_COUNT
};

static HMODULE WINAPI hook_load_library_a(LPCSTR name);
static HMODULE WINAPI hook_load_library_w(LPCWSTR name);
static HMODULE WINAPI hook_load_library_ex_a(LPCSTR name, HANDLE file, DWORD flags);
static HMODULE WINAPI hook_load_library_ex_w(LPCWSTR name, HANDLE file, DWORD flags);
static FARPROC WINAPI hook_get_proc_address(HMODULE module, LPCSTR name);
static BOOL WINAPI hook_create_process_a(LPCSTR application, LPSTR command_line, LPSECURITY_ATTRIBUTES process_attributes,
					 LPSECURITY_ATTRIBUTES thread_attributes, BOOL inherit_handles, DWORD flags,
					 LPVOID environment, LPCSTR directory, LPSTARTUPINFOA startup,
					 LPPROCESS_INFORMATION information);
static BOOL WINAPI hook_create_process_w(LPCWSTR application, LPWSTR command_line, LPSECURITY_ATTRIBUTES process_attributes,
					 LPSECURITY_ATTRIBUTES thread_attributes, BOOL inherit_handles, DWORD flags,
					 LPVOID environment, LPCWSTR directory, LPSTARTUPINFOW startup,
					 LPPROCESS_INFORMATION information);

static struct hook hooks[HOOK_COUNT] = {
	[HOOK_LOAD_LIBRARY_A] = { "LoadLibraryA", (void *)hook_load_library_a, { NULL, NULL } },
	[HOOK_LOAD_LIBRARY_W] = { "LoadLibraryW", (void *)hook_load_library_w, { NULL, NULL } },
	[HOOK_LOAD_LIBRARY_EX_A] = { "LoadLibraryExA", (void *)hook_load_library_ex_a, { NULL, NULL } },
	[HOOK_LOAD_LIBRARY_EX_W] = { "LoadLibraryExW", (void *)hook_load_library_ex_w, { NULL, NULL } },
	[HOOK_GET_PROC_ADDRESS] = { "GetProcAddress", (void *)hook_get_proc_address, { NULL, NULL } },
	[HOOK_CREATE_PROCESS_A] = { "CreateProcessA", (void *)hook_create_process_a, { NULL, NULL } },
	[HOOK_CREATE_PROCESS_W] = { "CreateProcessW", (void *)hook_create_process_w, { NULL, NULL } },
};

static HMODULE kernel32, kernelbase;

/* The real functions, called through kernel32's exports. */
#define REAL(index, type) ((type)hooks[index].real[0])

bool hooks_resolve(void)
{
	kernel32 = GetModuleHandleW(L"kernel32.dll");
	kernelbase = GetModuleHandleW(L"kernelbase.dll");
	if (!kernel32)
		return false;
	for (size_t i = 0; i < HOOK_COUNT; i++) {
		hooks[i].real[0] = (void *)GetProcAddress(kernel32, hooks[i].name);
		hooks[i].real[1] = kernelbase ? (void *)GetProcAddress(kernelbase, hooks[i].name) : NULL;
		if (!hooks[i].real[0])
			return false;
	}
	return true;
}

const struct hook *hooks_table(size_t *count)
{
	*count = HOOK_COUNT;
	return hooks;
}

void *hooks_replacement_for(const char *name)
{
	for (size_t i = 0; i < HOOK_COUNT; i++)
		if (strcmp(hooks[i].name, name) == 0)
			return hooks[i].replacement;
	return NULL;
}

/* ---- LoadLibrary ------------------------------------------------------------------------------ */

struct load_call {
	enum hook_index entry;
	const char *narrow;     /* the name as an A entry got it */
	const wchar_t *wide;    /* the name in UTF-16 (converted for the A entries; NULL if it could not be) */
	HANDLE file;
	DWORD flags;
	const void *caller;     /* the return address: inside the module that called */
};

static HMODULE call_loader(const struct load_call *call)
{
	switch (call->entry) {
	case HOOK_LOAD_LIBRARY_A:
		return REAL(HOOK_LOAD_LIBRARY_A, HMODULE(WINAPI *)(LPCSTR))(call->narrow);
	case HOOK_LOAD_LIBRARY_W:
		return REAL(HOOK_LOAD_LIBRARY_W, HMODULE(WINAPI *)(LPCWSTR))(call->wide);
	case HOOK_LOAD_LIBRARY_EX_A:
		return REAL(HOOK_LOAD_LIBRARY_EX_A, HMODULE(WINAPI *)(LPCSTR, HANDLE, DWORD))(call->narrow, call->file,
											   call->flags);
	default:
		return REAL(HOOK_LOAD_LIBRARY_EX_W, HMODULE(WINAPI *)(LPCWSTR, HANDLE, DWORD))(call->wide, call->file,
											    call->flags);
	}
}

HMODULE hooks_load_by_path(const wchar_t *path, DWORD flags)
{
	return REAL(HOOK_LOAD_LIBRARY_EX_W, HMODULE(WINAPI *)(LPCWSTR, HANDLE, DWORD))(path, NULL, flags);
}

static bool is_bare_name(const wchar_t *name) { return !wcspbrk(name, L"\\/:"); }

/* The module that called LoadLibrary, as the asker of a bare name: its path, and its folder when
   it is an NVIDIA module (its folder goes first). */
struct asker {
	char path[WIDE_PATH_MAX * 3];
	char folder[CONFIG_FOLDER_MAX];
	bool nvidia;
};

static void find_asker(const void *address, struct asker *asker)
{
	HMODULE module;
	wchar_t path[WIDE_PATH_MAX];
	char base[96];
	asker->path[0] = '\0';
	asker->nvidia = false;
	if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				(LPCWSTR)address, &module))
		return;
	DWORD n = GetModuleFileNameW(module, path, WIDE_PATH_MAX);
	if (n == 0 || n >= WIDE_PATH_MAX || !utf8_from_utf16(path, asker->path, sizeof(asker->path)))
		return;
	asker->nvidia = modules_family_of_name(path, base, sizeof(base)) >= 0 && modules_folder(module, asker->folder, sizeof(asker->folder));
}

/* One bare NVIDIA name's question, for decide.h. */
struct name_question {
	struct decide_request request;
	struct asker asker;
	wchar_t wide_name[96];
};

static void ask_about(struct name_question *question, const struct load_call *call, int family, const char *name,
		      const wchar_t *search_path, DWORD loader_error)
{
	find_asker(call->caller, &question->asker);
	utf16_from_utf8(name, question->wide_name, 96); /* the base name as matched, ".dll" added where the loader adds it */
	question->request = (struct decide_request){
		.name = name, .wide_name = question->wide_name, .family = family, .request = POLICY_DLOPEN,
		.asker = question->asker.path[0] ? question->asker.path : NULL, /* whoever asked */
		.asker_words = question->asker.nvidia ? NULL : "the application",
		.asker_folder = question->asker.nvidia ? question->asker.folder : NULL,
		.search_path = search_path, .loader_error = loader_error,
	};
}

/* Carries out a decision for a bare name: the copy loaded, or the miss said. NULL when the call is
   the loader's (it then goes, or went, to the loader as it is). */
static HMODULE carry_out(const struct load_call *call, const struct decision *decision)
{
	HMODULE module = NULL;
	switch (decision->answer.action) {
	case POLICY_LOAD_OWN:
	case POLICY_LOAD_FALLBACK:
		if ((module = imports_load_copy(decision->copy, call->flags))) {
			decide_report_loaded(decision);
			modules_register(module);
			modules_add_directories();
		} else {
			decide_report_not_loaded(decision, GetLastError());
		}
		break;
	case POLICY_USE_LOADED: decide_check_mixed_origin(decision, GetModuleHandleW(decision->request->wide_name)); break;
	default:
		if (decision->answer.miss)
			decide_report_miss(decision);
	}
	return module;
}

/* A call on its way: the loader's search path for it, asked once, when first needed (a load the
   loader serves never asks). */
struct route {
	const struct load_call *call;
	int family;
	bool searched;
	wchar_t *search_path;
};

static const wchar_t *search_path_of(struct route *route)
{
	if (!route->searched)
		route->search_path = loader_path_for(route->call->wide, route->call->flags);
	route->searched = true;
	return route->search_path;
}

/* The file a load maps first: the file named (".dll" added to a name without an extension, as
   the loader adds it), or for a bare name the first of that name in the load's search path. */
static bool first_file(struct route *route, wchar_t *file)
{
	wchar_t name[WIDE_PATH_MAX];
	const wchar_t *wide = route->call->wide, *base = wide;
	for (const wchar_t *s = wide; *s; s++)
		if (*s == L'\\' || *s == L'/' || *s == L':')
			base = s + 1;
	if (_snwprintf(name, WIDE_PATH_MAX, wcschr(base, L'.') ? L"%ls" : L"%ls.dll", wide) >= WIDE_PATH_MAX)
		return false;
	if (is_bare_name(wide))
		return loader_path_find(search_path_of(route), name, file, WIDE_PATH_MAX);
	DWORD n = GetFullPathNameW(name, WIDE_PATH_MAX, file, NULL);
	return n > 0 && n < WIDE_PATH_MAX;
}

/* The loader's call, with the imports of its first file seen to. Under coherent they are walked
   before it, for an NVIDIA file. Otherwise they are walked after it failed with
   ERROR_MOD_NOT_FOUND, and the call is made once more when the walk loaded something. *error is
   the first call's error. */
static HMODULE load_with_imports(struct route *route, DWORD *error)
{
	const struct config *config = config_get();
	bool helps = config->policy != POLICY_OFF && !config->secure;
	/* A module loaded already is what the loader returns: its imports were bound long ago. Without
	   the loader's search path no import can be told missing: no walk then, before or after. */
	bool before = helps && config->policy == POLICY_COHERENT && route->family >= 0 && !GetModuleHandleW(route->call->wide) &&
		      search_path_of(route);
	wchar_t *file = NULL;
	struct imports_walk *walk = NULL;
	if (before && (file = malloc(WIDE_PATH_MAX * sizeof(wchar_t))) && first_file(route, file))
		walk = imports_walk(file, search_path_of(route), route->call->flags, 0);
	HMODULE module = call_loader(route->call);
	*error = GetLastError();
	if (!module && helps && !before && *error == ERROR_MOD_NOT_FOUND && search_path_of(route) &&
	    (file = file ? file : malloc(WIDE_PATH_MAX * sizeof(wchar_t))) &&
	    first_file(route, file) && (walk = imports_walk(file, search_path_of(route), route->call->flags, *error)))
		module = call_loader(route->call);
	imports_release(walk);
	free(file);
	return module;
}

/* A bare NVIDIA name, decided and carried out: before the loader under coherent (loader_error 0),
   or after it failed. NULL when the call is the loader's. */
static HMODULE decide_bare_name(struct route *route, const char *name, DWORD loader_error)
{
	struct name_question *question = malloc(sizeof(*question));
	struct decision *decision = NULL;
	HMODULE module = NULL;
	if (!question)
		return NULL;
	ask_about(question, route->call, route->family, name, search_path_of(route), loader_error);
	/* Before the loader, only an NVIDIA module's own copy can come first. */
	if (loader_error || question->request.asker_folder)
		decision = decide(&question->request);
	if (decision)
		module = carry_out(route->call, decision);
	if (decision && loader_error && decision->answer.action == POLICY_USE_LOADED)
		module = call_loader(route->call); /* another thread loaded it meanwhile */
	decide_free(decision);
	free(question);
	return module;
}

static HMODULE load(const struct load_call *call)
{
	char name[96];
	if (!call->wide || !modules_active() || call->file || (call->flags & DATA_LOAD_FLAGS))
		return call_loader(call);
	struct route route = { call, modules_family_of_name(call->wide, name, sizeof(name)), false, NULL };
	bool bare_nvidia = route.family >= 0 && is_bare_name(call->wide);
	enum policy policy = config_get()->policy;
	HMODULE module = NULL;
	DWORD error = 0;
	if (route.family >= 0)
		modules_add_directories(); /* origins registered under the loader lock reach AddDllDirectory before this search */
	if (bare_nvidia && policy == POLICY_COHERENT)
		module = decide_bare_name(&route, name, 0);
	if (!module)
		module = load_with_imports(&route, &error);
	if (module && route.family >= 0) {
		modules_register(module);
		modules_add_directories();
	} else if (!module && bare_nvidia && policy != POLICY_OFF && (error == ERROR_MOD_NOT_FOUND || error == ERROR_BAD_EXE_FORMAT)) {
		module = decide_bare_name(&route, name, error);
	}
	free(route.search_path);
	SetLastError(error);
	return module;
}

/* The A entries' names as the loader reads them: in the code page of the file functions. */
static const wchar_t *widen(const char *name, wchar_t *wide, size_t count)
{
	if (!name || !MultiByteToWideChar(AreFileApisANSI() ? CP_ACP : CP_OEMCP, 0, name, -1, wide, (int)count))
		return NULL;
	return wide;
}

static HMODULE WINAPI hook_load_library_a(LPCSTR name)
{
	wchar_t wide[WIDE_PATH_MAX];
	struct load_call call = { HOOK_LOAD_LIBRARY_A, name, widen(name, wide, WIDE_PATH_MAX), NULL, 0,
				  __builtin_return_address(0) };
	return load(&call);
}

static HMODULE WINAPI hook_load_library_w(LPCWSTR name)
{
	struct load_call call = { HOOK_LOAD_LIBRARY_W, NULL, name, NULL, 0, __builtin_return_address(0) };
	return load(&call);
}

static HMODULE WINAPI hook_load_library_ex_a(LPCSTR name, HANDLE file, DWORD flags)
{
	wchar_t wide[WIDE_PATH_MAX];
	struct load_call call = { HOOK_LOAD_LIBRARY_EX_A, name, widen(name, wide, WIDE_PATH_MAX), file, flags,
				  __builtin_return_address(0) };
	return load(&call);
}

static HMODULE WINAPI hook_load_library_ex_w(LPCWSTR name, HANDLE file, DWORD flags)
{
	struct load_call call = { HOOK_LOAD_LIBRARY_EX_W, NULL, name, file, flags, __builtin_return_address(0) };
	return load(&call);
}

/* ---- GetProcAddress: a pointer fetched for a hooked function is the hook -------------------- */

static FARPROC WINAPI hook_get_proc_address(HMODULE module, LPCSTR name)
{
	if (module && !IS_INTRESOURCE(name) && (module == kernel32 || module == kernelbase)) {
		void *replacement = hooks_replacement_for(name);
		if (replacement)
			return (FARPROC)replacement;
	}
	return REAL(HOOK_GET_PROC_ADDRESS, FARPROC(WINAPI *)(HMODULE, LPCSTR))(module, name);
}

/* ---- CreateProcess: children get the runtime too ---------------------------------------------- */

/* One call of either entry: the A entry's strings and STARTUPINFOA, or the W entry's. */
struct create_call {
	enum hook_index entry;
	const void *application;
	void *command_line;
	LPSECURITY_ATTRIBUTES process_attributes, thread_attributes;
	BOOL inherit_handles;
	DWORD flags;
	LPVOID environment;
	const void *directory;
	void *startup;
	LPPROCESS_INFORMATION information;
};

static BOOL call_create_process(const struct create_call *call, DWORD flags)
{
	if (call->entry == HOOK_CREATE_PROCESS_A)
		return REAL(HOOK_CREATE_PROCESS_A, BOOL(WINAPI *)(LPCSTR, LPSTR, LPSECURITY_ATTRIBUTES, LPSECURITY_ATTRIBUTES, BOOL,
								   DWORD, LPVOID, LPCSTR, LPSTARTUPINFOA, LPPROCESS_INFORMATION))(
			call->application, call->command_line, call->process_attributes, call->thread_attributes,
			call->inherit_handles, flags, call->environment, call->directory, call->startup, call->information);
	return REAL(HOOK_CREATE_PROCESS_W, BOOL(WINAPI *)(LPCWSTR, LPWSTR, LPSECURITY_ATTRIBUTES, LPSECURITY_ATTRIBUTES, BOOL,
							   DWORD, LPVOID, LPCWSTR, LPSTARTUPINFOW, LPPROCESS_INFORMATION))(
		call->application, call->command_line, call->process_attributes, call->thread_attributes,
		call->inherit_handles, flags, call->environment, call->directory, call->startup, call->information);
}

/* A debugger's child stops at each debug event until the debugger, which is the caller waiting in
   CreateProcess, answers it: it is left alone. */
static bool injects_into(DWORD flags)
{
	return modules_active() && config_get()->inject_children && !(flags & (DEBUG_PROCESS | DEBUG_ONLY_THIS_PROCESS));
}

/* The child was created suspended: the runtime goes into its import table (or, failing that, is
   loaded by a thread of its own), then it runs (unless the caller asked for it suspended). A child
   the runtime cannot enter runs without it, and the log says why. */
static void start_child(const PROCESS_INFORMATION *child, DWORD flags, const void *attributes)
{
	DWORD saved = GetLastError();
	wchar_t dll[WIDE_PATH_MAX];
	DWORD n = GetModuleFileNameW(modules_self(), dll, WIDE_PATH_MAX);
	struct inject_report report = { INJECT_NONE, ERROR_FILENAME_EXCED_RANGE, "the runtime's own path is too long" };
	if (n > 0 && n < WIDE_PATH_MAX)
		inject_into_child(child->hProcess, dll, attributes, CHILD_INJECT_TIMEOUT_MS, &report);
	if (report.way == INJECT_IMPORT_TABLE)
		log_message(LOG_DEBUG, "child process %lu: nvinterpose.dll added to its import table", child->dwProcessId);
	else if (report.way == INJECT_REMOTE_THREAD)
		log_message(LOG_WARN,
			    "child process %lu: the runtime was loaded by a thread of its own, which also ran the child's DLL "
			    "initialization (its import table was not used: %s)",
			    child->dwProcessId, report.why);
	else
		log_message(report.error == ERROR_NOT_SUPPORTED ? LOG_INFO : LOG_WARN,
			    "child process %lu runs without the runtime: %s", child->dwProcessId, report.why);
	if (!(flags & CREATE_SUSPENDED))
		ResumeThread(child->hThread);
	SetLastError(saved);
}

static BOOL create_process(const struct create_call *call)
{
	bool inject = injects_into(call->flags);
	if (!call_create_process(call, inject ? call->flags | CREATE_SUSPENDED : call->flags))
		return FALSE;
	/* STARTUPINFOEXA and STARTUPINFOEXW hold the list at the same place. */
	if (inject)
		start_child(call->information, call->flags,
			    call->flags & EXTENDED_STARTUPINFO_PRESENT ? ((const STARTUPINFOEXW *)call->startup)->lpAttributeList
								       : NULL);
	return TRUE;
}

static BOOL WINAPI hook_create_process_a(LPCSTR application, LPSTR command_line, LPSECURITY_ATTRIBUTES process_attributes,
					 LPSECURITY_ATTRIBUTES thread_attributes, BOOL inherit_handles, DWORD flags,
					 LPVOID environment, LPCSTR directory, LPSTARTUPINFOA startup,
					 LPPROCESS_INFORMATION information)
{
	struct create_call call = { HOOK_CREATE_PROCESS_A, application, command_line, process_attributes, thread_attributes,
				    inherit_handles, flags, environment, directory, startup, information };
	return create_process(&call);
}

static BOOL WINAPI hook_create_process_w(LPCWSTR application, LPWSTR command_line, LPSECURITY_ATTRIBUTES process_attributes,
					 LPSECURITY_ATTRIBUTES thread_attributes, BOOL inherit_handles, DWORD flags,
					 LPVOID environment, LPCWSTR directory, LPSTARTUPINFOW startup,
					 LPPROCESS_INFORMATION information)
{
	struct create_call call = { HOOK_CREATE_PROCESS_W, application, command_line, process_attributes, thread_attributes,
				    inherit_handles, flags, environment, directory, startup, information };
	return create_process(&call);
}
