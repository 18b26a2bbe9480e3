/* The stand-in NVRTC's one function, for the test program that loads it. */
#pragma once

#include <stdbool.h>
#include <wchar.h>

/* How the stand-in asks for a dependent by bare name. */
enum standin_way {
	WAY_LOAD_LIBRARY_W,          /* LoadLibraryW, through its import table */
	WAY_EX_W_FROM_GET_PROC_ADDRESS, /* LoadLibraryExW(name, NULL, 0) through a GetProcAddress pointer */
	WAY_EX_W_DEFAULT_DIRS,       /* LoadLibraryExW(name, NULL, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS) */
	WAY_LOAD_LIBRARY_A,          /* LoadLibraryA */
	WAY_EX_A,                    /* LoadLibraryExA(name, NULL, 0) */
	WAY_COUNT
};

/* Loads name the given way and calls its standin_value into *value. Returns 0, or the loader's
   GetLastError() when the load failed. The module is freed again unless keep is set. */
typedef unsigned long (*standin_load_function)(int way, const wchar_t *name, bool keep, int *value);
