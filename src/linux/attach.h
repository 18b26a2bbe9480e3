/* The runtime's start in a process, preloaded, linked or dlopen'ed at any time, and the scan of
   the NVIDIA libraries loaded before it (attach.c). */
#pragma once

#include <stdbool.h>

/* Set at start-up when another copy of the runtime, loaded earlier, serves the process: this copy
   then passes every call on. The hooks read it on every dlopen, so it is a plain flag. */
extern bool attach_deferring;
