/* Facts of this machine's loader that no file shows: the values of $PLATFORM and $LIB, and the
   subfolders it tries in every folder of a search list (glibc-hwcaps/x86-64-v3, the legacy
   platform and hwcap folders before glibc 2.37, then the folder itself), in its order. They are
   asked of the loader itself, never assumed: $PLATFORM is glibc's dl_platform ("haswell" on many
   x86-64 CPUs), not the kernel's AT_PLATFORM.
     - a tool (the inspector, the launcher) runs a probe: a search over LD_LIBRARY_PATH set to
       LOADER_PROBE_PATH with LD_DEBUG=libs, whose "search path=" line expands the tokens and lists
       the subfolders, on every glibc from 2.17;
     - the runtime, inside a host process, reads the same element from its own search list (the
       library carries LOADER_PROBE_PATH in its RUNPATH, which dlinfo RTLD_DI_SERINFO lists expanded):
       it learns $PLATFORM and $LIB, not the subfolders. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A folder that cannot exist (the entries of /proc's own folder are the kernel's; nothing can be
   created there), with marks that find the tokens' values in its expansion. /proc rather than
   /proc/self: the loader searches the runtime's RUNPATH, glibc-hwcaps and legacy subfolders
   included, for the runtime's own libc.so.6 in every audit namespace, and a failing lookup there
   follows no link and reads no process's folder (docs/performance.md, "The audit front"). */
#define LOADER_PROBE_PATH "/proc/nvinterpose-probe-P/$PLATFORM/nvinterpose-probe-L/$LIB/nvinterpose-probe-E"

/* The folder the runtime's RUNPATH names after LOADER_PROBE_PATH: one that always exists and can
   never hold a library. The loader forgets a whole RUNPATH none of whose folders exists the first
   time it searches it (glibc's open_path), and it searches the runtime's for the runtime's own
   DT_NEEDED where they are not loaded yet (libc.so.6 and the loader in an audit namespace, and
   libdl.so.2 for a runtime built on a glibc before 2.34): without this folder the probe element
   would be gone from the runtime's list before it starts. */
#define LOADER_PROBE_KEEPER "/proc"

#define LOADER_MAX_SUBDIRS 64
#define LOADER_FACT_MAX 256

struct loader_machine {
	bool tokens_known;   /* platform and lib hold the loader's values */
	bool platform_known; /* the loader has a $PLATFORM (a loader without one drops elements using it) */
	char platform[LOADER_FACT_MAX];
	char lib[LOADER_FACT_MAX];
	bool subdirs_known;  /* subdirs lists every candidate of a folder, "" (the folder itself) last */
	/* Without the subdirs, whether this glibc may search legacy hwcap subfolders (tls, the
	   platform's, x86_64, ...), as the running libc's version says. Those are gone from 2.37. */
	bool legacy_possible;
	/* The loader was started with --inhibit-cache (ld.so run as a command): it reads no ld.so.cache. */
	bool cache_inhibited;
	size_t subdir_count;
	char subdirs[LOADER_MAX_SUBDIRS][LOADER_FACT_MAX];
};

/* Reads the facts from the loader's LD_DEBUG=libs output of a search over LOADER_PROBE_PATH (the
   tokens and the subfolders), or from one element of a search list the loader expanded (the tokens
   only). True when the text held what it should; the machine is left as it was otherwise. */
bool loader_machine_from_debug_output(const char *text, size_t length, struct loader_machine *machine);
bool loader_machine_from_element(const char *element, struct loader_machine *machine);

/* The glibc-hwcaps subfolder names the loader searches ("x86-64-v3", ...), in its order of
   preference, as they appear among the subdirs: up to capacity in names; returns how many. */
size_t loader_machine_hwcaps(const struct loader_machine *machine, const char **names, size_t capacity);

/* Without the subdirs: the names a legacy hwcap subfolder under a searched folder is made of on
   this architecture ("tls", the platform, the hwcap names; machine NULL: its platform unknown), up
   to capacity; how many. */
size_t loader_machine_legacy_names(const struct loader_machine *machine, const char **names, size_t capacity);
