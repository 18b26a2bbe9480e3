/* The folders a python imports from, asked of the python itself (nvinterpose-inspect --scan). */
#pragma once

/* How long the python may take by default, from its start to its exit. */
#define PYTHON_PATHS_TIMEOUT_S 30

/* Runs python (a name looked for in PATH, or a path) to print sys.executable, then its
   site-packages folders (site.getsitepackages(), the user's, and every sys.path folder that holds a
   wheel's nvidia package), one a line. The python is bounded in time from its start to its exit:
   one that prints nothing, or closes its output and goes on running, is killed after timeout_s
   seconds. Its output, malloc'd, or NULL with the reason in *problem (malloc'd, or NULL). */
char *python_paths_ask(const char *python, unsigned timeout_s, char **problem);
