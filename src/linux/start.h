/* Start-up shared by the fronts of the Linux library: settings, the event log and the fork
   handlers, once; and which namespace this copy of the library was loaded into. */
#pragma once

#include <stdbool.h>

/* Copies the NVINTERPOSE_* entries of the environment and TMPDIR, and the working folder where
   NVINTERPOSE_LOG_FILE is relative, once: the settings are those of the process's start, whenever
   they are parsed (a getenv racing another thread's setenv is undefined). The constructor calls it;
   parsing copies first where it has not run. */
void start_copy_settings(void);

/* The value of setting name as copied, or NULL. */
const char *start_setting(const char *name);

/* True when the environment held some NVINTERPOSE_* entry (or TMPDIR) at start-up. */
bool start_has_settings(void);

/* Parses the copied settings into config_get(), once. */
void start_read_settings(void);

/* The rest of start-up, once per process (any thread may call it; the first does the work, the
   others wait): the settings, the event log, the registry, the index of loaded objects and the
   report. No loader call in it but the real functions' lookup (real.h). A forked child whose
   parent's thread was in the middle of it runs it again (walk.h). */
void start_once(void);

/* True once start_once has run. */
bool start_done(void);

/* At exit: true when the copy is to make its exit report. A copy that never started (no NVIDIA name,
   no API call) is then to start first (*not_started), which only a report or an event log asked for
   makes worth it; then what is loaded is registered as a start-up scan would have. */
bool start_wanted_at_exit(bool *not_started);

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
