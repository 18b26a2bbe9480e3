/* The what-if: what nvinterpose would change in a tree, under a policy, with origin folders given
   (--origin) or taken from a running process (--pid). It asks the runtime's own search order
   (src/search.c) through the registry and the settings the runtime reads. */
#pragma once

#include "config.h"
#include "file_probe.h"
#include "platform.h"
#include "search.h"
#include "tree.h"

#include <stdbool.h>
#include <stddef.h>

/* An object mapped in the process of --pid: loaded before anything the tree asks for. */
struct mapped_object {
	char *path;
	const struct elf_facts *facts; /* NULL when it is not a shared object the inspector can read */
};

struct what_if {
	enum policy policy;
	char **origins;        /* the registered origin folders, in order */
	size_t origin_count;
	struct mapped_object *mapped;
	size_t mapped_count;
	int pid;               /* 0 without --pid */
	/* --pid of a process in another mount namespace (a container): "/proc/PID/root", through which
	   its paths are read ("" otherwise). */
	char root[32];
	char order_problem[256]; /* --pid: why the process's own load order could not be read ("" when it was) */
};

/* Registers folder as an origin, as the runtime would after loading an NVIDIA library from it. */
int what_if_add_origin(struct what_if *what_if, const char *folder, char *message, size_t size);
/* Reads the process's list of loaded objects (in its load order, through /proc/PID/mem) and
   /proc/PID/maps: every NVIDIA library loaded there registers its folder, in the order the process
   first loaded one from it, and every mapped shared object counts as loaded. The process's
   LD_LIBRARY_PATH and NVINTERPOSE_PATH, when its environment is readable, are written to
   *library_path and *nvinterpose_path (else NULL). A process in another mount namespace has every
   path of its read through /proc/PID/root (what_if->root). -1, with the reason in message, for a
   process that does not exist, has exited (a zombie) or cannot be read. */
int what_if_read_process(struct what_if *what_if, struct file_probe *probe, int pid, char **library_path,
			 char **nvinterpose_path, char *message, size_t size);
/* The parsers of what_if_read_process, apart for the fuzzers. Each mapped file of maps (the text
   of /proc/PID/maps, changed in place), once, deleted ones left out, to visit. */
void what_if_mapped_files(char *maps, void (*visit)(const char *path, void *arg), void *arg);
/* The value of name in the length bytes of environ text (/proc/PID/environ: NAME=VALUE entries
   ending in NULs), malloc'd, or NULL. */
char *what_if_environment_value(const char *environ_text, size_t length, const char *name);
/* Reads the effective user and groups from the text of /proc/PID/status (Uid:, Gid:, Groups:);
   false when the text has no Uid: or Gid: line. */
bool what_if_parse_status(const char *status, struct platform_identity *who);
/* The settings the runtime's search reads: the policy and NVINTERPOSE_PATH. */
void what_if_configure(struct what_if *what_if, const char *nvinterpose_path);
void what_if_free(struct what_if *what_if);

/* The runtime's copy of name for an NVIDIA library in asker_folder: with folder_only, that folder
   and its wheel siblings (coherent); otherwise also every registered origin, their wheel siblings
   and NVINTERPOSE_PATH (fallback). A malloc'd path, how it was found and the runtime's step (when
   step is not NULL), or NULL. */
char *what_if_candidate(struct file_probe *probe, const char *name, const char *asker_folder, bool folder_only,
			enum how *how, enum search_step *step);
