/* The origin service of the Windows front.
 *
 * Under the loader lock (DllMain, the loader's notifications) it does only what cannot deadlock:
 * records origins (file queries, no loading). AddDllDirectory, which takes the loader's own locks,
 * waits for the next hook or API call made outside the loader lock. Nothing here ever waits for
 * another thread. */
#include "modules.h"

#include "config.h"
#include "libnames.h"
#include "log.h"
#include "origins.h"
#include "registry.h"
#include "utf16.h"

#include <stdatomic.h>
#include <string.h>

#define WIDE_PATH_MAX 4352

static HMODULE self;
static bool active;
static _Atomic size_t directories_added; /* registry entries [0, this) went to AddDllDirectory */
static DLL_DIRECTORY_COOKIE(WINAPI *add_dll_directory)(PCWSTR folder);

HMODULE modules_self(void) { return self; }

void modules_set_active(void) { active = true; }

bool modules_active(void) { return active; }

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

void modules_start(HMODULE module, HMODULE ntdll)
{
	self = module;
	find_loader_lock(ntdll);
	if (!loader_lock && config_get()->add_dll_directory)
		log_message(LOG_WARN, "the loader lock was not found; registered folders do not go to AddDllDirectory");
	add_dll_directory = (DLL_DIRECTORY_COOKIE(WINAPI *)(PCWSTR))(void (*)(void))GetProcAddress(
		GetModuleHandleW(L"kernel32.dll"), "AddDllDirectory");
}

int modules_family_of_name(const wchar_t *name, char *base, size_t size)
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

bool modules_folder_of_path(const wchar_t *path, size_t length, char *folder, size_t size)
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

void modules_register_path(const wchar_t *path, size_t length)
{
	size_t start = length;
	while (start > 0 && path[start - 1] != L'\\' && path[start - 1] != L'/')
		start--;
	char name[256], folder[CONFIG_FOLDER_MAX], file[CONFIG_FOLDER_MAX + 256];
	if (!utf8_from_utf16_counted(path + start, length - start, name, sizeof(name)))
		return;
	int family = libnames_match_windows(name, NULL);
	if (family < 0 || !modules_folder_of_path(path, length, folder, sizeof(folder)) ||
	    !utf8_from_utf16_counted(path, length, file, sizeof(file)))
		return;
	/* The loader's notifications and the module list say what loaded, not who asked. */
	origins_register(&(struct origin_load){ .family = family, .folder = folder, .path = file, .name = name,
						.reason = "loaded; the request was not seen (a loader notification)" });
}

bool modules_folder(HMODULE module, char *folder, size_t size)
{
	wchar_t path[WIDE_PATH_MAX];
	DWORD n = GetModuleFileNameW(module, path, WIDE_PATH_MAX);
	return n > 0 && n < WIDE_PATH_MAX && modules_folder_of_path(path, n, folder, size);
}

void modules_register(HMODULE module)
{
	wchar_t path[WIDE_PATH_MAX];
	DWORD saved = GetLastError();
	DWORD n = GetModuleFileNameW(module, path, WIDE_PATH_MAX);
	if (n > 0 && n < WIDE_PATH_MAX)
		modules_register_path(path, n);
	SetLastError(saved);
}

void modules_add_directories(void)
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
			log_event(&(struct log_event){ .event = "add-dll-directory", .folder = folder,
						       .family = libnames[origin->family].family,
						       .policy = config_policy_name(config->policy), .reason = "registered origin" });
		} else {
			log_message(LOG_WARN, "AddDllDirectory(%s) failed (error %lu)", folder, GetLastError());
		}
		i++;
	}
	SetLastError(saved);
}

