/* Forks while other threads load and unload: do children fare worse with the runtime than
 * without it? One run forks thousands of children under each of three arms (the plain loader, an
 * empty preloaded library, the runtime), in chunks whose order rotates, and counts how each child
 * ended; the runtime is judged against plain by a one-sided test of those counts.
 *
 *   bench-fork [--forks N] [--chunk C] [--threads T] [--timeout S] [--only WORKLOAD] [--no-judge]
 *
 * Each arm process holds an NVIDIA stand-in (libnvrtc.so.77, loaded by path) and starts T threads
 * that load and unload without pause; its main thread forks, with no regard for them, children that
 * make the hot path's call: repeated loads of the held library, by path and by soname, a dlsym and
 * a call into it; then a first load of a library the parent does not have, and a call into that. Each child has S seconds (its alarm). Workloads: "nvidia" (the threads load and
 * unload an NVIDIA stand-in by path and another library, ask for missing NVIDIA and other names, and
 * probe an NVIDIA soname with RTLD_NOLOAD) and "other" (the same with non-NVIDIA names only: the
 * runtime then sees no NVIDIA call between the held library's load and the fork). A child ends
 * ok, hung (its alarm), crashed (another signal), with the loader's own consistency assertion (exit
 * 127: the fork caught a thread inside the loader; glibc does that with or without a preload), or
 * failed (a load or symbol missing).
 *
 * The runtime is tested against plain, one-sided ("the runtime's rate is higher"): hung and crashed
 * children with Fisher's exact test, on counts shrunk by how much more they vary from chunk to
 * chunk than independent children would (the dispersion); any failure, which the loader's
 * assertion dominates and whose rate moves with each arm process's timing, with a sign test over the
 * chunks (the runtime's rate against plain's in the same rotation). With six tests (three classes,
 * two workloads), a p-value under 0.05 / 6 reads "worse" (Bonferroni: under 5 % for the whole run
 * when the runtime is no worse). The table gives each rate's 95 % upper bound (one-sided Clopper-Pearson;
 * 3/n with no events), the rate that the counts still leave plausible. Exit status: 0, 1 when the
 * runtime is worse (unless --no-judge), 2 when the benchmark could not run. Everything it loads is
 * built at run time with $NVI_CC from tests/fixtures and bench/. */
#define _GNU_SOURCE
#include "bench.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <gnu/libc-version.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum fork_arm { FORK_PLAIN, FORK_EMPTY, FORK_RUNTIME, FORK_ARMS };
static const char *const arm_names[FORK_ARMS] = { "plain", "empty preload", "runtime" };

enum outcome { OUTCOME_OK, OUTCOME_HUNG, OUTCOME_CRASHED, OUTCOME_ASSERTED, OUTCOME_FAILED, OUTCOMES };

enum workload { WORKLOAD_NVIDIA, WORKLOAD_OTHER, WORKLOADS };
static const char *const workload_names[WORKLOADS] = { "nvidia", "other" };

#define HELD "site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.77"
#define HELD_SONAME "libnvrtc.so.77"
#define CYCLED "site-packages/nvidia/cublas/lib/libcublas.so.77"
#define CYCLED_SONAME "libcublas.so.77"
#define OTHER "other/libother.so.77"
#define OTHER_SONAME "libother.so.77"
#define FRESH "other/libfresh.so.77"
#define EMPTY "empty.so"
#define TESTS (3 * WORKLOADS)

/* ---- One arm process: the threads, the forks, the counts ---------------------------------------- */

static const char *cycled_path, *other_path;
static enum workload workload;
static atomic_bool done;

static void *load_and_unload(void *arg)
{
	long id = (long)arg;
	bool nvidia = workload == WORKLOAD_NVIDIA;
	for (unsigned long i = 0; !atomic_load(&done); i++) {
		void *handle = NULL;
		switch ((i + (unsigned long)id) % 4) {
		case 0: handle = dlopen(nvidia ? cycled_path : other_path, RTLD_NOW); break;
		case 1: handle = dlopen(other_path, RTLD_LAZY); break;
		case 2: handle = dlopen(nvidia && i / 4 % 2 ? MISSING_NVIDIA : MISSING_OTHER, RTLD_NOW); break;
		default: handle = dlopen(nvidia ? CYCLED_SONAME : OTHER_SONAME, RTLD_NOW | RTLD_NOLOAD);
		}
		if (handle)
			dlclose(handle);
	}
	return NULL;
}

/* The forked child: the hot path's calls and a call into the library, then a first load of a
   library the parent does not have (where a fork that caught the loader between unmapping
   ld.so.cache and forgetting it loses what it maps). */
static int repeated_loads(const char *held, const char *fresh, unsigned timeout)
{
	alarm(timeout);
	int null = open("/dev/null", O_WRONLY);
	if (null >= 0)
		dup2(null, 2); /* the loader's assertion message; the outcome is counted */
	void *by_path = dlopen(held, RTLD_NOW);
	void *by_soname = dlopen(HELD_SONAME, RTLD_NOW);
	int (*release)(void) = by_path ? (int (*)(void))dlsym(by_path, "nvrtc_like_release") : NULL;
	if (!by_path || !by_soname || !release || release() != -1)
		return 3;
	void *first = dlopen(fresh, RTLD_NOW);
	int (*value)(void) = first ? (int (*)(void))dlsym(first, "builtins_value") : NULL;
	return value && value() == 42 ? 0 : 3;
}

static enum outcome outcome_of(int status)
{
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGALRM ? OUTCOME_HUNG : OUTCOME_CRASHED;
	if (WEXITSTATUS(status) == 127)
		return OUTCOME_ASSERTED;
	return WEXITSTATUS(status) == 0 ? OUTCOME_OK : OUTCOME_FAILED;
}

/* bench-fork --arm WORKLOAD DIR FORKS THREADS TIMEOUT: prints the five counts on one line. */
static int arm_main(char **argv)
{
	workload = strcmp(argv[0], "other") == 0 ? WORKLOAD_OTHER : WORKLOAD_NVIDIA;
	const char *dir = argv[1];
	int forks = atoi(argv[2]), threads = atoi(argv[3]);
	unsigned timeout = (unsigned)atoi(argv[4]);
	char held[4096], cycled[4096], other[4096], fresh[4096];
	snprintf(held, sizeof(held), "%s/" HELD, dir);
	snprintf(fresh, sizeof(fresh), "%s/" FRESH, dir);
	snprintf(cycled, sizeof(cycled), "%s/" CYCLED, dir);
	snprintf(other, sizeof(other), "%s/" OTHER, dir);
	cycled_path = cycled;
	other_path = other;
	if (!dlopen(held, RTLD_NOW)) {
		fprintf(stderr, "bench-fork: %s\n", dlerror());
		return 2;
	}
	pthread_t ids[64];
	if (threads > 64)
		threads = 64;
	for (long t = 0; t < threads; t++)
		pthread_create(&ids[t], NULL, load_and_unload, (void *)t);
	long counts[OUTCOMES] = { 0 };
	for (int f = 0; f < forks; f++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(repeated_loads(held, fresh, timeout));
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			counts[OUTCOME_FAILED]++;
		else
			counts[outcome_of(status)]++;
	}
	atomic_store(&done, true);
	for (int t = 0; t < threads; t++)
		pthread_join(ids[t], NULL);
	for (int o = 0; o < OUTCOMES; o++)
		printf("%ld%c", counts[o], o + 1 < OUTCOMES ? ' ' : '\n');
	return 0;
}

/* ---- The parent: building, the rounds, the table ------------------------------------------------ */

struct settings {
	long forks, chunk;
	int threads, timeout;
	int only; /* a workload, or -1 for both */
	bool judge;
	char dir[1024], self[4096], libraries[FORK_ARMS][4096];
};

static struct settings settings = { .forks = 2000, .chunk = 100, .threads = 3, .timeout = 2, .only = -1, .judge = true };

static bool run_shell(const char *command)
{
	char *argv[] = { "/bin/sh", "-c", (char *)command, NULL };
	pid_t pid;
	int status;
	if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-fork: failed: %s\n", command);
		return false;
	}
	return true;
}

static bool build(void)
{
	const char *cc = getenv("NVI_CC"), *fixtures = getenv("NVI_FIXTURES"), *sources = getenv("NVI_BENCH_SOURCES");
	const char *runtime = getenv("NVI_RUNTIME");
	if (!cc || !fixtures || !sources || !runtime) {
		fprintf(stderr, "bench-fork: NVI_CC, NVI_FIXTURES, NVI_BENCH_SOURCES and NVI_RUNTIME must be set (meson test --benchmark sets them)\n");
		return false;
	}
	char *commands[] = {
		bench_format("cd '%s' && mkdir -p site-packages/nvidia/cuda_nvrtc/lib site-packages/nvidia/cublas/lib other", settings.dir),
		bench_format("'%s' -shared -fPIC -O1 -o '%s/" HELD "' -Wl,-soname," HELD_SONAME " '%s/nvrtc_like.c'", cc, settings.dir, fixtures),
		bench_format("'%s' -shared -fPIC -O1 -o '%s/" CYCLED "' -Wl,-soname," CYCLED_SONAME " '%s/value.c'", cc, settings.dir, fixtures),
		bench_format("'%s' -shared -fPIC -O1 -o '%s/" OTHER "' -Wl,-soname," OTHER_SONAME " '%s/value.c'", cc, settings.dir, fixtures),
		bench_format("'%s' -shared -fPIC -O1 -o '%s/" FRESH "' -Wl,-soname,libfresh.so.77 '%s/value.c'", cc, settings.dir, fixtures),
		bench_format("'%s' -shared -fPIC -O1 -o '%s/" EMPTY "' '%s/empty.c'", cc, settings.dir, sources),
	};
	bool ok = true;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		ok = ok && run_shell(commands[i]);
		free(commands[i]);
	}
	snprintf(settings.libraries[FORK_EMPTY], sizeof(settings.libraries[0]), "%s/" EMPTY, settings.dir);
	snprintf(settings.libraries[FORK_RUNTIME], sizeof(settings.libraries[0]), "%s", runtime);
	return ok;
}

/* One chunk of forks in one arm process; false when the process itself did not finish in time or
   did not report (its chunk is then counted as failed). */
static bool run_chunk(enum workload w, enum fork_arm arm, long forks, long counts[OUTCOMES])
{
	int out[2];
	if (pipe(out) != 0)
		return false;
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, out[1], 1);
	posix_spawn_file_actions_addclose(&actions, out[0]);
	char forks_text[32], threads_text[16], timeout_text[16];
	snprintf(forks_text, sizeof(forks_text), "%ld", forks);
	snprintf(threads_text, sizeof(threads_text), "%d", settings.threads);
	snprintf(timeout_text, sizeof(timeout_text), "%d", settings.timeout);
	char *argv[] = { settings.self, "--arm", (char *)workload_names[w], settings.dir, forks_text, threads_text, timeout_text, NULL };
	char **env = bench_environment(settings.libraries[arm], NULL);
	pid_t pid;
	int spawned = posix_spawn(&pid, settings.self, &actions, NULL, argv, env);
	posix_spawn_file_actions_destroy(&actions);
	close(out[1]);
	bench_free_environment(env);
	if (spawned != 0) {
		close(out[0]);
		return false;
	}
	/* Every child may take the whole timeout; the rest is the arm's own start-up and its threads. */
	long long deadline_ms = (long long)forks * settings.timeout * 1000 + 120000;
	char text[256];
	size_t used = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	bool finished = false;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long spent = (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (spent >= deadline_ms)
			break;
		struct pollfd poll_fd = { .fd = out[0], .events = POLLIN };
		int ready = poll(&poll_fd, 1, (int)(deadline_ms - spent > 1000 ? 1000 : deadline_ms - spent));
		if (ready < 0 && errno != EINTR)
			break;
		if (ready <= 0)
			continue;
		ssize_t n = read(out[0], text + used, sizeof(text) - 1 - used);
		if (n <= 0) {
			finished = n == 0;
			break;
		}
		used += (size_t)n;
	}
	close(out[0]);
	if (!finished)
		kill(pid, SIGKILL);
	int status = 0;
	waitpid(pid, &status, 0);
	text[used] = '\0';
	long got[OUTCOMES];
	bool reported = finished && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
			sscanf(text, "%ld %ld %ld %ld %ld", &got[0], &got[1], &got[2], &got[3], &got[4]) == OUTCOMES;
	if (!reported) {
		counts[OUTCOME_FAILED] += forks;
		return false;
	}
	for (int o = 0; o < OUTCOMES; o++)
		counts[o] += got[o];
	return true;
}

static long total(const long counts[OUTCOMES])
{
	long n = 0;
	for (int o = 0; o < OUTCOMES; o++)
		n += counts[o];
	return n;
}

static void print_counts(enum workload w, long counts[FORK_ARMS][OUTCOMES])
{
	printf("\nworkload %s: %d threads loading and unloading; children make repeated loads of a loaded NVIDIA library, then a first load\n",
	       workload_names[w], settings.threads);
	printf("%-14s %7s %7s %7s %7s %9s %7s   %s\n", "arm", "forks", "ok", "hung", "crashed", "assertion", "failed",
	       "95% upper bound: hung, crashed, any failure");
	for (int a = 0; a < FORK_ARMS; a++) {
		long *c = counts[a], n = total(c), failures = n - c[OUTCOME_OK];
		printf("%-14s %7ld %7ld %7ld %7ld %9ld %7ld   %.2f%%, %.2f%%, %.2f%%\n", arm_names[a], n, c[OUTCOME_OK], c[OUTCOME_HUNG],
		       c[OUTCOME_CRASHED], c[OUTCOME_ASSERTED], c[OUTCOME_FAILED], 100 * bench_rate_upper_bound(c[OUTCOME_HUNG], n, 0.95),
		       100 * bench_rate_upper_bound(c[OUTCOME_CRASHED], n, 0.95), 100 * bench_rate_upper_bound(failures, n, 0.95));
	}
}

enum event_class { CLASS_HUNG, CLASS_CRASHED, CLASS_ANY, CLASSES };
static const char *const class_names[CLASSES] = { "hung", "crashed", "any failure" };

static long events(const long counts[OUTCOMES], enum event_class class)
{
	return class == CLASS_HUNG ? counts[OUTCOME_HUNG] : class == CLASS_CRASHED ? counts[OUTCOME_CRASHED] : total(counts) - counts[OUTCOME_OK];
}

/* How much more a class's counts vary from chunk to chunk than children that fail independently
   would (Pearson's chi-square over each arm's chunks, per degree of freedom; at least 1). The
   loader's assertion, for one, comes in runs: an arm process whose threads happen to sit in the
   loader more often meets it in many children. */
static double dispersion(long (*chunks)[FORK_ARMS][OUTCOMES], long n_chunks, enum event_class class)
{
	static const enum fork_arm compared[] = { FORK_PLAIN, FORK_RUNTIME };
	double chi = 0;
	long degrees = 0;
	for (size_t i = 0; i < sizeof(compared) / sizeof(compared[0]); i++) {
		long k = 0, n = 0;
		for (long c = 0; c < n_chunks; c++) {
			k += events(chunks[c][compared[i]], class);
			n += total(chunks[c][compared[i]]);
		}
		double rate = n ? (double)k / (double)n : 0;
		if (rate <= 0 || rate >= 1 || n_chunks < 2)
			continue;
		for (long c = 0; c < n_chunks; c++) {
			double expected = (double)total(chunks[c][compared[i]]) * rate;
			double off = (double)events(chunks[c][compared[i]], class) - expected;
			chi += off * off / (expected * (1 - rate));
		}
		degrees += n_chunks - 1;
	}
	return degrees && chi / (double)degrees > 1 ? chi / (double)degrees : 1;
}

/* True when the runtime is worse than plain for one of the classes. Hangs and crashes: Fisher's
   test, which assumes children that fail independently, on counts shrunk by their dispersion first
   (the effective number of children). Any failure, mostly the loader's assertion, whose rate moves
   with each arm process's timing far beyond that: a sign test over the chunks, the runtime's rate
   against plain's in the same rotation. */
static bool judge(long counts[FORK_ARMS][OUTCOMES], long (*chunks)[FORK_ARMS][OUTCOMES], long n_chunks)
{
	bool worse = false;
	printf("runtime against plain (worse when p < 0.05/%d):\n", TESTS);
	for (int class = 0; class < CLASSES; class++) {
		double p;
		if (class == CLASS_ANY) {
			long more = 0, less = 0;
			for (long c = 0; c < n_chunks; c++) {
				const long *runtime = chunks[c][FORK_RUNTIME], *plain = chunks[c][FORK_PLAIN];
				double difference = (double)events(runtime, CLASS_ANY) / (double)(total(runtime) ? total(runtime) : 1) -
						    (double)events(plain, CLASS_ANY) / (double)(total(plain) ? total(plain) : 1);
				more += difference > 0;
				less += difference < 0;
			}
			p = bench_sign_test_greater(more, less);
			printf("  %s: higher in %ld of %ld chunks, lower in %ld: sign test p=%.3g", class_names[class], more, n_chunks, less, p);
		} else {
			double d = dispersion(chunks, n_chunks, (enum event_class)class);
			long k_runtime = events(counts[FORK_RUNTIME], (enum event_class)class);
			long k_plain = events(counts[FORK_PLAIN], (enum event_class)class);
			p = bench_fisher_greater(lround((double)k_runtime / d), lround((double)total(counts[FORK_RUNTIME]) / d),
						 lround((double)k_plain / d), lround((double)total(counts[FORK_PLAIN]) / d));
			printf("  %s: %ld against %ld: Fisher p=%.3g (dispersion %.1f)", class_names[class], k_runtime, k_plain, p, d);
		}
		bool this_worse = p < 0.05 / TESTS;
		worse = worse || this_worse;
		printf("%s\n", this_worse ? ": WORSE" : "");
	}
	return worse;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench-fork [--forks N] [--chunk C] [--threads T] [--timeout S] [--only nvidia|other] [--no-judge]\n"
		     "  --forks N    children per arm and workload (default 2000)\n"
		     "  --chunk C    children per arm process; arms alternate between chunks (default 100)\n"
		     "  --threads T  threads loading and unloading in each arm process (default 3)\n"
		     "  --timeout S  seconds a child may take before it counts as hung (default 2)\n"
		     "  --only W     one workload: nvidia or other (default both)\n"
		     "  --no-judge   exit 0 whatever the counts (the machinery alone)\n");
}

static bool parse_options(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(argv[i], "--no-judge") == 0) {
			settings.judge = false;
		} else if (value && strcmp(argv[i], "--forks") == 0 && (settings.forks = atol(value)) > 0) {
			i++;
		} else if (value && strcmp(argv[i], "--chunk") == 0 && (settings.chunk = atol(value)) > 0) {
			i++;
		} else if (value && strcmp(argv[i], "--threads") == 0 && (settings.threads = atoi(value)) > 0) {
			i++;
		} else if (value && strcmp(argv[i], "--timeout") == 0 && (settings.timeout = atoi(value)) > 0) {
			i++;
		} else if (value && strcmp(argv[i], "--only") == 0 && (strcmp(value, "nvidia") == 0 || strcmp(value, "other") == 0)) {
			settings.only = strcmp(value, "other") == 0 ? WORKLOAD_OTHER : WORKLOAD_NVIDIA;
			i++;
		} else {
			fprintf(stderr, "bench-fork: bad option %s\n", argv[i]);
			usage(stderr);
			return false;
		}
	}
	return true;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "--arm") == 0)
		return arm_main(argv + 2);
	if (!parse_options(argc, argv))
		return 2;
	ssize_t length = readlink("/proc/self/exe", settings.self, sizeof(settings.self) - 1);
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(settings.dir, sizeof(settings.dir), "%s/bench-fork-XXXXXX", tmp);
	if (length <= 0 || !mkdtemp(settings.dir)) {
		perror("bench-fork");
		return 2;
	}
	settings.self[length] = '\0';
	int status = 0;
	if (!build()) {
		status = 2;
		goto out;
	}
	long chunks = (settings.forks + settings.chunk - 1) / settings.chunk;
	printf("bench-fork: glibc %s, %ld CPUs; %ld children per arm and workload in chunks of %ld, %d s each\n",
	       gnu_get_libc_version(), sysconf(_SC_NPROCESSORS_ONLN), settings.forks, settings.chunk, settings.timeout);
	for (int w = 0; w < WORKLOADS; w++) {
		if (settings.only >= 0 && settings.only != w)
			continue;
		long counts[FORK_ARMS][OUTCOMES] = { { 0 } };
		long (*chunk_counts)[FORK_ARMS][OUTCOMES] = calloc((size_t)chunks, sizeof(*chunk_counts));
		int lost = 0;
		for (long c = 0; chunk_counts && c < chunks; c++) {
			long forks = c + 1 < chunks ? settings.chunk : settings.forks - c * settings.chunk;
			for (int k = 0; k < FORK_ARMS; k++) {
				enum fork_arm arm = (enum fork_arm)((c + k) % FORK_ARMS); /* which arm goes first rotates */
				if (!run_chunk((enum workload)w, arm, forks, chunk_counts[c][arm]))
					lost++;
				for (int o = 0; o < OUTCOMES; o++)
					counts[arm][o] += chunk_counts[c][arm][o];
			}
		}
		if (!chunk_counts) {
			status = 2;
			goto out;
		}
		print_counts((enum workload)w, counts);
		if (lost)
			printf("%d arm processes did not finish or report; their children count as failed\n", lost);
		if (judge(counts, chunk_counts, chunks) && settings.judge)
			status = 1;
		free(chunk_counts);
	}
out:
	bench_remove_tree(settings.dir);
	return status;
}
