/* dlopen with the runtime against the plain loader, interleaved in one run.
 *
 *   bench-dlopen [--rounds R] [--iterations N]     (meson benchmark runs this)
 *
 * Each round starts one child without and one with LD_PRELOAD=$NVI_RUNTIME (alternating which goes
 * first); each child times N calls of one case and prints nanoseconds per call. The table gives the
 * median of the rounds and the ratio with/without. Cases:
 *   nvidia-path    dlopen+dlclose of an already-loaded NVIDIA library by path
 *   nvidia-soname  the same by soname
 *   other-soname   dlopen+dlclose of an already-loaded non-NVIDIA library (libz.so.1)
 *   fallback       the bare-name dependent that only a registered origin holds, loaded and
 *                  unloaded (without the runtime: the same file by full path, which is the least
 *                  a Python loader helper must do after its own search)
 *   first-load     one dlopen of libcublasLt.so.13 by path in a fresh process (the toolkit's;
 *                  skipped where it is absent)
 *   python-start   a whole `python3 -c pass` (skipped without python3)
 * Stand-ins are built at run time with $NVI_CC from $NVI_FIXTURES. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int measure(const char *kind, const char *dir, long n)
{
	char nvidia[4096], builtins[4096];
	snprintf(nvidia, sizeof(nvidia), "%s/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", dir);
	snprintf(builtins, sizeof(builtins), "%s/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.9", dir);
	if (strcmp(kind, "first-load") == 0) {
		double start = now_ns();
		void *h = dlopen(dir, RTLD_NOW); /* dir is the library's path here */
		printf("%.1f\n", now_ns() - start);
		return h ? 0 : 1;
	}
	void *keep = dlopen(nvidia, RTLD_NOW);
	void *z = dlopen("libz.so.1", RTLD_NOW);
	if (!keep || !z)
		return 1;
	/* The bare-name case goes through a library of the nvrtc family: its caller must be one. */
	void *(*load_builtins)(void) = (void *(*)(void))dlsym(keep, "nvrtc_like_open_builtins");
	double start = now_ns();
	for (long i = 0; i < n; i++) {
		void *h = NULL;
		if (strcmp(kind, "nvidia-path") == 0)
			h = dlopen(nvidia, RTLD_NOW);
		else if (strcmp(kind, "nvidia-soname") == 0)
			h = dlopen("libnvrtc.so.12", RTLD_NOW);
		else if (strcmp(kind, "other-soname") == 0)
			h = dlopen("libz.so.1", RTLD_NOW);
		else if (strcmp(kind, "fallback") == 0)
			h = getenv("LD_PRELOAD") ? load_builtins() : dlopen(builtins, RTLD_NOW);
		if (!h)
			return 1;
		dlclose(h);
	}
	printf("%.1f\n", (now_ns() - start) / n);
	return 0;
}

static double run_child(const char *self, const char *kind, const char *dir, long n, const char *preload)
{
	char command[8192];
	snprintf(command, sizeof(command), "%s%s%s '%s' --measure %s '%s' %ld", preload ? "LD_PRELOAD='" : "",
		 preload ? preload : "", preload ? "'" : "", self, kind, dir, n);
	FILE *p = popen(command, "r");
	double value = -1;
	if (!p || fscanf(p, "%lf", &value) != 1)
		value = -1;
	if (p)
		pclose(p);
	return value;
}

/* A whole process: python3 -c pass, with or without the runtime preloaded. The interpreter itself,
   not a wrapper script in front of it (pyenv's shims start several processes). */
static char python[4096];

static bool find_python(void)
{
	FILE *p = popen("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", "r");
	bool found = p && fgets(python, sizeof(python), p) && python[0] == '/';
	if (p)
		pclose(p);
	python[strcspn(python, "\n")] = '\0';
	return found;
}

static double run_python(const char *preload)
{
	char command[8192];
	snprintf(command, sizeof(command), "%s%s%s '%s' -c pass", preload ? "LD_PRELOAD='" : "", preload ? preload : "",
		 preload ? "'" : "", python);
	double start = now_ns();
	int status = system(command);
	return status == 0 ? now_ns() - start : -1;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), compare);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int build(const char *dir)
{
	const char *cc = getenv("NVI_CC"), *fixtures = getenv("NVI_FIXTURES");
	char command[8192];
	snprintf(command, sizeof(command),
		 "set -e; d='%s/site-packages/nvidia/cuda_nvrtc/lib'; mkdir -p \"$d\"; "
		 "'%s' -shared -fPIC -O2 -o \"$d/libnvrtc.so.12\" -Wl,-soname,libnvrtc.so.12 '%s/nvrtc_like.c' -ldl; "
		 "'%s' -shared -fPIC -O2 -o \"$d/libnvrtc-builtins.so.12.9\" -Wl,-soname,libnvrtc-builtins.so.12.9 '%s/value.c'",
		 dir, cc ? cc : "cc", fixtures, cc ? cc : "cc", fixtures);
	return system(command);
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "--measure") == 0)
		return measure(argv[2], argv[3], atol(argv[4]));
	int rounds = 21;
	long iterations = 20000;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
			iterations = atol(argv[++i]);
		else {
			printf("usage: bench-dlopen [--rounds R] [--iterations N]\n");
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}
	const char *runtime = getenv("NVI_RUNTIME");
	if (!runtime || !getenv("NVI_FIXTURES")) {
		fprintf(stderr, "bench-dlopen: NVI_RUNTIME and NVI_FIXTURES must be set (meson benchmark sets them)\n");
		return 2;
	}
	char dir[] = "/tmp/nvinterpose-bench-XXXXXX";
	if (!mkdtemp(dir) || build(dir) != 0)
		return 1;
	char self[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[k > 0 ? k : 0] = '\0';
	static const char *const kinds[] = { "nvidia-path", "nvidia-soname", "other-soname", "fallback", "first-load", "python-start" };
	const char *cublaslt = getenv("NVI_CUBLASLT") ? getenv("NVI_CUBLASLT") : "/usr/local/cuda/lib64/libcublasLt.so.13";
	printf("%-14s %12s %12s %8s   (medians of %d rounds; ns per call, or per process)\n", "case", "plain", "runtime", "ratio", rounds);
	int status = 0;
	for (size_t c = 0; c < sizeof(kinds) / sizeof(kinds[0]); c++) {
		double plain[64], with[64];
		bool process = strcmp(kinds[c], "first-load") == 0 || strcmp(kinds[c], "python-start") == 0;
		long n = process ? 1 : strcmp(kinds[c], "fallback") == 0 ? iterations / 20 : iterations;
		const char *where = strcmp(kinds[c], "first-load") == 0 ? cublaslt : dir;
		if (strcmp(kinds[c], "first-load") == 0 && access(cublaslt, R_OK) != 0) {
			printf("%-14s skipped: no %s\n", kinds[c], cublaslt);
			continue;
		}
		if (strcmp(kinds[c], "python-start") == 0 && !find_python()) {
			printf("%-14s skipped: no python3\n", kinds[c]);
			continue;
		}
		for (int r = 0; r < rounds && r < 64; r++) {
			/* Alternate which goes first, so that neither always finds the caches warm. */
			for (int turn = 0; turn < 2; turn++) {
				bool preload = (r + turn) % 2;
				double value = strcmp(kinds[c], "python-start") == 0
						       ? run_python(preload ? runtime : NULL)
						       : run_child(self, kinds[c], where, n, preload ? runtime : NULL);
				(preload ? with : plain)[r] = value;
				if (value < 0)
					status = 1;
			}
		}
		double p = median(plain, rounds), w = median(with, rounds);
		printf("%-14s %12.1f %12.1f %7.3fx\n", kinds[c], p, w, w / p);
	}
	char cleanup[4200];
	snprintf(cleanup, sizeof(cleanup), "rm -rf '%s'", dir);
	if (system(cleanup) != 0)
		status = 1;
	return status;
}
