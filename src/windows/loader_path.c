/* The loader's own search path for a load (loader_path.h). */
#include "loader_path.h"

#include <stdlib.h>
#include <wchar.h>

typedef LONG(NTAPI *get_dll_path_function)(PCWSTR module, ULONG flags, PWSTR *path, PWSTR *unknown);
typedef VOID(NTAPI *release_path_function)(PWSTR path);

static get_dll_path_function get_dll_path;
static release_path_function release_path;
static wchar_t windows_folder[MAX_PATH + 1];
static size_t windows_folder_length;

void loader_path_start(HMODULE ntdll)
{
	get_dll_path = (get_dll_path_function)(void (*)(void))GetProcAddress(ntdll, "LdrGetDllPath");
	release_path = (release_path_function)(void (*)(void))GetProcAddress(ntdll, "RtlReleasePath");
	if (!release_path)
		get_dll_path = NULL;
	UINT n = GetSystemWindowsDirectoryW(windows_folder, MAX_PATH);
	windows_folder_length = n > 0 && n < MAX_PATH ? n : 0;
}

bool loader_path_known(void) { return get_dll_path != NULL; }

/* The flags that choose the search: LOAD_WITH_ALTERED_SEARCH_PATH and the LOAD_LIBRARY_SEARCH_* and
   SAFE_CURRENT_DIRS ones, as kernelbase's LoadLibraryExW passes them on. */
#define SEARCH_FLAGS_MASK 0x7f08

wchar_t *loader_path_for(const wchar_t *name, DWORD flags)
{
	DWORD saved = GetLastError();
	PWSTR path = NULL, unknown = NULL;
	wchar_t *copy = NULL;
	if (get_dll_path && get_dll_path(name, flags & SEARCH_FLAGS_MASK, &path, &unknown) >= 0 && path) {
		copy = _wcsdup(path);
		release_path(path);
	}
	SetLastError(saved);
	return copy;
}

bool loader_path_find(const wchar_t *search_path, const wchar_t *name, wchar_t *found, size_t count)
{
	if (!search_path || count > MAXDWORD)
		return false;
	DWORD saved = GetLastError();
	DWORD n = SearchPathW(search_path, name, NULL, (DWORD)count, found, NULL);
	SetLastError(saved);
	return n > 0 && n < count;
}

bool loader_path_is_windows_own(const wchar_t *path)
{
	return windows_folder_length && _wcsnicmp(path, windows_folder, windows_folder_length) == 0 &&
	       (path[windows_folder_length] == L'\\' || path[windows_folder_length] == L'/');
}
