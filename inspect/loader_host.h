/* What the inspector knows of this machine's loader. That is the kind of object it loads, its
   default folders and LD_LIBRARY_PATH. Its machine facts (src/loader/machine.h) are asked of the
   loader itself the first time a search needs them, for a $LIB or $PLATFORM to expand or a searched
   folder with hwcaps or legacy subfolders. They are $LIB, $PLATFORM (dl_platform, not AT_PLATFORM)
   and every subfolder it tries in a folder. The inspector resolves for the loader of its own kind
   (class, machine, ABI). */
#pragma once

#include "elf/elf_reader.h"
#include "loader/machine.h"

#include <stdbool.h>
#include <stddef.h>

enum hwcaps_knowledge { HWCAPS_NOT_ASKED, HWCAPS_KNOWN, HWCAPS_UNKNOWN };

struct loader_host {
	struct elf_host elf;
	char *interpreter;   /* this process's PT_INTERP: the loader asked for its machine facts */
	char *lib;           /* $LIB, once asked */
	char *platform;      /* $PLATFORM, once asked; NULL when the loader has none */
	char **default_dirs; /* glibc's system folders, without trailing slashes */
	size_t default_count;
	char *library_path;  /* LD_LIBRARY_PATH as given, or NULL */
	enum hwcaps_knowledge hwcaps_knowledge; /* whether the machine facts were asked, and answered */
	struct loader_machine machine;
	const char *hwcaps[LOADER_MAX_SUBDIRS]; /* the glibc-hwcaps subfolders searched, in priority order */
	size_t hwcaps_count;
	char *hwcaps_problem;/* why the loader could not be asked, when HWCAPS_UNKNOWN */
};

/* Learns the host's loader. library_path is the LD_LIBRARY_PATH to model (NULL: none). 0, or -1 with
   a message when the default folders cannot be learned. */
int loader_host_init(struct loader_host *host, const char *library_path, char *message, size_t size);
void loader_host_free(struct loader_host *host);

/* Asks the loader once for its machine facts: PT_INTERP --list of this program with
   LD_LIBRARY_PATH=LOADER_PROBE_PATH and LD_DEBUG=libs, whose search line holds them on every glibc. */
enum hwcaps_knowledge loader_host_hwcaps(struct loader_host *host);

/* Splits and expands a search list as glibc's fillin_rpath does: separators (":" for RPATH and
   RUNPATH, ":;" for LD_LIBRARY_PATH), $ORIGIN/$LIB/$PLATFORM, trailing slashes dropped ("/" stays),
   an empty element kept as "" (the current folder). Elements in *dirs (malloc'd); returns how many,
   or -1 when memory runs out. An empty list is no list at all. */
int loader_host_expand(struct loader_host *host, const char *list, const char *separators, const char *origin,
		       char ***dirs);
void loader_host_free_dirs(char **dirs, size_t count);
