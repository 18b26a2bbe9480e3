/* A stand-in for the NVRTC wheel's nvrtc64_130_0.dll: like the real one it has no way to find its
   builtins but the loader's search, and it asks for them by bare name (standin_nvrtc.h). */
#include "standin_nvrtc.h"

#include <windows.h>

__declspec(dllexport) unsigned long standin_load(int way, const wchar_t *name, bool keep, int *value);
__declspec(dllexport) unsigned long standin_load(int way, const wchar_t *name, bool keep, int *value)
{
	char narrow[MAX_PATH];
	if (!WideCharToMultiByte(CP_ACP, 0, name, -1, narrow, MAX_PATH, NULL, NULL))
		return GetLastError();
	HMODULE module = NULL;
	switch (way) {
	case WAY_LOAD_LIBRARY_W:
		module = LoadLibraryW(name);
		break;
	case WAY_EX_W_FROM_GET_PROC_ADDRESS: {
		HMODULE(WINAPI * load_library_ex_w)(LPCWSTR, HANDLE, DWORD) = (HMODULE(WINAPI *)(LPCWSTR, HANDLE, DWORD))(
			void (*)(void))GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryExW");
		module = load_library_ex_w(name, NULL, 0);
		break;
	}
	case WAY_EX_W_DEFAULT_DIRS:
		module = LoadLibraryExW(name, NULL, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
		break;
	case WAY_LOAD_LIBRARY_A:
		module = LoadLibraryA(narrow);
		break;
	case WAY_EX_A:
		module = LoadLibraryExA(narrow, NULL, 0);
		break;
	default:
		return ERROR_INVALID_PARAMETER;
	}
	if (!module)
		return GetLastError();
	int (*standin_value)(void) = (int (*)(void))(void (*)(void))GetProcAddress(module, "standin_value");
	*value = standin_value ? standin_value() : -1;
	if (!keep)
		FreeLibrary(module);
	return 0;
}
