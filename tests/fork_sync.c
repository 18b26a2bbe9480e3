/* Forks while other threads are inside the runtime's syncs (each a dl_iterate_phdr call, which
   holds the loader's list lock, and glibc does not reset that lock in a forked child). Each child
   walks the loaded objects itself, as any dlopen does; a child forked while the lock was held by
   a thread that the child does not have hangs there. The runtime's fork handlers make a fork wait
   for the syncs in flight. Prints "hung: K of N" (children killed by their alarm) and exits 0.
   Usage: fork-sync FORKS THREADS */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_bool done;

/* nvi_list_origins brings the runtime's index up to date: one sync a call. */
static void *syncer(void *arg)
{
	int (*list)(const char *, void *, size_t) = arg;
	while (!done)
		list(NULL, NULL, 0);
	return NULL;
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	++*(int *)arg;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fork-sync FORKS THREADS\n");
		return 2;
	}
	int forks = atoi(argv[1]), threads = atoi(argv[2]);
	void *list = dlsym(RTLD_DEFAULT, "nvi_list_origins");
	if (!list) {
		printf("the runtime is not loaded\n");
		return 2;
	}
	pthread_t *ids = calloc((size_t)threads, sizeof(*ids));
	for (int t = 0; t < threads; t++)
		pthread_create(&ids[t], NULL, syncer, list);
	pid_t *children = calloc((size_t)forks, sizeof(*children));
	for (int f = 0; f < forks; f++) {
		children[f] = fork();
		if (children[f] == 0) {
			alarm(3);
			int objects = 0;
			dl_iterate_phdr(count_objects, &objects);
			_exit(objects > 0 ? 0 : 1);
		}
	}
	done = true;
	for (int t = 0; t < threads; t++)
		pthread_join(ids[t], NULL);
	int hung = 0, failed = 0;
	for (int f = 0; f < forks; f++) {
		int status = 0;
		if (children[f] <= 0 || waitpid(children[f], &status, 0) != children[f])
			failed++;
		else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			hung++;
		else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	printf("hung: %d of %d\nfailed: %d\n", hung, forks, failed);
	return 0;
}
