/* The C library and the compiler's runtime (libc, libm, libstdc++, the loader, ...): on every
   system, in nearly every tree, and folded away in the text tree unless --all is given, as libtree
   does. */
#pragma once

#include <stdbool.h>

/* True for a name (a soname or a path) whose file name is one of them. */
bool system_library(const char *name);
