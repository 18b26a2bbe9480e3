/* nvinterpose-inspect over every library of the toolkit in one call, against libtree (Debian package
   libtree) on the same files and against a `readelf -d` loop (one readelf a file, the way a shell
   script would ask). Interleaved rounds (the order rotates), output to /dev/null, medians. The target
   is to be at least as fast as libtree, and never above 2x. Skipped (77) where the toolkit is absent;
   libtree's row is skipped, with the reason, where it is not installed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 1024
#define MAX_ROUNDS 201

extern char **environ;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Runs argv with stdout and stderr to /dev/null; its exit status, or -1 when it could not start. */
static int run_quietly(char *const *argv)
{
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int error = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	int status;
	if (error != 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool is_elf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool yes = fd >= 0 && read(fd, magic, 4) == 4 && memcmp(magic, "\177ELF", 4) == 0;
	if (fd >= 0)
		close(fd);
	return yes;
}

static int compare_strings(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The regular files named lib*.so* in folder that are ELF files, sorted. */
static size_t toolkit_libraries(const char *folder, char **files)
{
	DIR *dir = opendir(folder);
	size_t count = 0;
	for (struct dirent *entry; dir && count < MAX_FILES && (entry = readdir(dir));) {
		char *path;
		struct stat st;
		if (fnmatch("lib*.so*", entry->d_name, 0) != 0 || asprintf(&path, "%s/%s", folder, entry->d_name) < 0)
			continue;
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && is_elf(path))
			files[count++] = path;
		else
			free(path);
	}
	if (dir)
		closedir(dir);
	qsort(files, count, sizeof(*files), compare_strings);
	return count;
}

static bool in_path(const char *program)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "/usr/bin:/bin");
	bool found = false;
	for (char *dir = strtok(copy, ":"); dir && !found; dir = strtok(NULL, ":")) {
		char *candidate;
		if (asprintf(&candidate, "%s/%s", dir, program) >= 0) {
			found = access(candidate, X_OK) == 0;
			free(candidate);
		}
	}
	free(copy);
	return found;
}

struct contender {
	const char *name;
	char **argv;     /* one command for all the files */
	bool per_file;   /* the readelf loop: argv run once a file, argv[2] the file */
	bool available;
	double times[MAX_ROUNDS];
};

static double run_contender(struct contender *c, char **files, size_t count)
{
	double start = now_ms();
	if (c->per_file) {
		for (size_t i = 0; i < count; i++) {
			c->argv[2] = files[i];
			if (run_quietly(c->argv) != 0)
				return -1;
		}
	} else if (run_quietly(c->argv) > 1) { /* 1: something missing, still an answer */
		return -1;
	}
	return now_ms() - start;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *values, int count)
{
	qsort(values, (size_t)count, sizeof(*values), compare_doubles);
	return values[count / 2];
}

int main(void)
{
	const char *home = getenv("NVI_CUDA_HOME");
	const char *inspector = getenv("NVI_INSPECT");
	const char *rounds_text = getenv("NVI_BENCH_ROUNDS");
	int rounds = rounds_text ? atoi(rounds_text) : 21;
	char *folder, *files[MAX_FILES];
	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 21;
	if (!inspector || asprintf(&folder, "%s/lib64", home && home[0] ? home : "/usr/local/cuda") < 0) {
		fprintf(stderr, "NVI_INSPECT is not set: run through meson test --benchmark\n");
		return 1;
	}
	size_t count = toolkit_libraries(folder, files);
	if (count == 0) {
		printf("skipped: no libraries in %s\n", folder);
		return 77;
	}

	char **all = calloc(count + 3, sizeof(char *));
	char **all_json = calloc(count + 3, sizeof(char *));
	char **all_libtree = calloc(count + 2, sizeof(char *));
	all[0] = all_json[0] = (char *)inspector;
	all_json[1] = "--json";
	all_libtree[0] = "libtree";
	for (size_t i = 0; i < count; i++) {
		all[1 + i] = files[i];
		all_json[2 + i] = files[i];
		all_libtree[1 + i] = files[i];
	}
	char *readelf[] = { "readelf", "-d", NULL, NULL };
	struct contender contenders[] = {
		{ .name = "nvinterpose-inspect FILES", .argv = all, .available = true },
		{ .name = "nvinterpose-inspect --json FILES", .argv = all_json, .available = true },
		{ .name = "libtree FILES", .argv = all_libtree, .available = in_path("libtree") },
		{ .name = "readelf -d FILE, a file at a time", .argv = readelf, .per_file = true, .available = in_path("readelf") },
	};
	const int n = (int)(sizeof(contenders) / sizeof(contenders[0]));
	for (int k = 0; k < n; k++)
		if (contenders[k].available && run_contender(&contenders[k], files, count) < 0) { /* warm-up */
			printf("%s failed; left out\n", contenders[k].name);
			contenders[k].available = false;
		}
	for (int round = 0; round < rounds; round++)
		for (int j = 0; j < n; j++) {
			struct contender *c = &contenders[(round + j) % n];
			if (c->available)
				c->times[round] = run_contender(c, files, count);
		}

	printf("%zu libraries in %s, %d rounds, medians (wall clock, one process per command):\n", count, folder, rounds);
	double medians[4] = { 0 };
	for (int k = 0; k < n; k++) {
		if (!contenders[k].available) {
			printf("  %-36s skipped: %s is not installed%s\n", contenders[k].name, contenders[k].argv[0],
			       strcmp(contenders[k].argv[0], "libtree") == 0 ? " (apt-get install libtree)" : "");
			continue;
		}
		medians[k] = median(contenders[k].times, rounds);
		printf("  %-36s %8.2f ms\n", contenders[k].name, medians[k]);
	}
	if (medians[2] > 0) {
		printf("  inspector / libtree: %.2fx (text), %.2fx (--json)  [target <= 1.0x, never above 2x]\n", medians[0] / medians[2],
		       medians[1] / medians[2]);
		if (medians[0] > 2 * medians[2])
			printf("  ABOVE 2x libtree\n");
	}
	if (medians[3] > 0)
		printf("  readelf loop / inspector: %.1fx\n", medians[3] / medians[0]);
	return 0;
}
