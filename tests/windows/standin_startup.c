/* A DLL a probe program imports (its name is not NVIDIA's): its DllMain records what the program's
   static DLL initialization saw, so that the probe can tell whether the runtime came in during the
   loader's own start-up on the main thread (its import table) or later on a thread of its own. */
#define STANDIN_STARTUP_BUILD
#include "standin_startup.h"

#include <windows.h>

static struct standin_startup seen;

const struct standin_startup *standin_startup_report(void) { return &seen; }

static bool inside(const void *address, HMODULE module)
{
	HMODULE holder = NULL;
	return module && GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
					    (LPCWSTR)address, &holder) && holder == module;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved);
BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
	(void)instance;
	(void)reserved;
	if (reason == DLL_PROCESS_ATTACH) {
		HMODULE runtime = GetModuleHandleW(L"nvinterpose.dll");
		seen.thread = GetCurrentThreadId();
		seen.runtime_loaded = runtime != NULL;
		/* LoadLibraryW here is read from this DLL's import slot (a dllimport declaration). */
		seen.hooks_in_place = inside((const void *)LoadLibraryW, runtime);
	} else if (reason == DLL_THREAD_ATTACH) {
		seen.threads_attached++;
	}
	return TRUE;
}
