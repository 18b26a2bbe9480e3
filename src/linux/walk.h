/* Walking the loaded objects (dl_iterate_phdr) so that a fork never catches a walk in flight; and
   the runtime's one-time initializations, which a forked child finishes. */
#pragma once

#define _GNU_SOURCE
#include <link.h>
#include <stdatomic.h>

#include <stdbool.h>

/* Registers the fork handlers; idempotent. The constructor calls it, before any one-time
   initialization can start. */
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

/* A function run once per process: WALK_ONCE_INIT, then running, then done. */
struct walk_once {
	_Atomic unsigned state;
};
#define WALK_ONCE_INIT { 0 }

/* Runs function once (the first caller; the others wait until it is done), as pthread_once does,
   without libpthread. A fork does not wait for a run in flight (function may allocate, and a fork's
   other handlers may hold the allocator's locks meanwhile): a child whose parent's thread was in the
   middle of it runs it again from the start, so function must be one that may. function must not
   fork, nor call walk_once for its own once. */
void walk_once(struct walk_once *once, void (*function)(void));

/* True once function has returned. */
bool walk_once_done(struct walk_once *once);
