/* Walking the loaded objects (dl_iterate_phdr) so that a fork never catches a walk in flight. */
#pragma once

#define _GNU_SOURCE
#include <link.h>

#include <stdbool.h>

/* Registers the fork handlers; idempotent. */
void walk_init(void);

/* True in a forked child until a walk has completed in it: a walk may then wait forever for the
   list lock, held by a thread the child does not have. */
bool walk_may_block(void);

/* dl_iterate_phdr(visit, arg). glibc's fork does not reset the loader's list lock in the child, so
   a fork while a thread is inside the walk would leave the child unable to load anything: a fork
   announces itself and waits for the walks in flight, and walks that start meanwhile wait for it.
   visit runs with the loader's list lock held: it must allocate nothing, call no loader function
   and log nothing. */
int walk_loaded_objects(int (*visit)(struct dl_phdr_info *info, size_t size, void *arg), void *arg);
