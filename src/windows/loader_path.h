/* What the Windows loader itself says about a load's search: the folders it searches for a name,
   and for the imports of every file that load maps, and the file it finds there. A load has one
   search path, made from its flags, SetDefaultDllDirectories, AddDllDirectory and SetDllDirectory,
   which ntdll's LdrGetDllPath gives (kernelbase's LoadLibraryExW asks it too). The runtime asks it
   rather than model Windows' search order; where ntdll lacks it, the answers are "unknown". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <windows.h>

/* At start-up: finds LdrGetDllPath and RtlReleasePath in ntdll. */
void loader_path_start(HMODULE ntdll);
/* True when the loader can be asked. */
bool loader_path_known(void);

/* The search path (';'-separated folders) of a load of name, a bare name or a full path, with
   flags: malloc'd, or NULL when it is unknown. Keeps GetLastError. */
wchar_t *loader_path_for(const wchar_t *name, DWORD flags);

/* The first file called name in the folders of search_path, as a full path in found (count
   characters): where that load finds name when no module of that name is loaded. False when none
   holds it, or search_path is NULL. Keeps GetLastError. */
bool loader_path_find(const wchar_t *search_path, const wchar_t *name, wchar_t *found, size_t count);

/* True when path lies in Windows' own folder (GetSystemWindowsDirectory), whose DLLs import no
   NVIDIA DLL but the driver's. */
bool loader_path_is_windows_own(const wchar_t *path);
