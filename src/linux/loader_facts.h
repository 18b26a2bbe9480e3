/* What the loader knows about this process, asked of the loader itself: an object's search list,
   $PLATFORM and $LIB, the process's own lists, what ld.so.cache holds, and its answer for a name.
   The plans (plan.h) build on these facts. Nothing here decides or loads anything. Runs outside
   the loader's locks and may allocate, unless a function says otherwise. */
#pragma once

#define _GNU_SOURCE
#include "loader/machine.h"
#include "loader/search_order.h"

#include <link.h>
#include <stdbool.h>
#include <stddef.h>

/* The object whose code holds address, as glibc's dlopen determines its caller. When no object
   holds it (generated code), the main program. */
struct link_map *loader_facts_object_at(const void *address);

/* An object's search list as the loader gives it (dlinfo RTLD_DI_SERINFO): its RPATH chain,
   LD_LIBRARY_PATH, its RUNPATH and the system folders, every token expanded. It leaves out
   ld.so.cache and the glibc-hwcaps subfolders, which the real loader tries itself. The list is
   sized to what it holds. A long LD_LIBRARY_PATH must not cut it, or the loader's own search would
   be predicted wrong. */
struct loader_facts_list;
struct loader_facts_list *loader_facts_search_list(struct link_map *object);
const struct loader_list *loader_facts_list_of(const struct loader_facts_list *list);
void loader_facts_free_list(struct loader_facts_list *list);

/* $PLATFORM and $LIB, the subfolders the loader tries, and whether it reads ld.so.cache: learned
   once, from the runtime's own search list and the running glibc. */
const struct loader_machine *loader_facts_machine(void);

/* True for an element of the runtime's own RUNPATH. That list tells the runtime the machine and is
   no place anything is looked for. */
bool loader_facts_runtime_element(const char *folder);

/* An RPATH or RUNPATH as written, expanded as the loader does ($ORIGIN is origin). False when it
   uses $LIB or $PLATFORM and the loader did not say their values: the loader's search is then not
   known. The array and each element are malloc'd. */
bool loader_facts_expand(const char *list, const char *origin, char ***elements, int *count);

/* The process's lists for the DT_NEEDED of an object that dlopen maps (it has no loader): the
   program's RPATH (unless the program has a RUNPATH), LD_LIBRARY_PATH and the system folders. NULL
   when the loader's lists cannot be read. */
struct loader_facts_process;
struct loader_facts_process *loader_facts_process_lists(void);
const struct loader_process *loader_facts_process_of(const struct loader_facts_process *lists);
void loader_facts_free_process(struct loader_facts_process *lists);

/* The loader's own answer for a name from the runtime's frame, without loading it. RTLD_NOLOAD
   still searches LD_LIBRARY_PATH, ld.so.cache and its glibc-hwcaps entries and the system
   folders. True when the loader would find a file of that name. */
bool loader_facts_finds_by_name(const char *name);
/* True when the loader holds an object under this name now. For a name it does not hold, it still
   searches the file system before it says so. */
bool loader_facts_loaded_by_name(const char *name);

/* What ld.so.cache (its file, read now) holds for name: the entry the loader would take, copied
   into path, or false. Where this process cannot tell which glibc-hwcaps entry the loader prefers,
   any one it holds counts. Asks the loader nothing, so the audit front may call it. */
bool loader_facts_cache_entry(const char *name, char *path, size_t size);
