/* The runtime's walks over the loaded objects, and the forks that wait for them; its one-time
   initializations, which a forked child finishes where the parent's thread left one half done. */
#include "walk.h"

#include "real.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

static _Atomic int walks_in_flight;
static _Atomic bool fork_pending;

static void enter_walk(void)
{
	for (;;) {
		atomic_fetch_add(&walks_in_flight, 1);
		if (!atomic_load(&fork_pending))
			return;
		atomic_fetch_sub(&walks_in_flight, 1);
		while (atomic_load(&fork_pending))
			sched_yield();
	}
}

static void leave_walk(void) { atomic_fetch_sub(&walks_in_flight, 1); }

static void before_fork(void)
{
	atomic_store(&fork_pending, true);
	while (atomic_load(&walks_in_flight) > 0)
		sched_yield();
}

static void after_fork_in_parent(void) { atomic_store(&fork_pending, false); }

/* A forked child until a walk has completed in it: a thread the child does not have may hold the
   loader's list lock there (glibc resets its other loader locks in the child, not this one, which
   dlopen and dlclose take while they change the list), and a walk would wait forever. */
static _Atomic bool walk_blocks_maybe;

bool walk_may_block(void) { return atomic_load_explicit(&walk_blocks_maybe, memory_order_relaxed); }

/* glibc's dlopen unmaps ld.so.cache as it returns (_dl_unload_cache: munmap, then the pointer
   cleared). A fork that waited for that munmap (both take the address-space lock) copies the
   process between the two, and the child's first dlopen unmaps the range again: by then whatever
   the child mapped there since, often the library that very dlopen loaded, whose next dlsym dies
   of SIGSEGV. Any preload moves where things are mapped, and so how often a child meets it. A
   dlopen of the main program here, before the child maps anything, clears the pointer with nothing
   there to lose (it searches nothing, maps nothing and takes no lock that is not reset; a dlerror()
   message pending in the forking thread is gone in the child, as after any successful dlopen).
   Not while the loader's list is in the middle of a change: the loader would fail its own
   consistency assertion on this call, as it does on the child's own next dlopen. */
static void forget_the_loader_cache(void)
{
	if (!real_dlopen || _r_debug.r_state != RT_CONSISTENT)
		return;
	int saved_errno = errno;
	(void)real_dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD); /* the main program's reference: never unloaded */
	errno = saved_errno;
}

/* Which process a one-time initialization's runner belongs to: each forked child counts one more. */
static _Atomic unsigned fork_generation;

static void after_fork_in_child(void)
{
	atomic_fetch_add(&fork_generation, 1);
	atomic_store(&walks_in_flight, 0);
	atomic_store(&fork_pending, false);
	atomic_store(&walk_blocks_maybe, true);
	forget_the_loader_cache();
}

void walk_init(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set(&done))
		pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

int walk_loaded_objects(int (*visit)(struct dl_phdr_info *info, size_t size, void *arg), void *arg)
{
	enter_walk();
	int result = dl_iterate_phdr(visit, arg);
	leave_walk();
	if (walk_may_block())
		atomic_store_explicit(&walk_blocks_maybe, false, memory_order_relaxed); /* the lock was free */
	return result;
}

enum { ONCE_NOT_RUN = 0, ONCE_DONE = 1 }; /* else running: 2 + 2 * the runner's fork generation */

void walk_once(struct walk_once *once, void (*function)(void))
{
	for (;;) {
		unsigned state = atomic_load_explicit(&once->state, memory_order_acquire);
		if (state == ONCE_DONE)
			return;
		unsigned mine = 2 + 2 * atomic_load(&fork_generation);
		/* Not run (ONCE_NOT_RUN is never mine), or run by a thread of the parent process, which
		   this child does not have. */
		if (state != mine) {
			if (atomic_compare_exchange_strong(&once->state, &state, mine)) {
				function();
				atomic_store_explicit(&once->state, ONCE_DONE, memory_order_release);
				return;
			}
			continue;
		}
		sched_yield(); /* another thread of this process runs it */
	}
}

bool walk_once_done(struct walk_once *once) { return atomic_load_explicit(&once->state, memory_order_acquire) == ONCE_DONE; }
