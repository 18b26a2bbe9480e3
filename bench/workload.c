/* One child of the dlopen benchmark: a process set up as its group needs (stand-ins loaded, origins
 * registered), then its cases timed in thread CPU time, so that time the scheduler gives to other
 * processes is not counted. Each case is calibrated to blocks of about BLOCK_MS, runs one block to
 * warm up, then BLOCKS blocks interleaved with the other cases'; the child prints each case's
 * median block. Every case is resolved to what dlopen is given before any timing: the timed loop is
 * the same few instructions for every case. */
#define _GNU_SOURCE
#include "bench.h"

#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const struct slow_name bench_slow_names[3] = {
	{ 1, "libcufft.so.77" },
	{ 10, "libcurand.so.77" },
	{ 100, "libcusparse.so.77" },
};

size_t bench_cases(enum group_kind kind, int param, const struct bench_case **cases)
{
	static char titles[BENCH_MAX_CASES][128];
	static struct bench_case table[BENCH_MAX_CASES];
	size_t n = 0;
#define ADD(target_text, limit_value, ...)                                                    \
	do {                                                                                   \
		snprintf(titles[n], sizeof(titles[n]), __VA_ARGS__);                           \
		table[n] = (struct bench_case){ titles[n], target_text, limit_value };         \
		n++;                                                                           \
	} while (0)
	switch (kind) {
	case GROUP_REPEATED: {
		bool crowded = param >= 10;
		ADD(crowded ? "≤ 1.03×" : "≤ 1.06×", crowded ? 1.03 : 1.06, "NVIDIA by path, N=%d", param);
		ADD(crowded ? "≤ 1.03×" : "≤ 1.06×", crowded ? 1.03 : 1.06, "NVIDIA by soname, N=%d", param);
		ADD("≤ 1.03×", 1.03, "`libz.so.1`, N=%d", param);
		ADD("≤ 1.03×", 1.03, "`libm.so.6`, N=%d", param);
		ADD("≤ 1.03×", 1.03, "`libpython3.77.so.1.0`, N=%d", param);
		ADD("≤ 1.03×", 1.03, "missing `%s`, N=%d", MISSING_OTHER, param);
		ADD("≤ 1.15×", 1.15, "missing NVIDIA `%s`, N=%d", MISSING_NVIDIA, param);
		ADD(param == BENCH_OBJECTS ? "≤ 1.05×" : "", param == BENCH_OBJECTS ? 1.05 : NAN,
		    "NVIDIA load+unload by path, N=%d", param);
		break;
	}
	case GROUP_SLOW:
		for (size_t i = 0; i < sizeof(bench_slow_names) / sizeof(bench_slow_names[0]); i++)
			ADD("", NAN, "slow path M=%d, L=%d (floor: by full path)", bench_slow_names[i].origin, param);
		ADD("", NAN, "L=%d: missing `%s` (the loader's search)", param, MISSING_OTHER);
		break;
	case GROUP_ATTACH:
		ADD("≤ +50 µs", 50e3, "late attach (dlopen of the library), %d objects", BENCH_OBJECTS);
		ADD("", NAN, "`nvi_rescan`, %d objects (floor: one `dl_iterate_phdr` walk)", BENCH_OBJECTS);
		break;
	case GROUP_FIRST_LOADS:
		ADD("≤ 1.01×", 1.01, "first loads of %d toolkit libraries, by path", param);
		break;
	case GROUP_PYTHON:
		ADD("≤ 1.01×", 1.01, "`python3 -c pass` (the whole process)");
		break;
	case GROUP_NEEDS:
		ADD("≤ 1.06×", 1.06, "NVIDIA by path, it needing libdl, libpthread, librt");
		ADD("≤ 1.06×", 1.06, "NVIDIA by soname, it needing libdl, libpthread, librt");
		ADD("≤ 1.03×", 1.03, "`libz.so.1`, beside it");
		ADD("≤ 1.03×", 1.03, "`libm.so.6`, beside it");
		break;
	}
#undef ADD
	*cases = table;
	return n;
}

/* A preference list: the libraries a CUDA stack loads first; the toolkit may lack some (cuDNN and
   NCCL come from their own packages). */
size_t bench_toolkit_libraries(const char *folder, char paths[][4096], size_t capacity)
{
	static const char *const names[] = {
		"libcudart.so.13", "libnvrtc.so.13", "libnvrtc-builtins.so.13.0", "libnvJitLink.so.13",
		"libcublasLt.so.13", "libcublas.so.13", "libcufft.so.12", "libcurand.so.10", "libcusparse.so.12",
		"libcusolver.so.12", "libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9",
		"libcudnn_cnn.so.9", "libcudnn_adv.so.9", "libcudnn_heuristic.so.9", "libnccl.so.2",
		"libcupti.so.13", "libnvvm.so.4", "libnvtx3interop.so.1", "libcufftw.so.12", "libnvblas.so.13",
		"libcusolverMg.so.12", "libnvperf_host.so", "libcheckpoint.so",
	};
	size_t n = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && n < capacity; i++) {
		snprintf(paths[n], sizeof(paths[n]), "%s/%s", folder, names[i]);
		if (access(paths[n], R_OK) == 0)
			n++;
	}
	return n;
}

static double thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* A timed case: dlopen(file, mode) and, when it succeeded, dlclose; or a call of op. */
struct timed_case {
	char file[4096];
	int mode;
	bool loads; /* whether dlopen must succeed */
	int (*op)(void);
	const char *skip; /* why it cannot run here; NULL when it can */
	double single;    /* a single-shot case's one measurement; NAN when this arm has none */
	long count;
	double samples[64];
};

static double dlopen_block(const char *file, int mode, long count)
{
	double start = thread_cpu_ns();
	for (long i = 0; i < count; i++) {
		void *handle = dlopen(file, mode);
		if (handle)
			dlclose(handle);
		else
			dlerror();
	}
	return (thread_cpu_ns() - start) / (double)count;
}

static double op_block(int (*op)(void), long count)
{
	double start = thread_cpu_ns();
	for (long i = 0; i < count; i++)
		op();
	return (thread_cpu_ns() - start) / (double)count;
}

static double run_block(const struct timed_case *c, long count)
{
	return c->op ? op_block(c->op, count) : dlopen_block(c->file, c->mode, count);
}

/* The loop count that makes a block take about block_ns. */
static long calibrate(const struct timed_case *c, double block_ns)
{
	for (long count = 1;; count *= 2) {
		double per_call = run_block(c, count);
		if (per_call * (double)count >= block_ns / 8 || count >= (1L << 28)) {
			double wanted = block_ns / (per_call > 1 ? per_call : 1);
			return wanted < 1 ? 1 : (long)wanted;
		}
	}
}

/* The outcome the case is about (loaded, or not found), checked once before timing. */
static bool check_outcome(const struct timed_case *c)
{
	if (c->op)
		return true;
	void *handle = dlopen(c->file, c->mode);
	if ((handle != NULL) != c->loads) {
		fprintf(stderr, "bench-dlopen: dlopen(%s) %s\n", c->file, handle ? "succeeded where it must fail" : dlerror());
		if (handle)
			dlclose(handle);
		return false;
	}
	if (handle)
		dlclose(handle);
	else
		dlerror();
	return true;
}

static void *keep(const char *file)
{
	void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
	if (!handle)
		fprintf(stderr, "bench-dlopen: cannot load %s: %s\n", file, dlerror());
	return handle;
}

/* The N stand-ins, loaded first: NVIDIA libraries come late in a big process, after the objects the
   loader compares a name with before it reaches them. */
static bool load_objects(const char *dir, int n)
{
	for (int i = 0; i < n; i++) {
		char path[4096], name[64];
		snprintf(name, sizeof(name), LAYOUT_OBJECT, i);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (!keep(path))
			return false;
	}
	return true;
}

static void set_dlopen(struct timed_case *c, bool loads, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void set_dlopen(struct timed_case *c, bool loads, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(c->file, sizeof(c->file), format, args);
	va_end(args);
	c->mode = RTLD_NOW;
	c->loads = loads;
}

static bool set_up_repeated(const char *dir, int n, struct timed_case *cases)
{
	if (!load_objects(dir, n))
		return false;
	char nvrtc[4096], python[4096];
	snprintf(nvrtc, sizeof(nvrtc), "%s/%s", dir, LAYOUT_NVRTC);
	snprintf(python, sizeof(python), "%s/%s", dir, LAYOUT_PYTHON);
	if (!keep(nvrtc) || !keep(python) || !keep("libm.so.6"))
		return false;
	set_dlopen(&cases[0], true, "%s", nvrtc);
	set_dlopen(&cases[1], true, "libnvrtc.so.77");
	set_dlopen(&cases[2], true, "libz.so.1");
	if (!dlopen("libz.so.1", RTLD_NOW)) /* kept: loaded once, then repeated */
		cases[2].skip = "no libz.so.1 on this machine";
	set_dlopen(&cases[3], true, "libm.so.6");
	set_dlopen(&cases[4], true, "libpython3.77.so.1.0");
	set_dlopen(&cases[5], false, MISSING_OTHER);
	set_dlopen(&cases[6], false, MISSING_NVIDIA);
	set_dlopen(&cases[7], true, "%s/%s", dir, LAYOUT_CYCLED);
	/* Loaded and unloaded once before any case runs, as the cycling case will: the runtime has then
	   registered its folder, so every case sees the same registry, whichever runs first. */
	void *cycled = keep(cases[7].file);
	if (!cycled)
		return false;
	dlclose(cycled);
	return true;
}

/* Repeated loads in a process that has loaded an NVIDIA library, which brings libdl.so.2,
   libpthread.so.0 and librt.so.1 with it. */
static bool set_up_needs(const char *dir, struct timed_case *cases)
{
	char nvrtc[4096];
	snprintf(nvrtc, sizeof(nvrtc), "%s/%s", dir, LAYOUT_NVRTC_NEEDS);
	if (!keep(nvrtc) || !keep("libm.so.6"))
		return false;
	set_dlopen(&cases[0], true, "%s", nvrtc);
	set_dlopen(&cases[1], true, "libnvrtc.so.77");
	set_dlopen(&cases[2], true, "libz.so.1");
	if (!dlopen("libz.so.1", RTLD_NOW))
		cases[2].skip = "no libz.so.1 on this machine";
	set_dlopen(&cases[3], true, "libm.so.6");
	return true;
}

/* The runtime arm registers every origin folder; the others load the file by full path, the least
   a loader helper that found it must do. */
static bool set_up_slow(const char *dir, enum arm arm, struct timed_case *cases)
{
	if (arm == ARM_RUNTIME) {
		int (*register_folder)(const char *, const char *) =
			(int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "nvi_register_folder");
		for (int i = 0; register_folder && i < BENCH_ORIGINS; i++) {
			char folder[4096];
			snprintf(folder, sizeof(folder), "%s/" LAYOUT_ORIGIN, dir, i);
			if (register_folder("cufft", folder) != 0)
				register_folder = NULL;
		}
		if (!register_folder) {
			fprintf(stderr, "bench-dlopen: nvi_register_folder is missing or failed\n");
			return false;
		}
	}
	size_t i = 0;
	for (; i < sizeof(bench_slow_names) / sizeof(bench_slow_names[0]); i++) {
		const struct slow_name *slow = &bench_slow_names[i];
		if (arm == ARM_RUNTIME)
			set_dlopen(&cases[i], true, "%s", slow->name);
		else
			set_dlopen(&cases[i], true, "%s/" LAYOUT_ORIGIN "/%s", dir, slow->origin - 1, slow->name);
	}
	set_dlopen(&cases[i], false, MISSING_OTHER);
	return true;
}

static int count_object(struct dl_phdr_info *info, size_t size, void *count)
{
	(void)info, (void)size;
	++*(int *)count;
	return 0;
}

/* What any scan of the loaded objects must do at least. */
static int walk_objects(void)
{
	int count = 0;
	dl_iterate_phdr(count_object, &count);
	return count;
}

static bool set_up_attach(const char *dir, enum arm arm, const char *library, struct timed_case *cases)
{
	char path[4096];
	if (!load_objects(dir, BENCH_OBJECTS))
		return false;
	/* NVRTC and its builtins are loaded: the scan finds nothing to do, and what it costs is the scan. */
	snprintf(path, sizeof(path), "%s/%s", dir, LAYOUT_NVRTC);
	if (!keep(path))
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, LAYOUT_BUILTINS);
	if (!keep(path))
		return false;
	cases[1].op = walk_objects;
	if (arm == ARM_PLAIN)
		return true; /* nothing to attach: no value */
	double start = thread_cpu_ns();
	void *handle = dlopen(library, RTLD_NOW);
	cases[0].single = thread_cpu_ns() - start;
	if (!handle) {
		fprintf(stderr, "bench-dlopen: cannot attach %s: %s\n", library, dlerror());
		return false;
	}
	if (arm == ARM_RUNTIME && !(cases[1].op = (int (*)(void))dlsym(handle, "nvi_rescan"))) {
		fprintf(stderr, "bench-dlopen: %s has no nvi_rescan\n", library);
		return false;
	}
	return true;
}

/* Once each, by path, as ctypes loads (RTLD_NOW): the one process-wide CPU time of all the loads,
   since a library's constructor may start threads. */
static bool first_loads(const char *folder, struct timed_case *c)
{
	static char paths[BENCH_MAX_TOOLKIT][4096];
	size_t n = bench_toolkit_libraries(folder, paths, BENCH_MAX_TOOLKIT);
	if (n == 0) {
		c->skip = "no toolkit";
		return true;
	}
	struct timespec start, end;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
	for (size_t i = 0; i < n; i++)
		if (!dlopen(paths[i], RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "bench-dlopen: cannot load %s: %s\n", paths[i], dlerror());
			return false;
		}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end);
	c->single = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
	return true;
}

/* Cases measured once a process (a first load, an attach): no blocks. */
static bool is_single(enum group_kind kind, size_t i)
{
	return (kind == GROUP_ATTACH && i == 0) || kind == GROUP_FIRST_LOADS;
}

int workload_main(int argc, char **argv)
{
	if (argc < 8) {
		fprintf(stderr, "bench-dlopen: --child KIND PARAM ARM DIR BLOCKS BLOCK_MS [LIBRARY]\n");
		return 2;
	}
	enum group_kind kind = (enum group_kind)atoi(argv[2]);
	int param = atoi(argv[3]);
	enum arm arm = (enum arm)atoi(argv[4]);
	const char *dir = argv[5];
	int blocks = atoi(argv[6]);
	double block_ns = atof(argv[7]) * 1e6;
	const char *library = argc > 8 ? argv[8] : "";
	const struct bench_case *titles;
	size_t n = bench_cases(kind, param, &titles);
	static struct timed_case cases[BENCH_MAX_CASES];
	if (blocks < 1 || blocks > (int)(sizeof(cases[0].samples) / sizeof(cases[0].samples[0])))
		return 2;
	for (size_t i = 0; i < n; i++)
		cases[i].single = NAN;
	bool ready = false;
	switch (kind) {
	case GROUP_REPEATED:
		ready = set_up_repeated(dir, param, cases);
		break;
	case GROUP_SLOW:
		ready = set_up_slow(dir, arm, cases);
		break;
	case GROUP_ATTACH:
		ready = set_up_attach(dir, arm, library, cases);
		break;
	case GROUP_FIRST_LOADS:
		ready = first_loads(dir, &cases[0]);
		break;
	case GROUP_PYTHON:
		break;
	case GROUP_NEEDS:
		ready = set_up_needs(dir, cases);
		break;
	}
	if (!ready)
		return 1;
	for (size_t i = 0; i < n; i++) {
		struct timed_case *c = &cases[i];
		if (c->skip || is_single(kind, i))
			continue;
		if (!check_outcome(c))
			return 1;
		c->count = calibrate(c, block_ns);
		run_block(c, c->count); /* warm-up */
	}
	for (int b = 0; b < blocks; b++)
		for (size_t i = 0; i < n; i++)
			if (!cases[i].skip && !is_single(kind, i))
				cases[i].samples[b] = run_block(&cases[i], cases[i].count);
	for (size_t i = 0; i < n; i++) {
		if (cases[i].skip)
			printf("- %s\n", cases[i].skip);
		else
			printf("%.3f\n", is_single(kind, i) ? cases[i].single : bench_quantile(cases[i].samples, (size_t)blocks, 0.5));
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
