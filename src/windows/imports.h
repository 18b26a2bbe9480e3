/* The files a load maps, walked through their import tables. Windows binds an import by name: a
   module of that name already loaded, else the first file of that name in the load's search path
   (loader_path.h). So the NVIDIA DLLs among the imports that the process lacks and the search path
   does not hold are decided one by one (decide.h), and where the policy names a copy, the runtime
   loads it first by full path, leaves first: the load then binds it as the loader's own. Delay-load
   imports are not walked: the DLL's own helper asks for them later by bare name, through the hooks.
   Not under the loader lock: it reads files, loads DLLs and logs. */
#pragma once

#include <stdbool.h>
#include <windows.h>

/* What a walk loaded, held by the runtime until the load it was for is over. */
struct imports_walk;

/* The walk of a load with flags whose first file is file (a full path), in the load's search path
   (the loader's, loader_path_for; NULL when unknown: then only loaded modules and the runtime's
   places are known). Under coherent it runs before the load of an NVIDIA file; otherwise after a
   load that failed with ERROR_MOD_NOT_FOUND (loader_error), once. Returns the walk, or NULL when
   it loaded nothing (or memory was short): the caller retries its load only when it loaded
   something. */
struct imports_walk *imports_walk(const wchar_t *file, const wchar_t *search_path, DWORD flags, DWORD loader_error);
/* Releases the runtime's own references to what the walk loaded: the loader keeps what the load
   bound, and unloads the rest. */
void imports_release(struct imports_walk *walk);

/* A copy the runtime chose, loaded by full path with the caller's flags made to search the copy's
   own folder for its imports, its NVIDIA imports seen to as a load's are (first under coherent,
   else after the load fails, once). The module, or NULL with the loader's GetLastError(). */
HMODULE imports_load_copy(const wchar_t *copy, DWORD caller_flags);

/* The caller's flags for a load by full path of a copy: its own folder searched for its imports
   (the loader's "DLL load folder", the nearest Windows has to $ORIGIN). */
DWORD imports_flags_for_full_path(DWORD flags);
