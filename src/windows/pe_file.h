/* Whether a file on disk is a DLL this process can load, from its headers alone. */
#pragma once

#include <stdbool.h>
#include <wchar.h>

/* True when path (UTF-16) is a PE image with the DLL flag for this process's machine (x64 for an
   x64 process). Reads the first page; a device, a pipe or a folder is refused without a read. */
bool pe_file_is_loadable_dll(const wchar_t *path);
