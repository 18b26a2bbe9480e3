/* Carrying out a plan: the runtime's own loads, for the routes and the attach scan alike. Each is
   made outside any lock of the runtime's, with the recursion guard down, so the constructors of
   what it loads reach the hooks as any code does. */
#pragma once

#include "plan.h"

#include <stdbool.h>

/* The recursion guard: true while this thread runs the runtime's own code. A dlopen that reaches
   the hooks then goes straight to the loader. Kept small: a runtime dlopen'ed late takes its TLS
   from the static TLS block's spare room. */
extern __thread bool carry_out_busy __attribute__((tls_model("initial-exec")));

/* The runtime's own load of file: the real dlopen with the guard down for the constructors it runs. */
void *carry_out_dlopen(const char *file, int mode);

/* One load of a plan for request, with mode; NULL (and a warning) when it fails. A load that takes
   the runtime's copy is reported as the request's outcome (report.h). */
void *carry_out_load(const struct plan_load *load, int mode, const struct plan_request *request);

/* A library loaded by path after what it needs: each of those RTLD_LOCAL with the caller's binding
   mode (the loader then reuses them by soname), then the library with the caller's mode. Then the
   runtime's own references go, so that dlclose still unloads the tree. NULL when nothing of the
   plan loaded (the plain loader then has the call) or the library itself did not load. */
void *carry_out_with_needs(const char *path, int mode, const struct plan *plan);
