/* Start-up under the LD_AUDIT front, against the plain loader and an empty auditor in the same run:
 *
 *   bench-audit [--rounds R] [--runs N]     (meson test --benchmark audit)
 *
 * Two programs: /bin/true, and a program linked against 50 stand-in libraries (built at run time
 * from tests/fixtures, sonames libaudit_NN.so.77). Each round runs each program N times under each
 * arm (plain, an empty auditor that only answers la_version, the runtime as LD_AUDIT, the runtime as
 * LD_PRELOAD), the arms' order rotated each round; a run's cost is the child's CPU time (user and
 * system, from wait4). The table gives each arm's median per run and the audit front's cost over the
 * empty auditor, paired per round (median and middle half). */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OBJECTS 50
enum { PLAIN, EMPTY, AUDIT, PRELOAD, ARMS };
static const char *const arm_names[ARMS] = { "plain", "empty auditor", "audit front", "preload front" };

static const char *setting(const char *name)
{
	const char *value = getenv(name);
	if (!value || !value[0]) {
		fprintf(stderr, "bench-audit: %s is not set: run it through meson test --benchmark\n", name);
		exit(2);
	}
	return value;
}

static int shell(const char *format, const char *a, const char *b, const char *c, const char *d)
{
	char command[16384];
	snprintf(command, sizeof(command), format, a, b, c, d);
	return system(command);
}

/* The CPU time of one run of program under environment entry env (or none), in microseconds. */
static double run_once(const char *program, const char *env)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (env)
			putenv((char *)env);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDOUT_FILENO);
		execl(program, program, (char *)NULL);
		_exit(127);
	}
	struct rusage usage;
	int status = 0;
	if (pid < 0 || wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return NAN;
	return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
	int rounds = 15, runs = 20;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else {
			printf("usage: bench-audit [--rounds R] [--runs N]\n");
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}
	const char *cc = setting("NVI_CC"), *fixtures = setting("NVI_FIXTURES"), *runtime = setting("NVI_RUNTIME");
	const char *sources = setting("NVI_BENCH_SOURCES");
	char dir[] = "/tmp/nvinterpose-bench-audit-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char empty[4200], program[4200], links[65536] = "", object[4200];
	snprintf(empty, sizeof(empty), "%s/empty_auditor.so", dir);
	snprintf(program, sizeof(program), "%s/program", dir);
	if (shell("'%s' -shared -fPIC -O2 -o '%s' '%s/empty_auditor.c'", cc, empty, sources, "") != 0)
		return 1;
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
		 program, links, dir);
	if (system(command) != 0)
		return 1;
	char audit_env[8300], empty_env[8300], preload_env[8300];
	snprintf(audit_env, sizeof(audit_env), "LD_AUDIT=%s", runtime);
	snprintf(empty_env, sizeof(empty_env), "LD_AUDIT=%s", empty);
	snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s", runtime);
	const char *envs[ARMS] = { NULL, empty_env, audit_env, preload_env };
	const char *programs[2] = { "/bin/true", program };
	const char *titles[2] = { "/bin/true", "a program with 50 DT_NEEDED" };

	printf("| program | plain | empty auditor | audit front | preload front | audit front − empty auditor | target |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (int p = 0; p < 2; p++) {
		double *values[ARMS], *over = calloc((size_t)rounds, sizeof(double));
		for (int a = 0; a < ARMS; a++)
			values[a] = calloc((size_t)rounds, sizeof(double));
		for (int r = 0; r < rounds; r++) {
			double sum[ARMS] = { 0 };
			for (int k = 0; k < runs; k++)
				for (int i = 0; i < ARMS; i++) {
					int a = (i + r) % ARMS; /* the order rotates */
					sum[a] += run_once(programs[p], envs[a]);
				}
			for (int a = 0; a < ARMS; a++)
				values[a][r] = sum[a] / runs;
			over[r] = values[AUDIT][r] - values[EMPTY][r];
		}
		printf("| %s |", titles[p]);
		for (int a = 0; a < ARMS; a++)
			printf(" %.0f µs |", bench_quantile(values[a], (size_t)rounds, 0.5));
		printf(" %+.0f µs (%+.0f … %+.0f) | ≤ +60 µs |\n", bench_quantile(over, (size_t)rounds, 0.5), bench_quantile(over, (size_t)rounds, 0.25),
		       bench_quantile(over, (size_t)rounds, 0.75));
	}
	(void)arm_names;
	shell("rm -rf '%s'", dir, "", "", "");
	return 0;
}
