/* Start-up shared by the fronts of the Linux library: settings, the event log and the fork
   handlers, once; and which namespace this copy of the library was loaded into. */
#pragma once

#include <stdbool.h>

/* Reads the settings, opens the event log and installs the fork handlers, once per process (any
   thread may call it; the first does the work). No loader call in it but the real functions'
   lookup (real.h). */
void start_once(void);

/* start_once for the audit copy: the same start-up, without the real functions' lookup where
   libdl may not be called there (start_libdl_usable), so the copy then asks libdl nothing. */
void start_audit_once(void);

/* The glibc this process runs is MAJOR.MINOR or newer (false where its version cannot be read). */
bool start_glibc_at_least(int major, int minor);

/* True where the audit copy may call libdl's functions (dlsym, dladdr1, dlinfo): glibc 2.34 and
   later, where they are libc's. Before, libdl's copy in the audit namespace crashes while the loader
   starts the program (its functions forward through a hook nobody has set there), and later keeps
   its dlerror buffer under a thread key of the audit namespace's libpthread, whose numbers are
   another table's: its pthread_setspecific overwrites the program's own key of that number. */
bool start_libdl_usable(void);

/* True when this copy of the runtime was loaded as an audit library: into a namespace of its own,
   where start-up does nothing but audit (no attach scan, no patching). Asks no libdl function. */
bool start_in_audit_namespace(void);
