/* Threads calling dlopen while the main thread attaches the runtime.
   Usage: attach-threads RUNTIME NAME FRESH_FOLDER FRESH_COUNT

   Eight threads loop until told to stop: dlopen of NAME by bare name (a library only the runtime
   finds, on NVINTERPOSE_PATH) and dlclose, then dlopen and dlclose of one of the FRESH_COUNT
   libraries FRESH_FOLDER/libfresh-I.so.77 by path, so that loads are in flight all along. Once
   they run, the main thread dlopens RUNTIME, calls nvi_rescan a few times, lets them run on and
   stops them. A call of NAME that began after the attach returned must find it. Prints the counts;
   exits 1 when one missed or a fresh library did not load. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 8

static const char *name, *fresh;
static int fresh_count;
static atomic_bool attached, stop;
static atomic_long before_found, before_failed, after_found, after_missed, fresh_loads, errors;

static void *worker(void *arg)
{
	long id = (long)arg;
	for (long i = 0; !stop; i++) {
		bool after = attached;
		void *h = dlopen(name, RTLD_NOW);
		if (h)
			dlclose(h);
		if (after)
			h ? after_found++ : after_missed++;
		else
			h ? before_found++ : before_failed++;
		char path[4096];
		snprintf(path, sizeof(path), "%s/libfresh-%ld.so.77", fresh, (id + i) % fresh_count);
		if ((h = dlopen(path, RTLD_NOW))) {
			fresh_loads++;
			dlclose(h);
		} else {
			errors++;
		}
	}
	return NULL;
}

static void pause_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: attach-threads RUNTIME NAME FRESH_FOLDER FRESH_COUNT\n");
		return 2;
	}
	name = argv[2];
	fresh = argv[3];
	fresh_count = atoi(argv[4]);
	pthread_t threads[THREADS];
	for (long t = 0; t < THREADS; t++)
		pthread_create(&threads[t], NULL, worker, (void *)t);
	pause_ms(50);
	void *runtime = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	attached = runtime != NULL;
	int (*rescan)(void) = runtime ? (int (*)(void))dlsym(runtime, "nvi_rescan") : NULL;
	for (int i = 0; rescan && i < 10; i++) {
		rescan();
		pause_ms(10);
	}
	pause_ms(100);
	stop = true;
	for (int t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);
	printf("attach: %s\nbefore attach: found %ld failed %ld\nafter attach: found %ld\nafter attach: missed %ld\nfresh loads: %ld\nerrors: %ld\n",
	       runtime ? "yes" : dlerror(), (long)before_found, (long)before_failed, (long)after_found, (long)after_missed, (long)fresh_loads,
	       (long)errors);
	return runtime && !after_missed && !errors && after_found ? 0 : 1;
}
