/* What the inspector knows of this machine's loader: the kind of object it loads, its default
   folders, the values of $LIB and $PLATFORM, LD_LIBRARY_PATH, and (asked of the loader itself when a
   searched folder has a glibc-hwcaps subfolder) the hwcaps subfolders it searches. The inspector
   resolves for the loader of its own kind (class, machine, ABI). */
#pragma once

#include "elf/elf_reader.h"

#include <stdbool.h>
#include <stddef.h>

enum hwcaps_knowledge { HWCAPS_NOT_ASKED, HWCAPS_KNOWN, HWCAPS_UNKNOWN };

struct loader_host {
	struct elf_host elf;
	char *interpreter;   /* this process's PT_INTERP: the loader asked about hwcaps */
	char *lib;           /* $LIB */
	char *platform;      /* $PLATFORM (AT_PLATFORM), or NULL */
	char **default_dirs; /* glibc's system folders, without trailing slashes */
	size_t default_count;
	char *library_path;  /* LD_LIBRARY_PATH as given, or NULL */
	bool legacy_hwcaps;  /* glibc before 2.37 also searches legacy hwcaps subfolders (tls, x86_64, ...) */
	enum hwcaps_knowledge hwcaps_knowledge;
	char **hwcaps;       /* the glibc-hwcaps subfolders searched, in priority order */
	size_t hwcaps_count;
	char **legacy;       /* the legacy subfolder names searched (glibc < 2.37) */
	size_t legacy_count;
	char *hwcaps_problem;/* why the loader could not be asked, when HWCAPS_UNKNOWN */
};

/* Learns the host's loader. library_path is the LD_LIBRARY_PATH to model (NULL: none). 0, or -1 with
   a message when the default folders cannot be learned. */
int loader_host_init(struct loader_host *host, const char *library_path, char *message, size_t size);
void loader_host_free(struct loader_host *host);

/* Asks the loader (PT_INTERP --help) once which glibc-hwcaps and legacy subfolders it searches. */
enum hwcaps_knowledge loader_host_hwcaps(struct loader_host *host);

/* Splits and expands a search list as glibc's fillin_rpath does: separators (":" for RPATH and
   RUNPATH, ":;" for LD_LIBRARY_PATH), $ORIGIN/$LIB/$PLATFORM, trailing slashes dropped ("/" stays),
   an empty element kept as "" (the current folder). Elements in *dirs (malloc'd); returns how many,
   or -1 when memory runs out. An empty list is no list at all. */
int loader_host_expand(const struct loader_host *host, const char *list, const char *separators, const char *origin,
		       char ***dirs);
void loader_host_free_dirs(char **dirs, size_t count);
