/* What the two test hosts share (host_cpython.c, host_embedder.c). A host is a program that loads
   DLLs the way one kind of real process does; the steps on its command line say what it does, in
   order, and it prints one line for each:

     runtime PATH   loads nvinterpose.dll as the host loads any DLL by path   "runtime: ok" | "runtime: error N"
     add FOLDER     AddDllDirectory(FOLDER)                                   "add FOLDER: ok" | "add FOLDER: error N"
     load PATH      loads a DLL by full path, then calls its standin_value    "load NAME: ok value V" | "load NAME: error N"
     name NAME      loads a DLL by bare name                                  "name NAME: ok value V" | "name NAME: error N"
     ask NAME       the NVRTC stand-in loaded last asks for NAME by bare name
                    in each of its ways (standin_nvrtc.h)                     "ask WAY NAME: ok value V" | "... error N"
     which NAME     the file of the loaded module NAME                        "which NAME: PATH" | "which NAME: not loaded"
     free NAME      FreeLibrary of the loaded module NAME, once               "free NAME: ok" | "free NAME: not loaded"
     setenv N=V     sets N to V, "pid" standing for the host's pid (as a
                    Python program sets os.environ before it loads a DLL)    "setenv N=V"
     child STEPS    runs this host again with STEPS (one argument, split at
                    spaces) through CreateProcessW, and waits for it          "child: exit N"

   Then it exits 0 (2 for a bad command line). It never frees what it loaded: a CUDA library stays
   loaded in a real process. The test program (test_hosts.c) runs the hosts and reads their lines. */
#pragma once

#include <windows.h>

struct host {
	const char *imitates;                            /* printed first, so a log says which host ran */
	void (*start)(void);                             /* what the host does before anything, or NULL */
	HMODULE (*load_path)(const wchar_t *path);       /* a DLL by full path */
	HMODULE (*load_name)(const wchar_t *name);       /* a DLL by bare name */
};

int host_run(const struct host *host, int argc, wchar_t **argv);
