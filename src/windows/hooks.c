/* The hooks: LoadLibraryA/W/ExA/ExW, GetProcAddress and CreateProcessA/W.
 *
 * A LoadLibrary call for a name that is not NVIDIA's goes to the loader unchanged. For an NVIDIA
 * name the loader still goes first, with the caller's own name and flags:
 *   - when it succeeds (a first load or a repeated one) the module's origin is registered;
 *   - when it cannot find a bare name (ERROR_MOD_NOT_FOUND; ERROR_BAD_EXE_FORMAT for a foreign copy
 *     on the path), the runtime looks in the folder of the NVIDIA library that asked, the
 *     registered origins, their wheel siblings and NVINTERPOSE_PATH (search.c), and loads the first
 *     DLL of this machine it finds there by full path;
 *   - when that fails too, the caller gets NULL and the loader's own error code.
 * Windows' loader does not look at who calls it (no $ORIGIN, no caller's RUNPATH), so the hooks
 * may be plain C functions that call the real ones. */
#include "hooks.h"

#include "config.h"
#include "inject.h"
#include "libnames.h"
#include "log.h"
#include "pe_file.h"
#include "policy.h"
#include "report.h"
#include "modules.h"
#include "search.h"
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

static bool is_bare_name(const wchar_t *name) { return !wcspbrk(name, L"\\/:"); }

struct candidate {
	wchar_t path[WIDE_PATH_MAX];
	char path_utf8[WIDE_PATH_MAX];
	enum search_step step;
	bool found;
};

static bool consider_candidate(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	struct candidate *candidate = arg;
	(void)loader_step;
	if (strlen(path) >= sizeof(candidate->path_utf8) || !utf16_from_utf8(path, candidate->path, WIDE_PATH_MAX))
		return false;
	if (!pe_file_is_loadable_dll(candidate->path)) {
		log_message(LOG_INFO, "%s is not a DLL this process can load; skipped", path);
		return false;
	}
	strcpy(candidate->path_utf8, path);
	candidate->step = step;
	candidate->found = true;
	return true;
}

/* The caller's flags for the load by full path, with the candidate's own folder searched for its
   imports (the loader's "DLL load folder", the nearest Windows has to $ORIGIN). */
static DWORD flags_for_full_path(DWORD flags)
{
	return flags & SEARCH_FLAGS ? flags | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR : flags | LOAD_WITH_ALTERED_SEARCH_PATH;
}

/* The NVIDIA library that asked, when the caller is one: its folder goes first. */
static bool nvidia_caller(const void *address, char *folder, size_t size, char *name, size_t name_size)
{
	HMODULE module;
	if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				(LPCWSTR)address, &module))
		return false;
	wchar_t path[WIDE_PATH_MAX];
	DWORD n = GetModuleFileNameW(module, path, WIDE_PATH_MAX);
	char base[96];
	if (n == 0 || n >= WIDE_PATH_MAX || !utf8_from_utf16(path, name, name_size))
		return false;
	return modules_family_of_name(path, base, sizeof(base)) >= 0 && modules_folder(module, folder, size);
}

/* The loader did not find a bare name the caller asked for: the runtime's places may hold it. The
   policy decides, on Windows as on Linux. Windows' loader does not look at who calls it, so the
   coherent policy has nothing to put before the loader's choice, and behaves as fallback. */
static HMODULE load_from_origins(const struct load_call *call, int family, const char *name)
{
	const struct config *config = config_get();
	struct policy_question question = {
		.policy = config->policy == POLICY_COHERENT ? POLICY_FALLBACK : config->policy,
		.secure = config->secure,
		.driver = libnames_is_driver(family),
		.request = POLICY_DLOPEN,
		.loader = POLICY_LOADER_MISSES,
	};
	struct policy_answer answer = policy_decide(&question);
	if (answer.action != POLICY_ASK_FALLBACK)
		return NULL;
	char caller_folder[CONFIG_FOLDER_MAX], caller_name[WIDE_PATH_MAX] = "";
	bool caller_is_nvidia = nvidia_caller(call->caller, caller_folder, sizeof(caller_folder), caller_name,
					      sizeof(caller_name));
	struct search_request request = {
		.name = name,
		.caller_folder = caller_is_nvidia ? caller_folder : NULL,
	};
	struct candidate *candidate = calloc(1, sizeof(*candidate));
	HMODULE module = NULL;
	if (!candidate)
		return NULL;
	search_candidates(&request, consider_candidate, candidate);
	question.fallback = candidate->found ? POLICY_YES : POLICY_NO;
	question.fallback_step = candidate->step;
	answer = policy_decide(&question);
	if (answer.action != POLICY_LOAD_FALLBACK)
		goto out;
	module = REAL(HOOK_LOAD_LIBRARY_EX_W, HMODULE(WINAPI *)(LPCWSTR, HANDLE, DWORD))(candidate->path, NULL,
										      flags_for_full_path(call->flags));
	const char *who = caller_is_nvidia ? caller_name : "the application";
	if (module) {
		report_outcome(&(struct outcome){ .kind = OUTCOME_LOADED, .request = POLICY_DLOPEN, .answer = &answer, .name = name,
						  .family = family, .caller = caller_name[0] ? caller_name : NULL, /* whoever asked */
						  .caller_words = who, .path = candidate->path_utf8 });
		modules_register(module);
		modules_add_directories();
	} else {
		log_message(LOG_WARN, "%s for %s: %s did not load (error %lu)", name, who, candidate->path_utf8, GetLastError());
	}
out:
	free(candidate);
	return module;
}

static HMODULE load(const struct load_call *call)
{
	char name[96];
	int family = modules_family_of_name(call->wide, name, sizeof(name));
	if (family < 0 || !modules_active() || call->file || (call->flags & DATA_LOAD_FLAGS))
		return call_loader(call);

	modules_add_directories(); /* origins registered under the loader lock reach AddDllDirectory before this search */
	HMODULE module = call_loader(call);
	DWORD error = GetLastError();
	if (module) {
		modules_register(module);
		modules_add_directories();
	} else if (is_bare_name(call->wide) && (error == ERROR_MOD_NOT_FOUND || error == ERROR_BAD_EXE_FORMAT)) {
		module = load_from_origins(call, family, name);
	}
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
