/* The Windows front's start-up: DllMain, the scan of loaded modules and the loader's notifications
 * (import tables patched, origins registered through modules.c), and the functions the shared rooms
 * ask of a front (front.h).
 *
 * Under the loader lock (DllMain, the loader's notifications) the runtime does only what cannot
 * deadlock: it reads its settings, patches import tables (memory writes) and records origins (file
 * queries, no loading). Nothing here ever waits for another thread. */
#include "modules.h"

#include "config.h"
#include "front.h"
#include "hooks.h"
#include "import_table.h"
#include "inject.h"
#include "libnames.h"
#include "loader_path.h"
#include "log.h"
#include "platform.h"
#include "registry.h"
#include "report.h"
#include "utf16.h"

#include <errno.h>
#include <psapi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <winternl.h>

#define WIDE_PATH_MAX 4352
#define ENVIRONMENT_VALUE_MAX 32768

/* What the loader tells a LdrRegisterDllNotification callback about a module. */
struct dll_notification {
	ULONG flags;
	const UNICODE_STRING *full_name;
	const UNICODE_STRING *base_name;
	void *base;
	ULONG size;
};
#define DLL_NOTIFICATION_LOADED 1

/* The settings come from the process's wide environment, in UTF-8. config_read uses each value
   before it asks for the next, and reads them once, at start-up, under the loader lock. */
static const char *environment(const char *name)
{
	static wchar_t wide[ENVIRONMENT_VALUE_MAX];
	static char value[ENVIRONMENT_VALUE_MAX * 3];
	wchar_t wide_name[64];
	if (!utf16_from_utf8(name, wide_name, 64))
		return NULL;
	SetLastError(ERROR_SUCCESS);
	DWORD n = GetEnvironmentVariableW(wide_name, wide, ENVIRONMENT_VALUE_MAX);
	if ((n == 0 && GetLastError() == ERROR_ENVVAR_NOT_FOUND) || n >= ENVIRONMENT_VALUE_MAX)
		return NULL;
	if (!utf8_from_utf16(wide, value, sizeof(value))) {
		log_message(LOG_ERROR, "%s is not valid Unicode; ignored", name);
		return NULL;
	}
	return value;
}

/* The modules whose import tables stay as they are. This DLL's hooks call the real functions. The
   system's loader (ntdll, kernelbase, kernel32) has LoadLibrary functions that call one another
   through their imports, so patched they would call the hooks, which call them again. */
static HMODULE unpatched[4];

static void patch(HMODULE module)
{
	for (size_t i = 0; i < sizeof(unpatched) / sizeof(unpatched[0]); i++)
		if (module == unpatched[i])
			return;
	size_t hook_count;
	const struct hook *hooks = hooks_table(&hook_count);
	import_table_patch(module, hooks, hook_count);
}

/* A module new to the process: its import table patched before its DllMain runs, and its origin
   registered. Runs under the loader lock. */
static VOID CALLBACK on_dll_notification(ULONG reason, const struct dll_notification *data, void *context)
{
	(void)context;
	if (reason != DLL_NOTIFICATION_LOADED)
		return;
	DWORD saved = GetLastError();
	patch(data->base);
	modules_register_path(data->full_name->Buffer, data->full_name->Length / sizeof(wchar_t));
	SetLastError(saved);
}

/* Every module loaded now. The caller holds the loader lock, so none is unloaded meanwhile. */
static void scan_loaded_modules(void)
{
	DWORD needed = 0;
	HMODULE *modules = NULL;
	for (DWORD capacity = 256;; capacity = needed / sizeof(HMODULE) + 32) {
		free(modules);
		modules = malloc(capacity * sizeof(HMODULE));
		if (!modules || !EnumProcessModules(GetCurrentProcess(), modules, capacity * sizeof(HMODULE), &needed)) {
			log_message(LOG_ERROR, "the loaded modules cannot be listed (error %lu); only later loads are seen",
				    GetLastError());
			goto out;
		}
		if (needed <= capacity * sizeof(HMODULE))
			break;
	}
	for (DWORD i = 0; i < needed / sizeof(HMODULE); i++) {
		patch(modules[i]);
		modules_register(modules[i]);
	}
out:
	free(modules);
}

/* LdrLockLoaderLock / LdrUnlockLoaderLock: the scan outside DllMain holds the loader lock too. */
static LONG(NTAPI *lock_loader)(ULONG flags, ULONG *state, ULONG_PTR *cookie);
static LONG(NTAPI *unlock_loader)(ULONG flags, ULONG_PTR cookie);

static void start(HMODULE self, enum inject_restore restored, unsigned long restore_error)
{
	config_load(environment, false);
	const struct config *config = config_get();
	if (config->disabled)
		return;
	if (config->log_file[0])
		log_open_event_file(config->log_file);
	if (config->report_pid > 0)
		platform_keep_stderr(); /* the exit report's: the program's C runtime may close its own at exit */
	if (restored == INJECT_RESTORE_DONE)
		log_message(LOG_DEBUG, "loaded through the program's import table, on its main thread; the import directory is put back");
	else if (restored == INJECT_RESTORE_REFUSED)
		log_message(LOG_WARN,
			    "loaded through the program's import table, whose header could not be made writable again "
			    "(error %lu): its import directory still names nvinterpose.dll first and lies outside the "
			    "image, so the program's own LoadLibrary calls bypass the runtime",
			    restore_error);
	registry_init();

	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	modules_start(self, ntdll);
	loader_path_start(ntdll);
	/* Without the loader's search path neither the coherent rule nor a failed load's imports can be
	   judged: where the loader would take a name is not known. */
	if (!loader_path_known() && config->policy != POLICY_OFF)
		log_message(config->policy == POLICY_COHERENT ? LOG_ERROR : LOG_WARN,
			    "ntdll has no LdrGetDllPath: where the loader would find a DLL is unknown, so %s",
			    config->policy == POLICY_COHERENT ? "NVINTERPOSE_POLICY=coherent takes no copy before the loader's and "
								"behaves as fallback"
							      : "the imports of a load that failed are not looked at again");
	unpatched[0] = self;
	unpatched[1] = ntdll;
	unpatched[2] = GetModuleHandleW(L"kernelbase.dll");
	unpatched[3] = GetModuleHandleW(L"kernel32.dll");
	lock_loader = (LONG(NTAPI *)(ULONG, ULONG *, ULONG_PTR *))(void (*)(void))GetProcAddress(ntdll, "LdrLockLoaderLock");
	unlock_loader = (LONG(NTAPI *)(ULONG, ULONG_PTR))(void (*)(void))GetProcAddress(ntdll, "LdrUnlockLoaderLock");
	if (!hooks_resolve()) {
		log_message(LOG_ERROR, "kernel32 lacks a loader function; nvinterpose.dll does nothing in this process");
		return;
	}
	modules_set_active();

	/* The notification first, then the scan: a module loaded in between is seen twice, which
	   patches and registers nothing more, rather than not at all. */
	LONG(NTAPI * register_notification)(ULONG, void *, void *, void **) =
		(LONG(NTAPI *)(ULONG, void *, void *, void **))(void (*)(void))GetProcAddress(ntdll, "LdrRegisterDllNotification");
	void *cookie;
	if (!register_notification || register_notification(0, (void *)on_dll_notification, NULL, &cookie) != 0)
		log_message(LOG_WARN, "no loader notifications; modules loaded from now on keep their imports unhooked");
	scan_loaded_modules();

	/* Import slots across the process now point into this DLL: it must never be unloaded. */
	HMODULE pinned;
	if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN | GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
				(LPCWSTR)(void *)on_dll_notification, &pinned))
		log_message(LOG_WARN, "nvinterpose.dll could not pin itself (error %lu): do not FreeLibrary it",
			    GetLastError());
	log_message(LOG_DEBUG, "started in process %lu", GetCurrentProcessId());
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved);
BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
	if (reason == DLL_PROCESS_ATTACH) {
		DWORD saved = GetLastError();
		int saved_errno = errno;
		DisableThreadLibraryCalls(instance);
		/* First, whatever the settings: the loader has read the program's import table by now. */
		unsigned long restore_error;
		enum inject_restore restored = inject_restore_imports(&restore_error);
		start(instance, restored, restore_error);
		errno = saved_errno;
		SetLastError(saved);
	} else if (reason == DLL_PROCESS_DETACH && reserved && modules_active()) {
		/* The process is ending (a FreeLibrary would pass NULL, and the runtime is pinned once
		   active): the other threads are gone, and one may have held the report's lock. */
		report_at_exit(REPORT_EXIT_TRY_LOCK);
	}
	return TRUE;
}

void front_sync(void) { modules_add_directories(); }

int front_rescan(void)
{
	if (!modules_active())
		return 0;
	ULONG_PTR cookie = 0;
	if (lock_loader && unlock_loader && lock_loader(0, NULL, &cookie) == 0) {
		scan_loaded_modules();
		unlock_loader(0, cookie);
	} else {
		log_message(LOG_WARN, "nvi_rescan: the loader lock cannot be taken; nothing rescanned");
	}
	modules_add_directories();
	/* The Windows hooks retry in place; a rescan loads no dependents ahead of time. */
	return 0;
}

/* The import tables are patched at every start; there is no list of them yet. */
int front_list_patches(struct nvi_patch *patches, size_t capacity)
{
	(void)patches, (void)capacity;
	return 0;
}

/* Copies are not looked for here: the Python package uses the nvinterpose.dll already in the
   process, found by name, before it loads its own. */
const struct front_api *front_primary(void) { return NULL; }
