/* Start-up: what a process pays for the runtime preloaded and under the LD_AUDIT front, against an
 * empty preload and an empty auditor in the same run:
 *
 *   bench-audit [--rounds R] [--runs N] [--only LIST]     (meson test --benchmark audit)
 *
 * The programs: /bin/true; a program linked against 50 stand-in libraries (built at run time from
 * tests/fixtures, sonames libaudit_NN.so.77); `python3 -c pass`; a shell loop of 200 starts of
 * /bin/true; and `cc -c` of 20 small files. The last three are what a CI job starts (the setting
 * reaches every child: the shell's 200, the compiler's own programs). Each round runs each program
 * under each arm (plain, an empty preload, the runtime as LD_PRELOAD, an empty auditor that only
 * answers la_version, an auditor that also calls libc, the runtime as LD_AUDIT), the arms' order
 * rotated each round; a run's cost is
 * the CPU time of the program and its children (user and system, from wait4). The table gives each
 * arm's median per run, and the runtime's cost over its floor (the preload front over the empty
 * preload, the audit front over the empty auditor and over the auditor that calls libc) as the median
 * of the rounds' own ratios with their middle half, so that a slow moment of the machine weighs on
 * both sides of a ratio. A run that fails (the program does not start, or exits with a status other
 * than 0) is named on stderr, and the benchmark then exits 1. */
#define _GNU_SOURCE
#include "bench.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OBJECTS 50
#define SHELL_STARTS 200
#define COMPILED_FILES 20
enum { PLAIN, EMPTY_PRELOAD, PRELOAD, EMPTY_AUDITOR, LIBC_AUDITOR, AUDIT, ARMS };
static const char *const arm_names[ARMS] = { "plain", "empty preload", "preload front", "empty auditor", "auditor calling libc",
					      "audit front" };

struct program {
	const char *name;  /* what --only names it by */
	const char *title; /* what the table calls it */
	char *argv[COMPILED_FILES + 4];
	const char *folder; /* where it runs (NULL: here) */
	int runs;           /* per round and arm, as a share of --runs (at least 1) */
};

static const char *setting(const char *name)
{
	const char *value = getenv(name);
	if (!value || !value[0]) {
		fprintf(stderr, "bench-audit: %s is not set: run it through meson test --benchmark\n", name);
		exit(2);
	}
	return value;
}

/* Whether the loader, loading the library into a namespace of its own as it loads an auditor, loads
   a libc.so.6 there with it: what makes the two auditor arms the floors they are said to be (a
   compiler that folds every libc call away leaves an "auditor calling libc" that needs nothing). */
static bool brings_libc(const char *library)
{
	void *handle = dlmopen(LM_ID_NEWLM, library, RTLD_LAZY | RTLD_LOCAL);
	struct link_map *map = NULL;
	bool found = false;
	if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0)
		return false;
	for (; map && !found; map = map->l_next)
		found = map->l_name && strstr(map->l_name, "/libc.so.6");
	dlclose(handle);
	return found;
}

static int shell(const char *format, const char *a, const char *b, const char *c, const char *d)
{
	char command[16384];
	snprintf(command, sizeof(command), format, a, b, c, d);
	return system(command);
}

/* The CPU time of one run of program and its children under environment entry env (or none), in
   microseconds; NAN when it failed. */
static double run_once(const struct program *program, const char *env)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (env)
			putenv((char *)env);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDOUT_FILENO);
		if (program->folder && chdir(program->folder) != 0)
			_exit(126);
		execvp(program->argv[0], program->argv);
		_exit(127);
	}
	struct rusage usage;
	int status = 0;
	if (pid < 0 || wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return NAN;
	return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

static void print_time(double microseconds)
{
	if (microseconds >= 10000)
		printf(" %.1f ms |", microseconds / 1000);
	else
		printf(" %.0f µs |", microseconds);
}

/* The median ratio (its middle half), then the target's column where there is one. */
static void print_ratio(double *ratios, int rounds, const char *target)
{
	printf(" %.3f× (%.3f–%.3f) |", bench_quantile(ratios, (size_t)rounds, 0.5), bench_quantile(ratios, (size_t)rounds, 0.25),
	       bench_quantile(ratios, (size_t)rounds, 0.75));
	if (target)
		printf(" %s |", target);
}

int main(int argc, char **argv)
{
	int rounds = 15, runs = 20;
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];
		else {
			printf("usage: bench-audit [--rounds R] [--runs N] [--only LIST]\n"
			       "  --rounds R   rounds, each running every arm in turn (default 15)\n"
			       "  --runs N     runs of /bin/true and of the 50-object program per round and arm (default 20);\n"
			       "               python3 gets N/4, the shell loop and the compiler N/20 (at least 1)\n"
			       "  --only LIST  only these programs, comma-separated: true needed50 python shell cc\n");
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}
	if (rounds < 1 || runs < 1)
		return 2;
	const char *cc = setting("NVI_CC"), *fixtures = setting("NVI_FIXTURES"), *runtime = setting("NVI_RUNTIME");
	const char *sources = setting("NVI_BENCH_SOURCES");
	char dir[] = "/tmp/nvinterpose-bench-audit-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char empty_auditor[4200], libc_auditor[4200], empty_preload[4200], needed50[4200], links[65536] = "", object[4200], compiled[4200];
	snprintf(empty_auditor, sizeof(empty_auditor), "%s/empty_auditor.so", dir);
	snprintf(libc_auditor, sizeof(libc_auditor), "%s/libc_auditor.so", dir);
	snprintf(empty_preload, sizeof(empty_preload), "%s/libempty.so", dir);
	snprintf(needed50, sizeof(needed50), "%s/program", dir);
	snprintf(compiled, sizeof(compiled), "%s/compiled", dir);
	if (shell("'%s' -shared -fPIC -O2 -o '%s' '%s/empty_auditor.c'", cc, empty_auditor, sources, "") != 0 ||
	    shell("'%s' -shared -fPIC -O2 -o '%s' '%s/libc_auditor.c'", cc, libc_auditor, sources, "") != 0 ||
	    shell("'%s' -shared -fPIC -O2 -Wl,-soname,libempty.so -o '%s' '%s/empty.c'", cc, empty_preload, sources, "") != 0)
		return 1;
	if (brings_libc(empty_auditor) || !brings_libc(libc_auditor)) {
		fprintf(stderr, "bench-audit: the empty auditor must need nothing and the other auditor libc.so.6\n");
		return 1;
	}
	for (int i = 0; i < OBJECTS; i++) {
		char soname[64], flags[256];
		snprintf(soname, sizeof(soname), "libaudit_%02d.so.77", i);
		snprintf(object, sizeof(object), "%s/%s", dir, soname);
		snprintf(flags, sizeof(flags), "-DVALUE_SYMBOL=value_%d -Wl,-soname,%s", i, soname);
		if (shell("'%s' -shared -fPIC -O2 -o '%s' '%s/value.c' %s", cc, object, fixtures, flags) != 0)
			return 1;
		size_t used = strlen(links);
		snprintf(links + used, sizeof(links) - used, " '%s'", object);
	}
	char command[70000];
	snprintf(command, sizeof(command), "echo 'int main(void){return 0;}' | '%s' -x c -o '%s' - -x none -Wl,--no-as-needed%s -Wl,-rpath,'%s'", cc,
		 needed50, links, dir);
	if (system(command) != 0 || mkdir(compiled, 0700) != 0)
		return 1;

	char loop[256];
	snprintf(loop, sizeof(loop), "i=0; while [ $i -lt %d ]; do /bin/true; i=$((i + 1)); done", SHELL_STARTS);
	struct program programs[] = {
		{ "true", "`/bin/true`", { "/bin/true", NULL }, NULL, 20 },
		{ "needed50", "a program with 50 DT_NEEDED", { needed50, NULL }, NULL, 20 },
		{ "python", "`python3 -c pass`", { "python3", "-c", "pass", NULL }, NULL, 5 },
		{ "shell", "a shell loop of 200 starts of `/bin/true`", { "/bin/sh", "-c", loop, NULL }, NULL, 1 },
		{ "cc", "`cc -c` of 20 files", { (char *)cc, "-O0", "-c" }, compiled, 1 },
	};
	struct program *compile = &programs[4];
	for (int i = 0; i < COMPILED_FILES; i++) {
		char file[4400];
		snprintf(file, sizeof(file), "%s/unit_%02d.c", compiled, i);
		FILE *f = fopen(file, "w");
		if (!f)
			return 1;
		fprintf(f, "#include <stdio.h>\n#include <string.h>\nint unit_%02d(const char *s) { return (int)strlen(s) + printf(\"%%s\", s); }\n", i);
		fclose(f);
		compile->argv[3 + i] = bench_format("unit_%02d.c", i);
	}
	compile->argv[3 + COMPILED_FILES] = NULL;

	char audit_env[8300], empty_auditor_env[8300], libc_auditor_env[8300], preload_env[8300], empty_preload_env[8300];
	snprintf(audit_env, sizeof(audit_env), "LD_AUDIT=%s", runtime);
	snprintf(empty_auditor_env, sizeof(empty_auditor_env), "LD_AUDIT=%s", empty_auditor);
	snprintf(libc_auditor_env, sizeof(libc_auditor_env), "LD_AUDIT=%s", libc_auditor);
	snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s", runtime);
	snprintf(empty_preload_env, sizeof(empty_preload_env), "LD_PRELOAD=%s", empty_preload);
	const char *envs[ARMS] = { NULL, empty_preload_env, preload_env, empty_auditor_env, libc_auditor_env, audit_env };

	printf("| program | plain | empty preload | preload front | preload front / empty preload | target | empty auditor | "
	       "auditor calling libc | audit front | audit front / empty auditor | target | audit front / auditor calling libc |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	int failed_arms = 0; /* arms of a program with a run that failed: the table is then not the programs' */
	for (size_t p = 0; p < sizeof(programs) / sizeof(programs[0]); p++) {
		struct program *program = &programs[p];
		if (only && !bench_in_list(only, program->name))
			continue;
		int program_runs = runs * program->runs / 20 > 0 ? runs * program->runs / 20 : 1;
		double *values[ARMS], *preload_over = calloc((size_t)rounds, sizeof(double)), *audit_over = calloc((size_t)rounds, sizeof(double)),
		       *audit_over_libc = calloc((size_t)rounds, sizeof(double));
		for (int a = 0; a < ARMS; a++)
			values[a] = calloc((size_t)rounds, sizeof(double));
		int failed[ARMS] = { 0 };
		for (int r = 0; r < rounds; r++) {
			double sum[ARMS] = { 0 };
			for (int k = 0; k < program_runs; k++)
				for (int i = 0; i < ARMS; i++) {
					int a = (i + r) % ARMS; /* the order rotates */
					double run = run_once(program, envs[a]);
					failed[a] += isnan(run);
					sum[a] += run;
				}
			for (int a = 0; a < ARMS; a++)
				values[a][r] = sum[a] / program_runs;
			preload_over[r] = values[PRELOAD][r] / values[EMPTY_PRELOAD][r];
			audit_over[r] = values[AUDIT][r] / values[EMPTY_AUDITOR][r];
			audit_over_libc[r] = values[AUDIT][r] / values[LIBC_AUDITOR][r];
		}
		printf("| %s |", program->title);
		for (int a = PLAIN; a <= PRELOAD; a++)
			print_time(bench_quantile(values[a], (size_t)rounds, 0.5));
		print_ratio(preload_over, rounds, "≤ 1.10×");
		for (int a = EMPTY_AUDITOR; a <= AUDIT; a++)
			print_time(bench_quantile(values[a], (size_t)rounds, 0.5));
		print_ratio(audit_over, rounds, "≤ 1.15×");
		print_ratio(audit_over_libc, rounds, NULL);
		printf("\n");
		fflush(stdout);
		for (int a = 0; a < ARMS; a++)
			if (failed[a]) {
				fprintf(stderr, "bench-audit: %s failed %d of %d runs under the arm %s\n", program->title, failed[a],
					rounds * program_runs, arm_names[a]);
				failed_arms++;
			}
	}
	printf("\nEach cell: the median over %d rounds of the CPU time per run (the program and its children); a ratio: the median "
	       "of the rounds' own ratios, with the middle half of them.\n",
	       rounds);
	shell("rm -rf '%s'", dir, "", "", "");
	return failed_arms ? 1 : 0;
}
