/* Loading a DLL into another process: the launcher's way in, and the way children get the runtime. */
#pragma once

#include <stdbool.h>
#include <windows.h>

/* Loads dll (a full path) into process, which may still be suspended at its start, with a thread
   of its own that runs LoadLibraryW, and waits for that thread up to timeout_ms. Returns 0 when
   the DLL is loaded, else a Win32 error code: the call that failed, ERROR_MOD_NOT_FOUND when
   LoadLibraryW returned NULL in the process, WAIT_TIMEOUT, or ERROR_NOT_SUPPORTED when process is
   not of this process's architecture (a 32-bit program under a 64-bit runtime). */
DWORD inject_library(HANDLE process, const wchar_t *dll, DWORD timeout_ms);
