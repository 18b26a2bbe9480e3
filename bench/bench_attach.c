/* What attaching at any time costs.
 *
 *   bench-attach [--rounds R] [--iterations N]     (meson benchmark runs this)
 *
 * attach: a fresh process loads K libraries (K = 0, 100, 500; stand-ins built at run time, half
 *   of them importing dlopen, so that the patcher has relocations to walk and slots to patch),
 *   then times one dlopen of $NVI_RUNTIME: the loader's own work, the attach scan and the
 *   patching. The same with NVINTERPOSE_PATCH=0 gives the patching's share, and the dlopen of an
 *   empty library the loader's own cost with K objects loaded.
 * repeated: dlopen+dlclose of an already-loaded NVIDIA library (by soname) and of libz.so.1, N
 *   times in one process, under the plain loader, an empty preload (the floor any preload pays),
 *   the runtime preloaded, and the runtime attached before the libraries were loaded and after
 *   (its hooks reached through the patched slots): the hot path must cost the same attached as
 *   preloaded. Where the runtime sits in the loader's list of objects moves the loader's own cost.
 * Each round runs every variant once, in a fresh child, the order turning from round to round;
 * the table gives medians. Times are the child thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which
 * a busy machine's waits for a core do not inflate. Stand-ins are built with $NVI_CC from $NVI_FIXTURES. */
#define _GNU_SOURCE
#include "bench.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The thread's CPU time: on a shared machine a child that waits for a core would count the wait in
   wall-clock time; everything measured here runs in the calling thread. */
static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* ---- In the child ------------------------------------------------------------------------ */

/* Loads count objects, then times one dlopen of library ($NVI_RUNTIME, or the empty library). */
static int child_attach(const char *dir, int count, const char *library)
{
	for (int i = 0; i < count; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/objects/libobject-%d.so.77", dir, i);
		if (!dlopen(path, RTLD_NOW | RTLD_LOCAL))
			return 1;
	}
	double start = now_ns();
	void *loaded = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	double elapsed = now_ns() - start;
	printf("%.1f\n", elapsed);
	return loaded ? 0 : 1;
}

/* attach: "before" or "after" the libraries are loaded, or "no". */
static int child_repeated(const char *dir, const char *name, long iterations, const char *attach)
{
	char nvrtc[4096];
	snprintf(nvrtc, sizeof(nvrtc), "%s/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.77", dir);
	if ((strcmp(attach, "before") == 0 && !dlopen(getenv("NVI_RUNTIME"), RTLD_NOW | RTLD_LOCAL)) || !dlopen(nvrtc, RTLD_NOW) ||
	    !dlopen("libz.so.1", RTLD_NOW) || (strcmp(attach, "after") == 0 && !dlopen(getenv("NVI_RUNTIME"), RTLD_NOW | RTLD_LOCAL)))
		return 1;
	double start = now_ns();
	for (long i = 0; i < iterations; i++) {
		void *h = dlopen(name, RTLD_NOW);
		if (!h)
			return 1;
		dlclose(h);
	}
	printf("%.1f\n", (now_ns() - start) / iterations);
	return 0;
}

/* ---- In the parent ----------------------------------------------------------------------- */

static char self[4096], dir[4096];

static int build(const char *source, const char *path, const char *flags)
{
	char command[16384];
	snprintf(command, sizeof(command), "'%s' -shared -fPIC -O1 -o '%s' '%s/%s' %s -ldl", getenv("NVI_CC"), path, getenv("NVI_FIXTURES"),
		 source, flags);
	return system(command);
}

static int prepare(int objects)
{
	char command[16384];
	snprintf(command, sizeof(command), "mkdir -p '%s/objects' '%s/site-packages/nvidia/cuda_nvrtc/lib'", dir, dir);
	if (system(command) != 0)
		return -1;
	char path[8192];
	/* One importing dlopen, one not; copied under names of their own (no soname: each copy is
	   an object of its own for the loader). */
	snprintf(path, sizeof(path), "%s/importer.so", dir);
	if (build("host.c", path, "") != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/leaf.so", dir);
	if (build("value.c", path, "") != 0)
		return -1;
	snprintf(command, sizeof(command), "cd '%s' && i=0; while [ $i -lt %d ]; do if [ $((i %% 2)) = 0 ]; then cp importer.so objects/libobject-$i.so.77; "
		 "else cp leaf.so objects/libobject-$i.so.77; fi; i=$((i + 1)); done", dir, objects);
	if (system(command) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.77", dir);
	if (build("nvrtc_like.c", path, "-Wl,-soname,libnvrtc.so.77") != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/empty.so", dir);
	return build("value.c", path, "");
}

/* One child: environment assignments, then the child's arguments; its one number, or -1. */
static double run_child(const char *env, const char *args)
{
	char command[16384];
	snprintf(command, sizeof(command), "env %s '%s' --child %s", env, self, args);
	FILE *p = popen(command, "r");
	double value = -1;
	if (!p || fscanf(p, "%lf", &value) != 1)
		value = -1;
	if (p)
		pclose(p);
	return value;
}

/* Runs each variant once a round, the order turning; writes the medians into result and the
   fastest rounds into fastest (on a busy machine a sub-millisecond child is often preempted: the
   fastest round is then the closer figure of its own cost). */
static int measure(int rounds, int variants, char env[][8192], const char *const *args, double *result, double *fastest)
{
	double *samples = calloc((size_t)(rounds * variants), sizeof(*samples));
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < variants; k++) {
			int v = (k + r) % variants;
			if ((samples[v * rounds + r] = run_child(env[v], args[v])) < 0) {
				fprintf(stderr, "bench-attach: the child '%s %s' failed\n", env[v], args[v]);
				free(samples);
				return -1;
			}
		}
	for (int v = 0; v < variants; v++) {
		result[v] = bench_quantile(samples + v * rounds, (size_t)rounds, 0.5);
		fastest[v] = bench_quantile(samples + v * rounds, (size_t)rounds, 0.0);
	}
	free(samples);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && strcmp(argv[1], "--child") == 0 && strcmp(argv[2], "attach") == 0)
		return child_attach(argv[3], atoi(argv[4]), argv[5]);
	if (argc >= 7 && strcmp(argv[1], "--child") == 0 && strcmp(argv[2], "repeated") == 0)
		return child_repeated(argv[3], argv[4], atol(argv[5]), argv[6]);
	int rounds = 21;
	long iterations = 200000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--rounds") == 0)
			rounds = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--iterations") == 0)
			iterations = atol(argv[i + 1]);
	}
	const char *runtime = getenv("NVI_RUNTIME");
	if (!runtime || !getenv("NVI_CC") || !getenv("NVI_FIXTURES") || readlink("/proc/self/exe", self, sizeof(self) - 1) < 0) {
		fprintf(stderr, "bench-attach: run it through meson test --benchmark (NVI_RUNTIME, NVI_CC, NVI_FIXTURES)\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/nvinterpose-bench-attach-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir) || prepare(500) != 0) {
		fprintf(stderr, "bench-attach: cannot build the stand-ins in %s\n", dir);
		return 1;
	}

	printf("attach: one dlopen into a process that has loaded K libraries (half import dlopen); medians of %d rounds\n", rounds);
	printf("  plain library: an empty one (the loader's own cost at K); patching: attach - NVINTERPOSE_PATCH=0;\n");
	printf("  each cell: median (fastest round)\n\n");
	printf("%-6s %22s %22s %22s %22s\n", "K", "plain library", "attach", "NVINTERPOSE_PATCH=0", "patching");
	static const int counts[] = { 0, 100, 500 };
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		char env[3][8192], args[3][16384];
		snprintf(env[0], sizeof(env[0]), "NVI_RUNTIME='%s'", runtime);
		snprintf(env[1], sizeof(env[1]), "NVI_RUNTIME='%s'", runtime);
		snprintf(env[2], sizeof(env[2]), "NVI_RUNTIME='%s' NVINTERPOSE_PATCH=0", runtime);
		snprintf(args[0], sizeof(args[0]), "attach '%s' %d '%s/empty.so'", dir, counts[c], dir);
		for (int v = 1; v < 3; v++)
			snprintf(args[v], sizeof(args[v]), "attach '%s' %d '%s'", dir, counts[c], runtime);
		const char *arg_list[] = { args[0], args[1], args[2] };
		double median[3], fastest[3];
		if (measure(rounds, 3, env, arg_list, median, fastest) != 0)
			return 1;
		printf("%-6d", counts[c]);
		for (int v = 0; v < 3; v++)
			printf(" %9.1f us (%6.1f us)", median[v] / 1e3, fastest[v] / 1e3);
		printf(" %9.1f us (%6.1f us)\n", (median[1] - median[2]) / 1e3, (fastest[1] - fastest[2]) / 1e3);
	}

	printf("\nrepeated dlopen+dlclose of a loaded library, %ld calls a child; medians of %d rounds\n\n", iterations, rounds);
	printf("%-16s %9s %14s %11s %16s %15s %17s %17s\n", "name", "plain", "empty preload", "preloaded", "attached before",
	       "attached after", "before/preloaded", "after/preloaded");
	static const char *const names[] = { "libnvrtc.so.77", "libz.so.1" };
	static const char *const attach[] = { "no", "no", "no", "before", "after" };
	for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
		char env[5][8192], args[5][16384];
		snprintf(env[0], sizeof(env[0]), "NVI_RUNTIME='%s'", runtime);
		snprintf(env[1], sizeof(env[1]), "NVI_RUNTIME='%s' LD_PRELOAD='%s/empty.so'", runtime, dir);
		snprintf(env[2], sizeof(env[2]), "NVI_RUNTIME='%s' LD_PRELOAD='%s'", runtime, runtime);
		snprintf(env[3], sizeof(env[3]), "NVI_RUNTIME='%s'", runtime);
		snprintf(env[4], sizeof(env[4]), "NVI_RUNTIME='%s'", runtime);
		for (int v = 0; v < 5; v++)
			snprintf(args[v], sizeof(args[v]), "repeated '%s' %s %ld %s", dir, names[n], iterations, attach[v]);
		const char *arg_list[] = { args[0], args[1], args[2], args[3], args[4] };
		double median[5], fastest[5];
		if (measure(rounds, 5, env, arg_list, median, fastest) != 0)
			return 1;
		printf("%-16s %6.1f ns %11.1f ns %8.1f ns %13.1f ns %12.1f ns %16.2fx %16.2fx\n", names[n], median[0], median[1], median[2],
		       median[3], median[4], median[3] / median[2], median[4] / median[2]);
	}
	char command[8192];
	snprintf(command, sizeof(command), "rm -rf '%s'", dir);
	return system(command) == 0 ? 0 : 1;
}
