/* The loader's dynamic string tokens in search paths ($ORIGIN, $LIB, $PLATFORM), shared by the
   runtime (DT_NEEDED lookups) and the libelf reader (the inspector). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Expands the tokens in one search-path list (an RPATH or RUNPATH value, ':'-separated) by glibc's
   rules: $ORIGIN and ${ORIGIN} become origin, $LIB and ${LIB} lib, $PLATFORM and ${PLATFORM}
   platform. A '$' that starts no known token stays literal ($ORIGINX is not $ORIGIN); an element
   whose known token has no value (NULL), or that expands to nothing, is dropped; an element written
   empty stays (the loader reads it as the current folder); an empty list has no element. Stores up to capacity expanded elements, each a malloc'd string the
   caller frees; returns how many there are in all, or -1 when memory runs out. */
int dst_expand_search_path(const char *list, const char *origin, const char *lib, const char *platform,
			   char **elements, size_t capacity);

/* True when list uses the token name ("ORIGIN", "LIB", "PLATFORM") in either spelling. */
bool dst_uses_token(const char *list, const char *name);

/* $ORIGIN of an object loaded as path: the folder of the path as given (not its realpath); a
   relative path is taken from the current folder, unnormalized, as _dl_new_object takes it. Writes
   it into folder; false when it does not fit (or the current folder cannot be read). */
bool dst_origin_of(const char *path, char *folder, size_t size);
