/* The folders a python imports from, asked of the python itself: a child process bounded in time
   from its start to its exit, whose output is read through a pipe. */
#define _GNU_SOURCE
#include "python_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char python_code[] =
	"import os, site, sys\n"
	"print(sys.executable)\n"
	"paths = []\n"
	"try:\n    paths += site.getsitepackages()\nexcept Exception:\n    pass\n"
	"try:\n    paths.append(site.getusersitepackages())\nexcept Exception:\n    pass\n"
	/* and every folder it imports from that holds wheels' nvidia packages (PYTHONPATH, .pth files) */
	"paths += [p for p in sys.path if p.endswith(('site-packages', 'dist-packages')) or os.path.isdir(os.path.join(p, 'nvidia'))]\n"
	"for p in paths:\n    print(p)\n";

static long milliseconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Reads fd until the python closes it (true) or the deadline passes (false). The output (NULL when
   memory ran out; what is read is then dropped) and its length in *output and *used. */
static bool read_output(int fd, const struct timespec *start, long limit_ms, char **output, size_t *used)
{
	size_t capacity = 4096;
	*used = 0;
	*output = malloc(capacity + 1);
	for (;;) {
		long left = limit_ms - milliseconds_since(start);
		struct pollfd poll_fd = { .fd = fd, .events = POLLIN };
		int ready = left > 0 ? poll(&poll_fd, 1, (int)left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready == 0)
			return false;
		if (*output && *used == capacity) {
			char *grown = capacity < (1u << 20) ? realloc(*output, 2 * capacity + 1) : NULL;
			if (!grown) {
				free(*output);
				*output = NULL;
			} else {
				*output = grown;
				capacity *= 2;
			}
		}
		char drop[64];
		ssize_t n = read(fd, *output ? *output + *used : drop, *output ? capacity - *used : sizeof(drop));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		if (*output)
			*used += (size_t)n;
	}
}

/* Waits for pid to exit until the deadline, then kills it: true when it exited by itself. */
static bool wait_for_exit(pid_t pid, const struct timespec *start, long limit_ms, int *status)
{
	for (;;) {
		pid_t done = waitpid(pid, status, WNOHANG);
		if (done == pid)
			return true;
		if (done < 0 && errno != EINTR)
			return false;
		long left = limit_ms - milliseconds_since(start);
		if (left <= 0)
			break;
		struct timespec pause = { 0, (left < 10 ? left : 10) * 1000000L };
		nanosleep(&pause, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return false;
}

char *python_paths_ask(const char *python, unsigned timeout_s, char **problem)
{
	int pipe_fds[2];
	*problem = NULL;
	if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
		*problem = strdup(strerror(errno));
		return NULL;
	}
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/* Not -I or -s: the scan wants every folder this python imports from, the user's included. */
	char *argv[] = { (char *)python, "-c", (char *)python_code, NULL };
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pid_t pid;
	int error = posix_spawnp(&pid, python, &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(pipe_fds[1]);
	if (error != 0) {
		close(pipe_fds[0]);
		if (asprintf(problem, "%s: %s", python, strerror(error)) < 0)
			*problem = NULL;
		return NULL;
	}
	long limit_ms = (long)timeout_s * 1000;
	char *output;
	size_t used;
	bool closed = read_output(pipe_fds[0], &start, limit_ms, &output, &used);
	close(pipe_fds[0]);
	int status = 0;
	/* A python that closed its output may still run: its exit is waited for within the same bound. */
	bool exited = wait_for_exit(pid, &start, closed ? limit_ms : 0, &status);
	if (!exited || !output || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		int n = !exited ? asprintf(problem, "%s: did not finish in %u s (killed)", python, timeout_s)
				: asprintf(problem, "%s: %s", python, !output ? "out of memory" : "failed");
		if (n < 0)
			*problem = NULL;
		free(output);
		return NULL;
	}
	output[used] = '\0';
	return output;
}
