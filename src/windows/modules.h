/* The Windows front's origin service: which modules are NVIDIA's, the folder each was loaded from,
   registering it (origins.c), and the deferred AddDllDirectory. The hooks (hooks.c) and the
   start-up (runtime.c) both stand on it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <windows.h>

/* At start-up, under the loader lock: the runtime's own module, the loader lock's address (from
   ntdll) and AddDllDirectory. */
void modules_start(HMODULE self, HMODULE ntdll);
/* Once the hooks are in place (not under NVINTERPOSE_DISABLE=1, nor when start-up found no loader
   functions to stand in for). */
void modules_set_active(void);
bool modules_active(void);

/* nvinterpose.dll itself: never patched, and the DLL that children get. */
HMODULE modules_self(void);

/* The family of the DLL a LoadLibrary name asks for (a path or a bare name; any case; ".dll"
   added when the name has no dot, as the loader adds it), with that file name in UTF-8 in base.
   -1 when it is not an NVIDIA library. */
int modules_family_of_name(const wchar_t *name, char *base, size_t size);

/* The folder part of a path of length characters, in UTF-8 with '\' separators ("C:\" for a file
   at the root). False when there is none or it does not fit. */
bool modules_folder_of_path(const wchar_t *path, size_t length, char *folder, size_t size);

/* The folder of a loaded module's path as loaded (what the loader's "DLL load folder" means), in
   UTF-8 with '\' separators. False when the module is gone or the path does not fit. */
bool modules_folder(HMODULE module, char *folder, size_t size);

/* Registers the origin of a module loaded as path (length characters), or of a loaded module,
   when it is an NVIDIA library. Safe under the loader lock. */
void modules_register_path(const wchar_t *path, size_t length);
void modules_register(HMODULE module);

/* Work kept out of the loader lock, done when the calling thread does not hold it: AddDllDirectory
   for every origin registered since the last call (unless NVINTERPOSE_ADD_DLL_DIRECTORY=0). */
void modules_add_directories(void);
