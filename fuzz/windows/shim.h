/* What the Windows fuzzers set for fuzz/windows/shim.c. */
#pragma once

#include "windows.h"

/* The file every CreateFileW opens (the fuzzer's input); NULL: no file. */
extern const unsigned char *shim_file;
extern size_t shim_file_size;
/* What VirtualQuery says a page's protection is. */
extern DWORD shim_page_protection;
