/* A test host that loads DLLs as an application does that hardens its DLL search before anything
 * else, as some applications embedding Python or CUDA libraries do (host.h has its steps):
 *   - first of all SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS): from then on every
 *     load without search flags, its own and those of every DLL in the process (NVRTC's
 *     LoadLibraryW of its builtins too), searches the application's folder, the folders added with
 *     AddDllDirectory and System32 only;
 *   - a DLL by full path with a plain LoadLibraryW(path), so its imports are searched for in those
 *     folders, not in the DLL's own one;
 *   - a DLL by bare name with LoadLibraryW(name);
 *   - a folder with AddDllDirectory. */
#include "host.h"

#include <stdio.h>

static void harden(void)
{
	if (!SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS))
		printf("SetDefaultDllDirectories: error %lu\n", GetLastError());
}

static HMODULE load(const wchar_t *path_or_name) { return LoadLibraryW(path_or_name); }

int wmain(int argc, wchar_t **argv);
int wmain(int argc, wchar_t **argv)
{
	static const struct host embedder = { "an embedder that calls SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS) first",
					       harden, load, load };
	return host_run(&embedder, argc, argv);
}
