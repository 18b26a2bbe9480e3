#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char *test_setting(const char *name)
{
	const char *value = getenv(name);
	ck_assert_msg(value && value[0], "%s is not set: run the tests through meson test", name);
	return value;
}

char *test_format(const char *format, ...)
{
	va_list args;
	char *s = NULL;
	va_start(args, format);
	ck_assert_int_ge(vasprintf(&s, format, args), 0);
	va_end(args);
	return s;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static char *tmpdirs[64];
static size_t tmpdir_count;

static void remove_tmpdirs(void)
{
	for (size_t i = 0; i < tmpdir_count; i++)
		nftw(tmpdirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	tmpdir_count = 0;
}

char *test_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir = test_format("%s/nvinterpose-test-XXXXXX", base && base[0] ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	if (tmpdir_count == 0)
		atexit(remove_tmpdirs);
	if (tmpdir_count < sizeof(tmpdirs) / sizeof(tmpdirs[0]))
		tmpdirs[tmpdir_count++] = dir;
	return dir;
}

const char *test_mkdirs(const char *path)
{
	char *copy = strdup(path);
	for (char *s = copy + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(copy, 0755);
			*s = '/';
		}
	ck_assert_msg(mkdir(copy, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", copy, strerror(errno));
	free(copy);
	return path;
}

void test_write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
	fputs(content, f);
	fclose(f);
}

char *test_read_stream(FILE *f, size_t *length)
{
	char *data = NULL;
	size_t scratch = 0, *size = length ? length : &scratch;
	FILE *out = open_memstream(&data, size);
	char buffer[4096];
	size_t n;
	while ((n = fread(buffer, 1, sizeof(buffer), f)) > 0)
		fwrite(buffer, 1, n, out);
	fclose(out);
	fclose(f);
	return data;
}

char *test_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	return f ? test_read_stream(f, NULL) : NULL;
}

static int find_interpreter(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP) {
			*(const char **)arg = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
			return 1;
		}
	return 1; /* the main program comes first */
}

const char *test_interpreter(void)
{
	const char *path = NULL;
	dl_iterate_phdr(find_interpreter, &path);
	ck_assert_ptr_nonnull(path);
	return path;
}

void test_copy_file(const char *from, const char *to)
{
	const char *argv[] = { "cp", "-f", from, to, NULL };
	struct test_run run = test_run(argv, NULL, 60);
	ck_assert_msg(run.status == 0, "cp %s %s: %s", from, to, run.output);
	free(run.output);
}

size_t test_regular_files(const char *folder, const char *pattern, char ***paths)
{
	DIR *dir = opendir(folder);
	ck_assert_msg(dir != NULL, "cannot list %s: %s", folder, strerror(errno));
	size_t count = 0;
	*paths = NULL;
	for (struct dirent *entry; (entry = readdir(dir));) {
		char *path = test_format("%s/%s", folder, entry->d_name);
		struct stat st;
		if (fnmatch(pattern, entry->d_name, 0) != 0 || lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		*paths = realloc(*paths, (count + 1) * sizeof(**paths));
		(*paths)[count++] = path;
	}
	closedir(dir);
	return count;
}

void test_build_library(const char *source, const char *path, const char *soname, const char *flags)
{
	char *command = test_format("'%s' -shared -fPIC -O1 -o '%s' '%s/%s' %s%s %s -ldl", test_setting("NVI_CC"), path,
				    test_setting("NVI_FIXTURES"), source, soname[0] ? "-Wl,-soname," : "", soname,
				    flags ? flags : "");
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, NULL, 120);
	ck_assert_msg(run.status == 0, "building %s failed: %s\n%s", path, command, run.output);
	free(run.output);
	free(command);
}

struct test_run test_run(const char *const *argv, const char *const *env, int timeout)
{
	struct test_run result = { .status = -1, .output = NULL };
	char path[] = "/tmp/nvinterpose-output-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, STDIN_FILENO);
		for (size_t i = 0; env && env[i]; i++) {
			const char *eq = strchr(env[i], '=');
			char *name = strndup(env[i], (size_t)(eq - env[i]));
			if (eq[1])
				setenv(name, eq + 1, 1);
			else
				unsetenv(name);
		}
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t done = waitpid(pid, &status, WNOHANG);
		if (done == pid)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(2000);
	}
	result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	lseek(fd, 0, SEEK_SET);
	result.output = test_read_stream(fdopen(fd, "r"), NULL);
	return result;
}

struct test_run test_probe(const char *const *env, const char *args)
{
	char *command = test_format("exec '%s' %s", test_setting("NVI_PROBE"), args);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, env, 120);
	free(command);
	return run;
}

bool test_contains(const char *haystack, const char *needle) { return haystack && strstr(haystack, needle); }

size_t test_count(const char *haystack, const char *needle)
{
	size_t n = 0;
	for (const char *s = haystack; s && (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

int test_main(Suite *suite)
{
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
