/* dlopen with the runtime against the floor: the plain loader, an empty preloaded library (what any
 * preload costs), a preload whose dlopen only tail-jumps into libc's (what any interposer costs) and
 * the runtime, measured in one run.
 *
 *   bench-dlopen [--rounds R] [--blocks K] [--block-ms T] [--only LIST] [--raw] [--keep]
 *
 * Each round starts, for every group of cases, one child process per arm, in an order that rotates
 * from round to round; each child sets itself up (workload.c) and times its cases in thread CPU time.
 * The table gives, for each arm, the median over the rounds, and runtime/floor: the median of the
 * rounds' own ratios runtime / empty preload, with the middle half of those ratios, so that a slow
 * moment of the machine weighs on both sides of a ratio, never on one; runtime/forwarder likewise
 * against the least that an interposer of dlopen costs. Everything it loads is built
 * at run time with $NVI_CC: the arms' libraries from bench/ and stand-ins from tests/fixtures, with
 * sonames no package ships (.so.77), so that no installed library can answer for them. */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gnu/libc-version.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 1001
#define MAX_GROUPS 12

extern char **environ;

static const char *const arm_names[ARM_COUNT] = { "plain", "empty preload", "forwarder", "runtime" };

struct settings {
	int rounds, blocks;
	double block_ms;
	const char *only;
	bool keep, raw;
	const char *cc, *fixtures, *sources, *runtime;
	char toolkit[4096], dir[1024], self[4096], python[4096];
	char libraries[ARM_COUNT][4096]; /* each arm's library ("" for plain, or when it could not be built) */
};

struct group {
	enum group_kind kind;
	int param;
	char name[32]; /* what --only names it by */
	size_t count;
	struct bench_case cases[BENCH_MAX_CASES];
	char titles[BENCH_MAX_CASES][128];
	char skip[BENCH_MAX_CASES][256];
	double *values[BENCH_MAX_CASES][ARM_COUNT]; /* per round; NAN where it did not run */
};

static struct settings settings;

/* ---- Building ----------------------------------------------------------------------------------- */

static int wait_for(pid_t pid, struct rusage *usage)
{
	int status;
	while (wait4(pid, &status, 0, usage) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs the shell commands, as many at a time as there are CPUs; false when one failed. */
static bool run_commands(char **commands, size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t parallel = cpus > 1 ? (size_t)cpus : 1, next = 0, running = 0;
	pid_t pids[64];
	size_t which[64];
	bool ok = true;
	if (parallel > 64)
		parallel = 64;
	while (next < n || running > 0) {
		while (next < n && running < parallel) {
			char *argv[] = { "/bin/sh", "-c", commands[next], NULL };
			if (posix_spawn(&pids[running], "/bin/sh", NULL, NULL, argv, environ) != 0) {
				fprintf(stderr, "bench-dlopen: cannot run /bin/sh\n");
				return false;
			}
			which[running++] = next++;
		}
		int status;
		pid_t done = wait(&status);
		for (size_t i = 0; i < running; i++)
			if (pids[i] == done) {
				if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
					fprintf(stderr, "bench-dlopen: failed: %s\n", commands[which[i]]);
					ok = false;
				}
				pids[i] = pids[running - 1];
				which[i] = which[running - 1];
				running--;
				break;
			}
	}
	return ok;
}

static bool make_folders(const char *path)
{
	char copy[4096];
	snprintf(copy, sizeof(copy), "%s", path);
	for (char *s = copy + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(copy, 0755);
			*s = '/';
		}
	return mkdir(copy, 0755) == 0 || errno == EEXIST;
}

/* One stand-in linked from the one compiled value.o, with its own soname. */
static char *standin(const char *relative_path)
{
	const char *base = strrchr(relative_path, '/') + 1;
	return bench_format("'%s' -shared -o '%s/%s' -Wl,-soname,%s '%s/value.o'", settings.cc, settings.dir, relative_path,
		      base, settings.dir);
}

static bool build_tree(int objects)
{
	const char *dir = settings.dir;
	char path[4096];
	static const char *const folders[] = { "objects", "python", LAYOUT_NVRTC_DIR, "site-packages/nvidia/cublas/lib",
					       "site-packages/nvidia/cuda_nvrtc_needs/lib" };
	for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, folders[i]);
		if (!make_folders(path))
			return false;
	}
	for (int i = 0; i < BENCH_ORIGINS || i < BENCH_LD_ENTRIES; i++) {
		snprintf(path, sizeof(path), "%s/" LAYOUT_ORIGIN, dir, i);
		if (i < BENCH_ORIGINS && !make_folders(path))
			return false;
		snprintf(path, sizeof(path), "%s/" LAYOUT_LD_ENTRY, dir, i);
		if (i < BENCH_LD_ENTRIES && !make_folders(path))
			return false;
	}
	char *first[] = {
		bench_format("'%s' -c -fPIC -O2 -o '%s/value.o' '%s/value.c'", settings.cc, dir, settings.fixtures),
		bench_format("'%s' -shared -fPIC -O2 -o '%s/" LAYOUT_EMPTY "' -Wl,-soname," LAYOUT_EMPTY " '%s/empty.c'", settings.cc, dir,
		       settings.sources),
		bench_format("cp '%s' '%s/" LAYOUT_RUNTIME "'", settings.runtime, dir),
	};
	bool ok = run_commands(first, 3);
	free(first[0]), free(first[1]), free(first[2]);
	if (!ok)
		return false;
	snprintf(settings.libraries[ARM_EMPTY], sizeof(settings.libraries[ARM_EMPTY]), "%s/" LAYOUT_EMPTY, dir);
	snprintf(settings.libraries[ARM_RUNTIME], sizeof(settings.libraries[ARM_RUNTIME]), "%s/" LAYOUT_RUNTIME, dir);

	/* The forwarder is a stub in assembly: where it cannot be built, its column says so. It needs
	   libdl.so.2 where dlsym lives there (before glibc 2.34), nothing since, as the runtime. */
	char *forwarder = bench_format("'%s' -shared -fPIC -O2 -o '%s/" LAYOUT_FORWARDER "' -Wl,-soname," LAYOUT_FORWARDER
				 " '%s/forwarder.c' '%s/forwarder.S' -ldl",
				 settings.cc, dir, settings.sources, settings.sources);
	if (run_commands(&forwarder, 1))
		snprintf(settings.libraries[ARM_FORWARDER], sizeof(settings.libraries[ARM_FORWARDER]), "%s/" LAYOUT_FORWARDER, dir);
	else
		fprintf(stderr, "bench-dlopen: the forwarder arm is left out: it could not be built (its stub is x86-64 only)\n");
	free(forwarder);

	size_t n = 0;
	char *commands[BENCH_OBJECTS + 16];
	for (int i = 0; i < objects; i++) {
		snprintf(path, sizeof(path), LAYOUT_OBJECT, i);
		commands[n++] = standin(path);
	}
	commands[n++] = standin(LAYOUT_PYTHON);
	commands[n++] = standin(LAYOUT_BUILTINS);
	commands[n++] = standin(LAYOUT_CYCLED);
	for (size_t i = 0; i < sizeof(bench_slow_names) / sizeof(bench_slow_names[0]); i++) {
		snprintf(path, sizeof(path), LAYOUT_ORIGIN "/%s", bench_slow_names[i].origin - 1, bench_slow_names[i].name);
		commands[n++] = standin(path);
	}
	commands[n++] = bench_format("'%s' -shared -fPIC -O2 -o '%s/" LAYOUT_NVRTC "' -Wl,-soname,libnvrtc.so.77 "
			       "'-DBUILTINS=\"libnvrtc-builtins.so.77\"' '%s/nvrtc_like.c' -ldl",
			       settings.cc, dir, settings.fixtures);
	commands[n++] = bench_format("'%s' -shared -fPIC -O2 -o '%s/" LAYOUT_NVRTC_NEEDS "' -Wl,-soname,libnvrtc.so.77 "
			       "'-DBUILTINS=\"libnvrtc-builtins.so.77\"' '%s/nvrtc_like.c' -Wl,--no-as-needed -l:libdl.so.2 "
			       "-l:libpthread.so.0 -l:librt.so.1 -Wl,--as-needed",
			       settings.cc, dir, settings.fixtures);
	ok = run_commands(commands, n);
	for (size_t i = 0; i < n; i++)
		free(commands[i]);
	return ok;
}

/* ---- Running the children ------------------------------------------------------------------------ */

/* python3 -c pass: the CPU time of the whole process (user and system, from wait4). */
static double run_python(enum arm arm)
{
	char *argv[] = { settings.python, "-c", "pass", NULL };
	char **env = bench_environment(settings.libraries[arm], NULL);
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	struct rusage usage;
	int error = posix_spawn(&pid, settings.python, &actions, NULL, argv, env);
	posix_spawn_file_actions_destroy(&actions);
	bench_free_environment(env);
	if (error != 0 || wait_for(pid, &usage) != 0)
		return NAN;
	return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e9 +
	       (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e3;
}

/* The first entries of the benchmark's LD_LIBRARY_PATH folders, ':'-separated. */
static char *ld_library_path(int entries)
{
	char *list = calloc((size_t)entries, strlen(settings.dir) + 32), *s = list;
	for (int i = 0; i < entries; i++)
		s += sprintf(s, "%s%s/" LAYOUT_LD_ENTRY, i ? ":" : "", settings.dir, i);
	return list;
}

/* One child: its values go to round r of the group's cases; false when it failed. */
static bool run_child(struct group *g, enum arm arm, int r)
{
	if (g->kind == GROUP_PYTHON) {
		g->values[0][arm][r] = run_python(arm);
		return !isnan(g->values[0][arm][r]);
	}
	char kind[16], param[16], arm_text[16], blocks[16], block_ms[32];
	snprintf(kind, sizeof(kind), "%d", (int)g->kind);
	snprintf(param, sizeof(param), "%d", g->param);
	snprintf(arm_text, sizeof(arm_text), "%d", (int)arm);
	snprintf(blocks, sizeof(blocks), "%d", settings.blocks);
	snprintf(block_ms, sizeof(block_ms), "%g", settings.block_ms);
	const char *where = g->kind == GROUP_FIRST_LOADS ? settings.toolkit : settings.dir;
	char *argv[] = { settings.self, "--child", kind, param, arm_text, (char *)where, blocks, block_ms,
			 settings.libraries[arm], NULL };
	/* Attached late, not preloaded: the child dlopens the arm's library itself. */
	char *library_path = g->kind == GROUP_SLOW ? ld_library_path(g->param) : NULL;
	char **env = bench_environment(g->kind == GROUP_ATTACH ? NULL : settings.libraries[arm], library_path);
	free(library_path);
	int out[2];
	if (pipe2(out, O_CLOEXEC) != 0)
		return false;
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO); /* dup2 clears O_CLOEXEC */
	pid_t pid;
	int error = posix_spawn(&pid, settings.self, &actions, NULL, argv, env);
	posix_spawn_file_actions_destroy(&actions);
	bench_free_environment(env);
	close(out[1]);
	if (error != 0) {
		close(out[0]);
		return false;
	}
	FILE *f = fdopen(out[0], "r");
	char line[256];
	size_t i = 0;
	while (f && i < g->count && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '-' && line[1] == ' ')
			snprintf(g->skip[i], sizeof(g->skip[i]), "%s", line + 2);
		else
			g->values[i][arm][r] = strtod(line, NULL);
		i++;
	}
	if (f)
		fclose(f);
	int status = wait_for(pid, NULL);
	if (status != 0 || i != g->count) {
		fprintf(stderr, "bench-dlopen: the %s child of \"%s\" failed (status %d)\n", arm_names[arm], g->titles[0], status);
		return false;
	}
	return true;
}

/* ---- The table ------------------------------------------------------------------------------------- */

struct row {
	char title[160];
	const double *arm[ARM_COUNT]; /* per round; NULL where the arm has no value */
	const double *floor;          /* what the runtime is compared with, per round */
	bool difference;              /* runtime - floor; otherwise runtime / floor */
	const char *target;
	double limit;
	const char *skip;
};

static void format_time(char *out, size_t size, double ns, bool sign)
{
	const char *prefix = sign ? (ns < 0 ? "−" : "+") : "";
	double a = fabs(ns);
	if (isnan(ns))
		snprintf(out, size, "—");
	else if (a < 1e3)
		snprintf(out, size, "%s%.1f ns", prefix, a);
	else if (a < 1e6)
		snprintf(out, size, "%s%.*f µs", prefix, a < 1e4 ? 2 : a < 1e5 ? 1 : 0, a / 1e3);
	else if (a < 1e9)
		snprintf(out, size, "%s%.*f ms", prefix, a < 1e7 ? 2 : a < 1e8 ? 1 : 0, a / 1e6);
	else
		snprintf(out, size, "%s%.2f s", prefix, a / 1e9);
}

#define COLUMNS 8
#define MAX_ROWS 64

/* Width on a terminal: UTF-8 continuation bytes take no column. */
static size_t display_width(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The runtime against another arm, paired per round (runtime - other, or runtime / other), as the
   median with the middle half: into cell; the median, NAN where there is nothing to compare. */
static double compare(const struct row *row, const double *other, char *cell, size_t size)
{
	double compared[MAX_ROUNDS];
	for (int r = 0; r < settings.rounds; r++) {
		double runtime = row->arm[ARM_RUNTIME] ? row->arm[ARM_RUNTIME][r] : NAN;
		double against = other ? other[r] : NAN;
		compared[r] = row->difference ? runtime - against : runtime / against;
	}
	size_t rounds = (size_t)settings.rounds;
	double mid = bench_quantile(compared, rounds, 0.5), low = bench_quantile(compared, rounds, 0.25),
	       high = bench_quantile(compared, rounds, 0.75);
	if (isnan(mid))
		snprintf(cell, size, "—");
	else if (row->difference) {
		char m[64], l[64], h[64];
		format_time(m, sizeof(m), mid, true);
		format_time(l, sizeof(l), low, true);
		format_time(h, sizeof(h), high, true);
		snprintf(cell, size, "%s (%s … %s)", m, l, h);
	} else
		snprintf(cell, size, "%.3f× (%.3f–%.3f)", mid, low, high);
	return mid;
}

static void print_table(const struct row *rows, size_t n)
{
	static char cells[MAX_ROWS + 1][COLUMNS][200];
	static const char *const header[COLUMNS] = { "case", "plain", "empty preload", "forwarder", "runtime", "runtime/floor", "runtime/forwarder", "target" };
	size_t width[COLUMNS] = { 0 };
	for (int c = 0; c < COLUMNS; c++)
		snprintf(cells[0][c], sizeof(cells[0][c]), "%s", header[c]);
	for (size_t i = 0; i < n; i++) {
		const struct row *row = &rows[i];
		char (*cell)[200] = cells[i + 1];
		snprintf(cell[0], sizeof(cell[0]), "%.*s", (int)sizeof(row->title), row->title);
		for (int c = 1; c < COLUMNS; c++)
			cell[c][0] = '\0';
		if (row->skip) {
			snprintf(cell[1], sizeof(cell[1]), "skipped: %s", row->skip);
			continue;
		}
		for (int a = 0; a < ARM_COUNT; a++)
			format_time(cell[1 + a], sizeof(cell[1 + a]), row->arm[a] ? bench_quantile(row->arm[a], (size_t)settings.rounds, 0.5) : NAN, false);
		double mid = compare(row, row->floor, cell[5], sizeof(cell[5]));
		compare(row, row->floor == row->arm[ARM_EMPTY] ? row->arm[ARM_FORWARDER] : NULL, cell[6], sizeof(cell[6]));
		if (row->target && row->target[0])
			snprintf(cell[7], sizeof(cell[7]), "%s%s", row->target, isnan(mid) ? "" : mid <= row->limit ? " (met)" : " (over)");
	}
	for (size_t i = 0; i <= n; i++)
		for (int c = 0; c < COLUMNS; c++)
			if (display_width(cells[i][c]) > width[c])
				width[c] = display_width(cells[i][c]);
	for (size_t i = 0; i <= n; i++) {
		for (int c = 0; c < COLUMNS; c++)
			printf("| %s%*s ", cells[i][c], (int)(width[c] - display_width(cells[i][c])), "");
		printf("|\n");
		if (i == 0) {
			for (int c = 0; c < COLUMNS; c++) {
				printf("|");
				for (size_t k = 0; k < width[c] + 2; k++)
					putchar('-');
			}
			printf("|\n");
		}
	}
}

static void print_raw(const struct row *rows, size_t n)
{
	printf("\n");
	for (size_t i = 0; i < n; i++)
		for (int a = 0; a < ARM_COUNT; a++) {
			if (!rows[i].arm[a] || rows[i].skip)
				continue;
			printf("%s\t%s", rows[i].title, arm_names[a]);
			for (int r = 0; r < settings.rounds; r++)
				printf("\t%.1f", rows[i].arm[a][r]);
			printf("\n");
		}
}

/* Per round: (a - b) / steps, the cost of one more folder between two cases. */
static double *slope(const double *a, const double *b, double steps)
{
	double *out = calloc((size_t)settings.rounds, sizeof(*out));
	for (int r = 0; r < settings.rounds; r++)
		out[r] = a && b ? (a[r] - b[r]) / steps : NAN;
	return out;
}

static struct group *find_group(struct group *groups, size_t n, enum group_kind kind, int param)
{
	for (size_t i = 0; i < n; i++)
		if (groups[i].kind == kind && groups[i].param == param && groups[i].count)
			return &groups[i];
	return NULL;
}

static struct row *add_row(struct row *rows, size_t *n, const struct group *group, size_t c)
{
	struct row *row = &rows[(*n)++];
	memset(row, 0, sizeof(*row));
	if (!group)
		return row;
	snprintf(row->title, sizeof(row->title), "%s", group->titles[c]);
	for (int a = 0; a < ARM_COUNT; a++)
		row->arm[a] = settings.libraries[a][0] || a == ARM_PLAIN ? group->values[c][a] : NULL;
	row->floor = row->arm[ARM_EMPTY];
	row->difference = group->kind == GROUP_ATTACH;
	row->target = group->cases[c].target;
	row->limit = group->cases[c].limit;
	row->skip = group->skip[c][0] ? group->skip[c] : NULL;
	return row;
}

/* The slow path's growth, against the loader's own cost per folder it searches: a missing name
   over L = 1 and 100 entries, with the empty preload. */
static void add_slope_rows(struct row *rows, size_t *n, struct group *groups, size_t group_count)
{
	const int narrow = 1, wide = BENCH_LD_ENTRIES;
	struct group *l1 = find_group(groups, group_count, GROUP_SLOW, narrow),
		     *l100 = find_group(groups, group_count, GROUP_SLOW, wide);
	if (!l1 || !l100)
		return;
	size_t missing = sizeof(bench_slow_names) / sizeof(bench_slow_names[0]), last = missing - 1;
	struct row *loader = add_row(rows, n, NULL, 0);
	snprintf(loader->title, sizeof(loader->title), "the loader's search, per `LD_LIBRARY_PATH` entry (a missing name)");
	for (int a = 0; a < ARM_COUNT; a++)
		if (settings.libraries[a][0] || a == ARM_PLAIN)
			loader->arm[a] = slope(l100->values[missing][a], l1->values[missing][a], wide - narrow);
	loader->floor = loader->arm[ARM_EMPTY];

	struct row *origin = add_row(rows, n, NULL, 0);
	snprintf(origin->title, sizeof(origin->title), "slow path, per registered origin (M=%d→%d, L=%d; floor: the loader's per entry)",
		 bench_slow_names[0].origin, bench_slow_names[last].origin, narrow);
	origin->arm[ARM_RUNTIME] = slope(l1->values[last][ARM_RUNTIME], l1->values[0][ARM_RUNTIME],
					 bench_slow_names[last].origin - bench_slow_names[0].origin);
	origin->floor = loader->arm[ARM_EMPTY];
	origin->target = "≤ 1×";
	origin->limit = 1.0;

	struct row *entry = add_row(rows, n, NULL, 0);
	snprintf(entry->title, sizeof(entry->title), "slow path, per `LD_LIBRARY_PATH` entry (L=%d→%d, M=%d; floor: the loader's per entry)",
		 narrow, wide, bench_slow_names[0].origin);
	entry->arm[ARM_RUNTIME] = slope(l100->values[0][ARM_RUNTIME], l1->values[0][ARM_RUNTIME], wide - narrow);
	entry->floor = loader->arm[ARM_EMPTY];
	entry->target = "≤ 1×";
	entry->limit = 1.0;
}

/* Repeated loads one name after another, each at every N; then the slow path and its growth; then
   the rest in the groups' order. */
static size_t make_rows(struct group *groups, size_t group_count, struct row *rows)
{
	size_t n = 0;
	for (size_t c = 0; c < BENCH_MAX_CASES; c++)
		for (size_t g = 0; g < group_count; g++)
			if (groups[g].kind == GROUP_REPEATED && c < groups[g].count)
				add_row(rows, &n, &groups[g], c);
	for (size_t g = 0; g < group_count; g++)
		if (groups[g].kind == GROUP_SLOW)
			for (size_t c = 0; c < groups[g].count; c++)
				add_row(rows, &n, &groups[g], c);
	add_slope_rows(rows, &n, groups, group_count);
	for (size_t g = 0; g < group_count; g++)
		if (groups[g].kind != GROUP_REPEATED && groups[g].kind != GROUP_SLOW)
			for (size_t c = 0; c < groups[g].count; c++)
				add_row(rows, &n, &groups[g], c);
	return n;
}

/* ---- Main ------------------------------------------------------------------------------------------ */

static bool find_python(void)
{
	FILE *p = popen("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", "r");
	bool found = p && fgets(settings.python, sizeof(settings.python), p) && settings.python[0] == '/';
	if (p)
		pclose(p);
	settings.python[strcspn(settings.python, "\n")] = '\0';
	return found;
}

static void describe_machine(void)
{
	char model[256] = "unknown CPU", line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	struct utsname u;
	uname(&u);
	printf("dlopen against the floor: glibc %s, Linux %s %s, %s, %ld CPUs\n", gnu_get_libc_version(), u.release, u.machine,
	       model, sysconf(_SC_NPROCESSORS_ONLN));
	printf("%d rounds, the arms' order rotated each round; each child times each case in %d blocks of about %g ms of "
	       "thread CPU time and gives its median block.\n",
	       settings.rounds, settings.blocks, settings.block_ms);
	printf("Columns: the median over the rounds. runtime/floor: the median of the rounds' own runtime / empty-preload "
	       "ratios (their middle half).\n\n");
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench-dlopen [--rounds R] [--blocks K] [--block-ms T] [--only LIST] [--raw] [--keep]\n"
		     "  --rounds R     rounds of every arm (default 21, or $NVI_BENCH_ROUNDS)\n"
		     "  --blocks K     timed blocks a case in each child (default 5)\n"
		     "  --block-ms T   thread CPU time a block aims at (default 2)\n"
		     "  --only LIST    only these groups, comma-separated: N=0 N=10 N=100 N=500 (repeated loads with N objects\n"
		     "                 loaded), L=1 L=20 L=100 (the slow path), attach, first-loads, python, needs (repeated\n"
		     "                 loads beside an NVIDIA stand-in that needs libdl, libpthread and librt)\n"
		     "  --raw          after the table, every round's value of every row and arm (tab-separated, ns)\n"
		     "  --keep         keep the folder of built libraries\n"
		     "Needs NVI_RUNTIME, NVI_CC, NVI_FIXTURES and NVI_BENCH_SOURCES (meson test --benchmark sets them);\n"
		     "NVI_CUDA_HOME names the toolkit (default /usr/local/cuda).\n");
}

/* Reads the options; 0 to go on, otherwise the exit status. */
static int parse_options(int argc, char **argv)
{
	const char *rounds = getenv("NVI_BENCH_ROUNDS");
	settings.rounds = rounds && rounds[0] ? atoi(rounds) : 21;
	settings.blocks = 5;
	settings.block_ms = 2;
	for (int i = 1; i < argc; i++) {
		bool more = i + 1 < argc;
		if (strcmp(argv[i], "--rounds") == 0 && more)
			settings.rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--blocks") == 0 && more)
			settings.blocks = atoi(argv[++i]);
		else if (strcmp(argv[i], "--block-ms") == 0 && more)
			settings.block_ms = atof(argv[++i]);
		else if (strcmp(argv[i], "--only") == 0 && more)
			settings.only = argv[++i];
		else if (strcmp(argv[i], "--keep") == 0)
			settings.keep = true;
		else if (strcmp(argv[i], "--raw") == 0)
			settings.raw = true;
		else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return -1;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (settings.rounds < 1 || settings.rounds > MAX_ROUNDS || settings.blocks < 1 || settings.blocks > 64 ||
	    !(settings.block_ms > 0)) {
		fprintf(stderr, "bench-dlopen: rounds must be 1-%d, blocks 1-64, block-ms above 0\n", MAX_ROUNDS);
		return 2;
	}
	settings.runtime = getenv("NVI_RUNTIME");
	settings.cc = getenv("NVI_CC");
	settings.fixtures = getenv("NVI_FIXTURES");
	settings.sources = getenv("NVI_BENCH_SOURCES");
	if (!settings.runtime || !settings.cc || !settings.fixtures || !settings.sources) {
		fprintf(stderr, "bench-dlopen: NVI_RUNTIME, NVI_CC, NVI_FIXTURES and NVI_BENCH_SOURCES must be set "
				"(meson test --benchmark sets them)\n");
		return 2;
	}
	const char *cuda = getenv("NVI_CUDA_HOME") && getenv("NVI_CUDA_HOME")[0] ? getenv("NVI_CUDA_HOME") : "/usr/local/cuda";
	snprintf(settings.toolkit, sizeof(settings.toolkit), "%s/lib64", cuda);
	const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
	if ((size_t)snprintf(settings.dir, sizeof(settings.dir), "%s/nvinterpose-bench-XXXXXX", tmp) >= sizeof(settings.dir)) {
		fprintf(stderr, "bench-dlopen: TMPDIR is too long: %s\n", tmp);
		return 2;
	}
	/* The build commands quote paths in single quotes. */
	const char *quoted[] = { settings.runtime, settings.cc, settings.fixtures, settings.sources, settings.dir };
	for (size_t i = 0; i < sizeof(quoted) / sizeof(quoted[0]); i++)
		if (strchr(quoted[i], '\'')) {
			fprintf(stderr, "bench-dlopen: a path with a single quote is not supported: %s\n", quoted[i]);
			return 2;
		}
	ssize_t k = readlink("/proc/self/exe", settings.self, sizeof(settings.self) - 1);
	settings.self[k > 0 ? k : 0] = '\0';
	return 0;
}

static void name_group(struct group *group)
{
	static const char *const names[] = { [GROUP_ATTACH] = "attach", [GROUP_FIRST_LOADS] = "first-loads",
					     [GROUP_PYTHON] = "python", [GROUP_NEEDS] = "needs" };
	const struct bench_case *cases;
	group->count = bench_cases(group->kind, group->param, &cases);
	for (size_t c = 0; c < group->count; c++) {
		snprintf(group->titles[c], sizeof(group->titles[c]), "%s", cases[c].title);
		group->cases[c] = cases[c];
		group->cases[c].title = group->titles[c];
	}
	if (group->kind == GROUP_REPEATED)
		snprintf(group->name, sizeof(group->name), "N=%d", group->param);
	else if (group->kind == GROUP_SLOW)
		snprintf(group->name, sizeof(group->name), "L=%d", group->param);
	else
		snprintf(group->name, sizeof(group->name), "%s", names[group->kind]);
}

/* Every group, or those --only names; how many. */
static size_t select_groups(struct group *groups)
{
	static const int objects[] = { 0, 10, 100, BENCH_OBJECTS };
	static const int entries[] = { 1, 20, BENCH_LD_ENTRIES };
	static char toolkit_paths[BENCH_MAX_TOOLKIT][4096];
	int toolkit_count = (int)bench_toolkit_libraries(settings.toolkit, toolkit_paths, BENCH_MAX_TOOLKIT);
	struct group all[MAX_GROUPS];
	size_t n = 0, kept = 0;
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		all[n++] = (struct group){ .kind = GROUP_REPEATED, .param = objects[i] };
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		all[n++] = (struct group){ .kind = GROUP_SLOW, .param = entries[i] };
	all[n++] = (struct group){ .kind = GROUP_ATTACH, .param = BENCH_OBJECTS };
	all[n++] = (struct group){ .kind = GROUP_FIRST_LOADS, .param = toolkit_count ? toolkit_count : BENCH_MAX_TOOLKIT };
	all[n++] = (struct group){ .kind = GROUP_PYTHON };
	all[n++] = (struct group){ .kind = GROUP_NEEDS };
	for (size_t g = 0; g < n; g++) {
		struct group *group = &all[g];
		name_group(group);
		if (settings.only && !bench_in_list(settings.only, group->name))
			continue;
		if (group->kind == GROUP_FIRST_LOADS && toolkit_count == 0)
			snprintf(group->skip[0], sizeof(group->skip[0]), "no toolkit libraries in %.200s", settings.toolkit);
		if (group->kind == GROUP_PYTHON && !find_python())
			snprintf(group->skip[0], sizeof(group->skip[0]), "no python3");
		for (size_t c = 0; c < group->count; c++)
			for (int a = 0; a < ARM_COUNT; a++) {
				group->values[c][a] = malloc((size_t)settings.rounds * sizeof(double));
				for (int r = 0; r < settings.rounds; r++)
					group->values[c][a][r] = NAN;
			}
		groups[kept++] = *group;
	}
	return kept;
}

/* The most stand-ins a selected group loads: only those are built. */
static int objects_needed(const struct group *groups, size_t n)
{
	int most = 0;
	for (size_t g = 0; g < n; g++)
		if ((groups[g].kind == GROUP_REPEATED || groups[g].kind == GROUP_ATTACH) && groups[g].param > most)
			most = groups[g].param;
	return most;
}

/* Every round runs every group's arms, in an order that rotates: no arm always runs first, or
   always just after another. */
static bool run_rounds(struct group *groups, size_t n, const struct timespec *began)
{
	enum arm arms[ARM_COUNT];
	int arm_count = 0;
	bool ok = true;
	for (int a = 0; a < ARM_COUNT; a++)
		if (a == ARM_PLAIN || settings.libraries[a][0])
			arms[arm_count++] = (enum arm)a;
	for (int r = 0; r < settings.rounds; r++) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		fprintf(stderr, "round %d of %d (%.0f s)\n", r + 1, settings.rounds, (double)(now.tv_sec - began->tv_sec));
		for (size_t g = 0; g < n; g++) {
			if (groups[g].count == 1 && groups[g].skip[0][0])
				continue;
			for (int i = 0; i < arm_count; i++)
				if (!run_child(&groups[g], arms[(i + r) % arm_count], r))
					ok = false;
		}
	}
	return ok;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--child") == 0)
		return workload_main(argc, argv);
	int stop = parse_options(argc, argv);
	if (stop)
		return stop < 0 ? 0 : stop;
	static struct group groups[MAX_GROUPS];
	size_t group_count = select_groups(groups);
	if (group_count == 0) {
		fprintf(stderr, "bench-dlopen: --only %s names no group (see --help)\n", settings.only);
		return 2;
	}
	if (!mkdtemp(settings.dir)) {
		fprintf(stderr, "bench-dlopen: cannot make %s: %s\n", settings.dir, strerror(errno));
		return 1;
	}
	struct timespec began, now;
	clock_gettime(CLOCK_MONOTONIC, &began);
	int status = 0;
	if (!build_tree(objects_needed(groups, group_count))) {
		status = 1;
		goto out;
	}
	describe_machine();
	fflush(stdout);
	if (!run_rounds(groups, group_count, &began))
		status = 1;
	static struct row rows[MAX_ROWS];
	size_t row_count = make_rows(groups, group_count, rows);
	print_table(rows, row_count);
	if (settings.raw)
		print_raw(rows, row_count);
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("\nN: stand-ins loaded before the named ones. Slow path: a bare NVIDIA name found only in the M-th of %d "
	       "registered origins, with L empty folders in LD_LIBRARY_PATH (the other arms load the file by full path). "
	       "Ran %.0f s.\n",
	       BENCH_ORIGINS, (double)(now.tv_sec - began.tv_sec));
out:
	if (settings.keep)
		fprintf(stderr, "bench-dlopen: kept %s\n", settings.dir);
	else
		bench_remove_tree(settings.dir);
	return status;
}
