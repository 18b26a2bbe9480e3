/* A test host that loads DLLs exactly as CPython 3.8 and later do on Windows (host.h has its steps):
 *   - it never calls SetDefaultDllDirectories, so a plain LoadLibraryW keeps the standard search;
 *   - a DLL by full path as ctypes.CDLL/WinDLL and the import of an extension module load it:
 *     LoadLibraryExW(path, NULL, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR),
 *     so its imports are searched for in its own folder, the application's folder, the folders added
 *     with AddDllDirectory and System32, and nowhere else (not PATH);
 *   - a DLL by bare name as ctypes does: LoadLibraryExW(name, NULL, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
 *   - os.add_dll_directory(FOLDER) is AddDllDirectory(FOLDER). */
#include "host.h"

static HMODULE load_path(const wchar_t *path)
{
	return LoadLibraryExW(path, NULL, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR);
}

static HMODULE load_name(const wchar_t *name) { return LoadLibraryExW(name, NULL, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS); }

int wmain(int argc, wchar_t **argv);
int wmain(int argc, wchar_t **argv)
{
	static const struct host cpython = { "CPython 3.8+ with ctypes", NULL, load_path, load_name };
	return host_run(&cpython, argc, argv);
}
