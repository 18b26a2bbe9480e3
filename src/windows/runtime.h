/* The Windows front's start-up, registering and deferred work (runtime.c), for its hooks (hooks.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <windows.h>

/* nvinterpose.dll itself: never patched, and the DLL that children get. */
HMODULE runtime_module(void);

/* The family of the DLL a LoadLibrary name asks for (a path or a bare name; any case; ".dll"
   added when the name has no dot, as the loader adds it), with that file name in UTF-8 in base.
   -1 when it is not an NVIDIA library. */
int runtime_family_of_name(const wchar_t *name, char *base, size_t size);

/* The folder of a loaded module's path as loaded (what the loader's "DLL load folder" means), in
   UTF-8 with '\' separators. False when the module is gone or the path does not fit. */
bool runtime_module_folder(HMODULE module, char *folder, size_t size);

/* Registers the origin of a loaded module when it is an NVIDIA library. Safe under the loader lock. */
void runtime_register_module(HMODULE module);

/* Work kept out of the loader lock, done when the calling thread does not hold it: AddDllDirectory
   for every origin registered since the last call (unless NVINTERPOSE_ADD_DLL_DIRECTORY=0). */
void runtime_sync(void);

/* True once start-up has put the hooks in place: not under NVINTERPOSE_DISABLE=1, nor when
   start-up found no loader functions to stand in for. */
bool runtime_active(void);
