/* The runtime's walks over the loaded objects, and the forks that wait for them. */
#include "walk.h"

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

static void after_fork_in_child(void)
{
	atomic_store(&walks_in_flight, 0);
	atomic_store(&fork_pending, false);
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
	return result;
}
