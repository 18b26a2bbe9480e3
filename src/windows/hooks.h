/* The loader functions the runtime stands in for: LoadLibraryA/W/ExA/ExW, GetProcAddress and
   CreateProcessA/W, as exported by kernel32 (and, where it holds them, kernelbase). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct hook {
	const char *name;   /* the export's name */
	void *replacement;  /* the runtime's function */
	void *real[2];      /* the export's address in kernel32 and in kernelbase (NULL when absent) */
};

/* Finds the real functions. False when kernel32 lacks one: nothing may be patched then. Called
   once, at start-up, before any import table is touched. */
bool hooks_resolve(void);

/* The hooks, for import_table_patch. */
const struct hook *hooks_table(size_t *count);

/* The hook standing in for export name (GetProcAddress on kernel32 or kernelbase), or NULL. */
void *hooks_replacement_for(const char *name);

#include <windows.h>
/* The real LoadLibraryExW(path, NULL, flags), past the hooks: the runtime's own loads by full path. */
HMODULE hooks_load_by_path(const wchar_t *path, DWORD flags);
