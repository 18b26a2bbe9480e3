/* A remote thread whose start routine is LoadLibraryW and whose argument is the DLL's path, written
   into the process. kernel32 lies at the same address in every process of a session (it is
   relocated once per boot), so this process's LoadLibraryW is the other process's too. In a
   process created suspended the thread runs the process's own initialization first (its imports
   and their DllMain), then loads the DLL, before the program's entry point. */
#include "inject.h"

#include <psapi.h>
#include <wchar.h>

/* Whether process has a module loaded from path: the thread's exit code holds only the low half of
   the HMODULE, which is zero for a module at a multiple of 4 GiB. */
static bool has_module(HANDLE process, const wchar_t *path)
{
	HMODULE modules[1024];
	DWORD needed = 0;
	if (!EnumProcessModulesEx(process, modules, sizeof(modules), &needed, LIST_MODULES_ALL))
		return false;
	for (DWORD i = 0; i < needed / sizeof(HMODULE) && i < 1024; i++) {
		wchar_t name[MAX_PATH * 2];
		if (GetModuleFileNameExW(process, modules[i], name, MAX_PATH * 2) && _wcsicmp(name, path) == 0)
			return true;
	}
	return false;
}

static bool same_architecture(HANDLE process)
{
	BOOL self_wow64 = FALSE, other_wow64 = FALSE;
	if (!IsWow64Process(GetCurrentProcess(), &self_wow64) || !IsWow64Process(process, &other_wow64))
		return true; /* cannot tell: let LoadLibraryW decide */
	return self_wow64 == other_wow64;
}

DWORD inject_library(HANDLE process, const wchar_t *dll, DWORD timeout_ms)
{
	if (!same_architecture(process))
		return ERROR_NOT_SUPPORTED;
	LPTHREAD_START_ROUTINE load_library =
		(LPTHREAD_START_ROUTINE)(void (*)(void))GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryW");
	if (!load_library)
		return GetLastError();
	size_t bytes = (wcslen(dll) + 1) * sizeof(wchar_t);
	void *remote = VirtualAllocEx(process, NULL, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
	if (!remote)
		return GetLastError();
	DWORD result = 0;
	HANDLE thread = NULL;
	if (!WriteProcessMemory(process, remote, dll, bytes, NULL) ||
	    !(thread = CreateRemoteThread(process, NULL, 0, load_library, remote, 0, NULL))) {
		result = GetLastError();
		goto out;
	}
	DWORD waited = WaitForSingleObject(thread, timeout_ms);
	DWORD module = 0; /* the low half of the HMODULE: zero only when LoadLibraryW failed */
	if (waited != WAIT_OBJECT_0)
		result = waited == WAIT_TIMEOUT ? WAIT_TIMEOUT : GetLastError();
	else if (!GetExitCodeThread(thread, &module))
		result = GetLastError();
	else if (module == 0 && !has_module(process, dll))
		result = ERROR_MOD_NOT_FOUND;
out:
	if (thread)
		CloseHandle(thread);
	/* A thread still running reads the path: leave the page to it. */
	if (result != WAIT_TIMEOUT)
		VirtualFreeEx(process, remote, 0, MEM_RELEASE);
	return result;
}
