/* The test setups' exe_wrapper (tests/meson.build): runs one test in a clean environment, the one
   tests/environment.c keeps, with a TMPDIR and a HOME of its own (fresh folders, removed when the
   test ends). The folder is made under the TMPDIR the run was started with, or /tmp: a machine may
   keep /tmp small or mounted noexec.
   Usage: clean-env PROGRAM [ARGUMENT]...      Exits as PROGRAM did; 99 (meson's "error") when the
   environment cannot be made. */
#define _GNU_SOURCE
#include "environment.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HARNESS_ERROR 99

extern char **environ;

/* A test may leave a folder without write permission: opened up first, then removed. */
static int open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: clean-env PROGRAM [ARGUMENT]...\n");
		return HARNESS_ERROR;
	}
	const char *base = getenv("TMPDIR");
	char *folder = NULL, *tmpdir = NULL, *home = NULL;
	/* Others may pass through it (mkdtemp makes it 0700): tests run programs as other users. */
	if (asprintf(&folder, "%s/nvinterpose-tests-XXXXXX", base && base[0] == '/' ? base : "/tmp") < 0 || !mkdtemp(folder) ||
	    chmod(folder, 0755) != 0 ||
	    asprintf(&tmpdir, "TMPDIR=%s", folder) < 0 || asprintf(&home, "HOME=%s/home", folder) < 0 || mkdir(home + 5, 0700) != 0) {
		fprintf(stderr, "clean-env: cannot make the test's folder under %s: %s\n", base && base[0] == '/' ? base : "/tmp", strerror(errno));
		return HARNESS_ERROR;
	}
	const char *extra[] = { tmpdir, home, NULL };
	char **env = test_environment_build(environ, TEST_ENVIRONMENT_TEST, extra);
	pid_t pid = env ? fork() : -1;
	if (pid == 0) {
		execvpe(argv[1], argv + 1, env);
		fprintf(stderr, "clean-env: cannot run %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	int status = 0;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	nftw(folder, open_up, 16, FTW_PHYS);
	nftw(folder, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(env);
	free(folder);
	free(tmpdir);
	free(home);
	if (pid < 0) {
		fprintf(stderr, "clean-env: cannot start %s: %s\n", argv[1], strerror(errno));
		return HARNESS_ERROR;
	}
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : HARNESS_ERROR;
}
