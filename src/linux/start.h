/* Start-up shared by the fronts of the Linux library: settings, the event log and the fork
   handlers, once; and which namespace this copy of the library was loaded into. */
#pragma once

#include <stdbool.h>

/* Reads the settings, opens the event log and installs the fork handlers, once per process (any
   thread may call it; the first does the work). No loader call in it but the real functions'
   lookup (real.h). */
void start_once(void);

/* True when this copy of the runtime was loaded as an audit library: into a namespace of its own,
   where start-up does nothing but audit (no attach scan, no patching). */
bool start_in_audit_namespace(void);
