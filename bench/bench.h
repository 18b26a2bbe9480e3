/* The dlopen benchmark: what the parent (bench_dlopen.c: rounds, arms, the table) and each child
   (workload.c: one process set up and timed) share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The four processes each case is measured in. The empty preload is the floor: any preloaded
   library costs the loader one more object to walk on every dlopen. */
enum arm { ARM_PLAIN, ARM_EMPTY, ARM_FORWARDER, ARM_RUNTIME, ARM_COUNT };

/* A kind of child process: what it loads before timing, and its cases. */
enum group_kind {
	GROUP_REPEATED,   /* N stand-ins loaded, then repeated loads of loaded and missing names */
	GROUP_SLOW,       /* L entries in LD_LIBRARY_PATH, 100 registered origins, bare NVIDIA names */
	GROUP_ATTACH,     /* 500 stand-ins loaded, then the arm's library dlopen'ed late */
	GROUP_FIRST_LOADS, /* the toolkit's libraries loaded once each, by path */
	GROUP_PYTHON,      /* python3 -c pass, a whole process timed by the parent */
	GROUP_NEEDS        /* repeated loads of an NVIDIA stand-in that needs libdl, libpthread and librt */
};

#define BENCH_MAX_CASES 8
#define BENCH_OBJECTS 500 /* stand-ins built: the most a repeated group loads, and what attach loads */
#define BENCH_ORIGINS 100 /* origin folders built; the slow path's M is which of them holds the name */
#define BENCH_LD_ENTRIES 100
#define BENCH_MAX_TOOLKIT 20

struct bench_case {
	const char *title;
	const char *target; /* the aim, as the table prints it ("" when none) */
	double limit;       /* the aim as a number: a ratio, or nanoseconds over the floor */
};

/* The cases of a group, in the order a child prints their values. param is N, L, or the number of
   toolkit libraries. */
size_t bench_cases(enum group_kind kind, int param, const struct bench_case **cases);

/* A string printed as by printf, allocated (the benchmark aborts when memory runs out). */
char *bench_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Removes folder and everything in it (links are not followed). */
void bench_remove_tree(const char *folder);

/* The current environment without LD_PRELOAD and LD_LIBRARY_PATH, plus those given (NULL or ""
   for none); freed with bench_free_environment. */
char **bench_environment(const char *preload, const char *library_path);
void bench_free_environment(char **env);

/* Whether name is one of the comma-separated list's items (an --only list). */
bool bench_in_list(const char *list, const char *name);

/* The q-quantile of the finite values among n (linear between ranks); NAN when there are none. */
double bench_quantile(const double *values, size_t n, double q);

/* Fisher's exact test, one-sided: the probability of k1 or more events of n1 trials in the first
   group when k2 of n2 fell in the second and both share one rate (small: the first is worse). */
double bench_fisher_greater(long k1, long n1, long k2, long n2);
/* The highest event rate that k events in n trials leave plausible at that confidence (one-sided
   Clopper-Pearson; 0.95: 3/n for k = 0). */
double bench_rate_upper_bound(long k, long n, double confidence);
/* The sign test, one-sided: the probability that more or more of more + less differing pairs
   favour the first when neither is favoured. */
double bench_sign_test_greater(long more, long less);

/* The toolkit libraries the first-loads case loads, present in folder, as paths; how many. */
size_t bench_toolkit_libraries(const char *folder, char paths[][4096], size_t capacity);

/* The child's entry point: bench-dlopen --child KIND PARAM ARM DIR BLOCKS BLOCK_MS [LIBRARY].
   Prints one line a case: nanoseconds (per call, or for the one call of a single-shot case), or
   "- REASON" when the case cannot run in this process. */
int workload_main(int argc, char **argv);

/* ---- The tree the parent builds and the children load (under the benchmark's folder) ---------- */
/* The preloads lie side by side, each with a SONAME, as real libraries have: the loader compares a
   dlopen'ed name with every object's names, and what that costs depends on the strings. */
#define LAYOUT_EMPTY "libempty.so"
#define LAYOUT_FORWARDER "libforwarder.so"
#define LAYOUT_RUNTIME "libnvinterpose.so.0"
#define LAYOUT_OBJECT "objects/libstandin_%03d.so.77"
#define LAYOUT_NVRTC_DIR "site-packages/nvidia/cuda_nvrtc/lib"
#define LAYOUT_NVRTC LAYOUT_NVRTC_DIR "/libnvrtc.so.77"
#define LAYOUT_BUILTINS LAYOUT_NVRTC_DIR "/libnvrtc-builtins.so.77"
/* The same NVRTC-like stand-in, needing libdl.so.2, libpthread.so.0 and librt.so.1 as every real
   NVIDIA library does: where one is loaded, so are they, for every arm alike. */
#define LAYOUT_NVRTC_NEEDS "site-packages/nvidia/cuda_nvrtc_needs/lib/libnvrtc.so.77"
#define LAYOUT_CYCLED "site-packages/nvidia/cublas/lib/libcublas.so.77"
#define LAYOUT_PYTHON "python/libpython3.77.so.1.0"
#define LAYOUT_ORIGIN "origins/%03d"
#define LAYOUT_LD_ENTRY "ld-library-path/%03d"

/* The slow path's names: each lies only in the M-th registered origin. */
struct slow_name {
	int origin; /* M */
	const char *name;
};
extern const struct slow_name bench_slow_names[3];

#define MISSING_OTHER "libmissing.so.77"
#define MISSING_NVIDIA "libcublas.so.99"
