/* A stand-in for an NVIDIA DLL that delay-loads nvJitLink_120_0.dll (an import library made with
   dlltool --output-delaylib): the load by path succeeds without it, and the first call of its
   function runs the delay-load helper linked into this DLL, which asks for the DLL by bare name
   with LoadLibraryA through this DLL's own import table, as MSVC's helper does with LoadLibraryExA.
   When no DLL of that name can be loaded, the failure hook below hands the helper this DLL itself,
   whose export of the same name says -1, instead of the exception the helper would raise. */
#include <windows.h>

#include <delayimp.h>

__declspec(dllimport) int standin_jitlink_value(void);

/* Exported as standin_jitlink_value (standin_delayed.def). */
int standin_delayed_marker(void);
int standin_delayed_marker(void) { return -1; }

static FARPROC WINAPI delay_load_failed(unsigned reason, PDelayLoadInfo info)
{
	(void)info;
	HMODULE self = NULL;
	if (reason != dliFailLoadLib ||
	    !GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				(LPCWSTR)(void *)delay_load_failed, &self))
		return NULL;
	return (FARPROC)(void *)self;
}

PfnDliHook __pfnDliFailureHook2 = delay_load_failed;

int standin_value(void);
int standin_value(void) { return standin_jitlink_value(); }
