/* Putting nvinterpose.dll into a child process: the launcher's way in, and the way children of a
   process with the runtime get it. The parent's half (inject_into_child) and the child's half
   (inject_restore_imports, from the runtime's DllMain). Nothing here logs: the callers say what
   happened, the runtime through its log, the launcher on stderr. */
#pragma once

#include <stdbool.h>
#include <windows.h>

/* The export the child's import table names: a DLL that lacks it would stop the child. */
#define INJECT_IMPORTED_EXPORT "nvi_version"

enum inject_way {
	INJECT_NONE,          /* the child runs without the runtime; why says why */
	INJECT_IMPORT_TABLE,  /* the DLL heads the child's import table: its own loader loads it at
				 start-up, on its main thread, before the other DLLs' initialization */
	INJECT_REMOTE_THREAD, /* the fallback (why says why the import table was not used): loaded by a
				 thread of its own, which first runs the child's DLL initialization */
};

struct inject_report {
	enum inject_way way;
	unsigned long error; /* the Win32 error of the step that failed, 0 when none did */
	char why[400];       /* UTF-8; empty for INJECT_IMPORT_TABLE */
};

/* Gives process, created suspended and not yet resumed, the DLL at dll (a full path), fail open:
   the child's machine is read from its PE header in memory, and the DLL goes into its import
   table only when it is a DLL of that machine that exists and exports INJECT_IMPORTED_EXPORT,
   because a DLL the loader cannot load there stops the child from starting. A child of another
   machine, or a DLL that is missing, runs without the runtime (INJECT_NONE). Where the import table
   cannot be used (attributes, the creator's PROC_THREAD_ATTRIBUTE_LIST or NULL, holds one that may
   forbid the DLL, such as a mitigation policy; a .NET program; a path with no ASCII name; a refused
   write), a thread of its own loads the DLL, waited for up to thread_timeout_ms. The child is left
   suspended either way. */
void inject_into_child(HANDLE process, const wchar_t *dll, const void *attributes, DWORD thread_timeout_ms,
		       struct inject_report *report);

enum inject_restore {
	INJECT_RESTORE_NONE,     /* the program's import table is its own: nothing to put back */
	INJECT_RESTORE_DONE,     /* the import directory put back as the file has it */
	INJECT_RESTORE_REFUSED,  /* the header could not be made writable (error says why) */
};

/* In the child, from the runtime's DllMain, once the loader has read the program's import table:
   puts back the program's own data directories (import, bound import, IAT) that the parent
   replaced, so that what reads the import table later sees the file's. */
enum inject_restore inject_restore_imports(unsigned long *error);
