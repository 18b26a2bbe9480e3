/* The Windows front: DllMain and start-up, the scan of loaded modules, registering origins, the
 * deferred AddDllDirectory, and the functions the shared rooms ask of a front (front.h).
 *
 * Under the loader lock (DllMain, the loader's notifications) the runtime does only what cannot
 * deadlock: it reads its settings, patches import tables (memory writes) and records origins (file
 * queries, no loading). AddDllDirectory, which takes the loader's own locks, waits for the next hook
 * or API call made outside the loader lock. Nothing here ever waits for another thread. */
#include "runtime.h"

#include "config.h"
#include "front.h"
#include "hooks.h"
#include "import_table.h"
#include "libnames.h"
#include "log.h"
#include "registry.h"
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

static HMODULE self;
static bool active;
static _Atomic size_t directories_added; /* registry entries [0, this) went to AddDllDirectory */
static DLL_DIRECTORY_COOKIE(WINAPI *add_dll_directory)(PCWSTR folder);

HMODULE runtime_module(void) { return self; }

bool runtime_active(void) { return active; }

/* PEB.LoaderLock, the critical section the loader holds around DllMain calls and notifications:
   at 0x110 in a 64-bit PEB and 0xa0 in a 32-bit one, on Windows and on Wine. Read once at start-up. */
#ifdef _WIN64
#define PEB_LOADER_LOCK_OFFSET 0x110
#else
#define PEB_LOADER_LOCK_OFFSET 0xa0
#endif
static const RTL_CRITICAL_SECTION *loader_lock;

static void find_loader_lock(HMODULE ntdll)
{
	void *(NTAPI *current_peb)(void) = (void *(NTAPI *)(void))(void (*)(void))GetProcAddress(ntdll, "RtlGetCurrentPeb");
	const unsigned char *peb = current_peb ? current_peb() : NULL;
	if (peb)
		loader_lock = *(RTL_CRITICAL_SECTION *const *)(peb + PEB_LOADER_LOCK_OFFSET);
}

/* Without the lock's address every thread is taken to hold it, and AddDllDirectory is never called
   (start-up says so): a deadlock would be worse than a folder not added. */
static bool holds_loader_lock(void)
{
	return !loader_lock || (DWORD)(ULONG_PTR)loader_lock->OwningThread == GetCurrentThreadId();
}

int runtime_family_of_name(const wchar_t *name, char *base, size_t size)
{
	if (!name || size < 8)
		return -1;
	const wchar_t *start = name;
	for (const wchar_t *s = name; *s; s++)
		if (*s == L'\\' || *s == L'/' || *s == L':')
			start = s + 1;
	/* NVIDIA's DLL names are short and ASCII: anything else is not one, without a conversion. */
	size_t n = 0;
	bool dot = false;
	for (const wchar_t *s = start; *s; s++) {
		if (*s >= 0x80 || n + 5 >= size)
			return -1;
		dot |= *s == L'.';
		base[n++] = (char)*s;
	}
	if (dot)
		base[n] = '\0';
	else
		memcpy(base + n, ".dll", 5);
	return libnames_match_windows(base, NULL);
}

/* The folder part of a path of length characters, in UTF-8 with '\' separators ("C:\" for a file
   at the root). */
static bool folder_of_path(const wchar_t *path, size_t length, char *folder, size_t size)
{
	size_t end = length;
	while (end > 0 && path[end - 1] != L'\\' && path[end - 1] != L'/')
		end--;
	if (end == 0)
		return false;
	if (end > 1 && path[end - 2] != L':')
		end--; /* drop the separator, but keep the one of a drive's root */
	if (!utf8_from_utf16_counted(path, end, folder, size))
		return false;
	for (char *s = folder; *s; s++)
		if (*s == '/')
			*s = '\\';
	return true;
}

/* Registers the folder of an NVIDIA module loaded as path (length characters). */
static void register_path(const wchar_t *path, size_t length)
{
	size_t start = length;
	while (start > 0 && path[start - 1] != L'\\' && path[start - 1] != L'/')
		start--;
	char name[256], folder[CONFIG_FOLDER_MAX];
	if (!utf8_from_utf16_counted(path + start, length - start, name, sizeof(name)))
		return;
	int family = libnames_match_windows(name, NULL);
	if (family < 0 || !folder_of_path(path, length, folder, sizeof(folder)))
		return;
	if (registry_add_origin(family, folder) == REGISTRY_ADDED) {
		log_message(LOG_INFO, "%s loaded from %s: registered", libnames[family].family, folder);
		log_event(&(struct log_event){ .event = "register", .name = name, .path = folder,
					       .family = libnames[family].family, .reason = "loaded" });
	}
}

bool runtime_module_folder(HMODULE module, char *folder, size_t size)
{
	wchar_t path[WIDE_PATH_MAX];
	DWORD n = GetModuleFileNameW(module, path, WIDE_PATH_MAX);
	return n > 0 && n < WIDE_PATH_MAX && folder_of_path(path, n, folder, size);
}

void runtime_register_module(HMODULE module)
{
	wchar_t path[WIDE_PATH_MAX];
	DWORD saved = GetLastError();
	DWORD n = GetModuleFileNameW(module, path, WIDE_PATH_MAX);
	if (n > 0 && n < WIDE_PATH_MAX)
		register_path(path, n);
	SetLastError(saved);
}

void runtime_sync(void)
{
	const struct config *config = config_get();
	/* The policy off observes only: the process's search stays as it is. */
	if (!active || !add_dll_directory || !config->add_dll_directory || config->policy == POLICY_OFF ||
	    holds_loader_lock())
		return;
	DWORD saved = GetLastError();
	size_t n = registry_count();
	size_t i = atomic_load_explicit(&directories_added, memory_order_acquire);
	while (i < n) {
		/* Each origin goes to AddDllDirectory once, from whichever thread claims it. */
		if (!atomic_compare_exchange_weak(&directories_added, &i, i + 1))
			continue;
		const struct registry_origin *origin = registry_at(i);
		const char *folder = origin->folder;
		wchar_t wide[WIDE_PATH_MAX];
		/* Entries are per family: NVRTC and its builtins share a folder, which goes once. */
		bool known = false;
		for (size_t k = 0; k < i && !known; k++)
			known = registry_at(k)->device == origin->device && registry_at(k)->inode == origin->inode;
		if (known) {
			i++;
			continue;
		}
		if (utf16_from_utf8(folder, wide, WIDE_PATH_MAX) && add_dll_directory(wide)) {
			log_message(LOG_INFO, "AddDllDirectory(%s)", folder);
			log_event(&(struct log_event){ .event = "add-dll-directory", .path = folder,
						       .family = libnames[origin->family].family,
						       .reason = "registered origin" });
		} else {
			log_message(LOG_WARN, "AddDllDirectory(%s) failed (error %lu)", folder, GetLastError());
		}
		i++;
	}
	SetLastError(saved);
}

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

/* The modules whose import tables stay as they are: this DLL, whose hooks call the real functions,
   and the system's loader (ntdll, kernelbase, kernel32), whose own LoadLibrary functions call one
   another through their imports: patched, they would call the hooks, which call them again. */
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
	register_path(data->full_name->Buffer, data->full_name->Length / sizeof(wchar_t));
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
		runtime_register_module(modules[i]);
	}
out:
	free(modules);
}

/* LdrLockLoaderLock / LdrUnlockLoaderLock: the scan outside DllMain holds the loader lock too. */
static LONG(NTAPI *lock_loader)(ULONG flags, ULONG *state, ULONG_PTR *cookie);
static LONG(NTAPI *unlock_loader)(ULONG flags, ULONG_PTR cookie);

static void start(void)
{
	config_load(environment, false);
	const struct config *config = config_get();
	if (config->disabled)
		return;
	if (config->log_file[0])
		log_open_event_file(config->log_file);
	if (config->policy == POLICY_COHERENT)
		log_message(LOG_WARN, "NVINTERPOSE_POLICY=coherent is not available on Windows; using fallback");
	registry_init();

	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	unpatched[0] = self;
	unpatched[1] = ntdll;
	unpatched[2] = GetModuleHandleW(L"kernelbase.dll");
	unpatched[3] = GetModuleHandleW(L"kernel32.dll");
	find_loader_lock(ntdll);
	if (!loader_lock && config->add_dll_directory)
		log_message(LOG_WARN, "the loader lock was not found; registered folders do not go to AddDllDirectory");
	add_dll_directory = (DLL_DIRECTORY_COOKIE(WINAPI *)(PCWSTR))(void (*)(void))GetProcAddress(
		GetModuleHandleW(L"kernel32.dll"), "AddDllDirectory");
	lock_loader = (LONG(NTAPI *)(ULONG, ULONG *, ULONG_PTR *))(void (*)(void))GetProcAddress(ntdll, "LdrLockLoaderLock");
	unlock_loader = (LONG(NTAPI *)(ULONG, ULONG_PTR))(void (*)(void))GetProcAddress(ntdll, "LdrUnlockLoaderLock");
	if (!hooks_resolve()) {
		log_message(LOG_ERROR, "kernel32 lacks a loader function; nvinterpose.dll does nothing in this process");
		return;
	}
	active = true;

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
	(void)reserved;
	if (reason == DLL_PROCESS_ATTACH) {
		DWORD saved = GetLastError();
		int saved_errno = errno;
		self = instance;
		DisableThreadLibraryCalls(instance);
		start();
		errno = saved_errno;
		SetLastError(saved);
	}
	return TRUE;
}

void front_sync(void) { runtime_sync(); }

int front_rescan(void)
{
	if (!active)
		return 0;
	ULONG_PTR cookie = 0;
	if (lock_loader && unlock_loader && lock_loader(0, NULL, &cookie) == 0) {
		scan_loaded_modules();
		unlock_loader(0, cookie);
	} else {
		log_message(LOG_WARN, "nvi_rescan: the loader lock cannot be taken; nothing rescanned");
	}
	runtime_sync();
	/* The Windows hooks retry in place; a rescan loads no dependents ahead of time. */
	return 0;
}
