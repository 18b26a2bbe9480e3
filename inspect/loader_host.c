#define _GNU_SOURCE
#include "loader_host.h"

#include "loader/dst.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ELEMENTS 1024
#define HELP_BYTES (64 * 1024)
#define HELP_TIMEOUT_MS 5000

extern char **environ;

/* The PT_INTERP of the running program, from its program headers in memory. */
static char *own_interpreter(void)
{
	const ElfW(Phdr) *phdr = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t phnum = (size_t)getauxval(AT_PHNUM);
	ElfW(Addr) bias = 0;
	const char *interp = NULL;
	for (size_t i = 0; phdr && i < phnum; i++)
		if (phdr[i].p_type == PT_PHDR)
			bias = (ElfW(Addr))phdr - phdr[i].p_vaddr;
	for (size_t i = 0; phdr && i < phnum; i++)
		if (phdr[i].p_type == PT_INTERP)
			interp = (const char *)(bias + phdr[i].p_vaddr);
	return interp ? strdup(interp) : NULL;
}

/* A folder as dlinfo's RTLD_DI_SERINFO writes it: no trailing slash, "/" and "." for the short ones. */
static const char *serinfo_spelling(const char *dir)
{
	return dir[0] ? dir : ".";
}

void loader_host_free_dirs(char **dirs, size_t count)
{
	for (size_t i = 0; dirs && i < count; i++)
		free(dirs[i]);
	free(dirs);
}

int loader_host_expand(struct loader_host *host, const char *list, const char *separators, const char *origin,
		       char ***dirs)
{
	*dirs = NULL;
	/* glibc ignores an empty RPATH or RUNPATH as a whole (decompose_rpath). */
	if (!list || !list[0])
		return 0;
	if (dst_uses_token(list, "LIB") || dst_uses_token(list, "PLATFORM"))
		loader_host_hwcaps(host);
	char *copy = strdup(list);
	size_t capacity = 1;
	for (char *s = copy; s && *s; s++)
		if (strchr(separators, *s)) {
			*s = ':';
			capacity++;
		}
	if (capacity > MAX_ELEMENTS)
		capacity = MAX_ELEMENTS;
	char **elements = malloc(capacity * sizeof(*elements));
	int count = -1;
	if (!copy || !elements)
		goto out;
	count = dst_expand_search_path(copy, origin, host->lib, host->platform, elements, capacity);
	if (count > (int)capacity)
		count = (int)capacity;
	for (int i = 0; i < count; i++) {
		/* fillin_rpath: an element that expands to nothing is dropped (one that was empty stays,
		   it names the current folder); trailing slashes go, a lone "/" stays. */
		size_t length = strlen(elements[i]);
		while (length > 1 && elements[i][length - 1] == '/')
			elements[i][--length] = '\0';
	}
	*dirs = elements;
	elements = NULL;
out:
	free(copy);
	free(elements);
	return count;
}


/* glibc's default folders, from the loader's own search list for this program (dlinfo
   RTLD_DI_SERINFO): LD_LIBRARY_PATH's folders come first there and are left out. The inspector has
   no RPATH or RUNPATH of its own. */
static int learn_default_dirs(struct loader_host *host, char *message, size_t size)
{
	void *self = dlopen(NULL, RTLD_LAZY);
	Dl_serinfo probe;
	Dl_serinfo *info = NULL;
	char **library_dirs = NULL;
	int library_count = 0;
	int result = -1;
	/* An empty list's size is smaller than Dl_serinfo, which declares one entry. */
	if (!self || dlinfo(self, RTLD_DI_SERINFOSIZE, &probe) != 0 ||
	    !(info = malloc(probe.dls_size > sizeof(Dl_serinfo) ? probe.dls_size : sizeof(Dl_serinfo)))) {
		snprintf(message, size, "cannot learn the loader's default folders: %s", self ? dlerror() : "dlopen(NULL) failed");
		goto out;
	}
	info->dls_size = probe.dls_size;
	info->dls_cnt = probe.dls_cnt;
	if (dlinfo(self, RTLD_DI_SERINFO, info) != 0) {
		snprintf(message, size, "cannot learn the loader's default folders: %s", dlerror());
		goto out;
	}
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	char own_origin[PATH_MAX];
	if (!dst_origin_of(exe, own_origin, sizeof(own_origin)))
		strcpy(own_origin, ".");
	const char *own_library_path = getenv("LD_LIBRARY_PATH");
	library_count = loader_host_expand(host, own_library_path, ":;", own_origin, &library_dirs);
	unsigned start = 0;
	for (int i = 0; i < library_count && start < info->dls_cnt; i++)
		if (strcmp(info->dls_serpath[start].dls_name, serinfo_spelling(library_dirs[i])) == 0)
			start++;
	host->default_dirs = calloc(info->dls_cnt - start + 1, sizeof(char *));
	for (unsigned i = start; host->default_dirs && i < info->dls_cnt; i++)
		host->default_dirs[host->default_count++] = strdup(info->dls_serpath[i].dls_name);
	if (host->default_count == 0) {
		snprintf(message, size, "the loader names no default folders");
		goto out;
	}
	result = 0;
out:
	loader_host_free_dirs(library_dirs, library_count > 0 ? (size_t)library_count : 0);
	free(info);
	if (self)
		dlclose(self);
	return result;
}

int loader_host_init(struct loader_host *host, const char *library_path, char *message, size_t size)
{
	memset(host, 0, sizeof(*host));
	host->elf = elf_host_of_this_process();
	host->interpreter = own_interpreter();
	if (learn_default_dirs(host, message, size) != 0)
		return -1;
	host->library_path = library_path ? strdup(library_path) : NULL;
	return 0;
}

void loader_host_free(struct loader_host *host)
{
	free(host->interpreter);
	free(host->lib);
	free(host->platform);
	loader_host_free_dirs(host->default_dirs, host->default_count);
	free(host->library_path);
	free(host->hwcaps_problem);
	memset(host, 0, sizeof(*host));
}

/* What the loader prints on its standard error for `INTERP --list PROGRAM`, run with env alone, or
   NULL. Bounded in size and time: a loader that hangs is killed. */
static char *loader_probe_output(const char *interpreter, const char *program, char *const *env, size_t *length,
				 char **problem)
{
	int pipe_fds[2];
	posix_spawn_file_actions_t actions;
	pid_t pid;
	char *argv[] = { (char *)interpreter, "--list", (char *)program, NULL };
	if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
		*problem = strdup(strerror(errno));
		return NULL;
	}
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	int error = posix_spawn(&pid, interpreter, &actions, NULL, argv, env);
	posix_spawn_file_actions_destroy(&actions);
	close(pipe_fds[1]);
	if (error != 0) {
		close(pipe_fds[0]);
		*problem = strdup(strerror(error));
		return NULL;
	}
	char *text = malloc(HELP_BYTES + 1);
	size_t used = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (text && used < HELP_BYTES) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		struct pollfd p = { .fd = pipe_fds[0], .events = POLLIN };
		if (elapsed >= HELP_TIMEOUT_MS || poll(&p, 1, (int)(HELP_TIMEOUT_MS - elapsed)) <= 0)
			break;
		ssize_t n = read(pipe_fds[0], text + used, HELP_BYTES - used);
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(pipe_fds[0]);
	kill(pid, SIGKILL); /* harmless once it has exited; ends it if it has not */
	int status;
	waitpid(pid, &status, 0);
	if (!text || used == 0) {
		free(text);
		*problem = strdup("the loader printed nothing for its search");
		return NULL;
	}
	text[used] = '\0';
	*length = used;
	return text;
}

enum hwcaps_knowledge loader_host_hwcaps(struct loader_host *host)
{
	if (host->hwcaps_knowledge != HWCAPS_NOT_ASKED)
		return host->hwcaps_knowledge;
	host->hwcaps_knowledge = HWCAPS_UNKNOWN;
	char program[4096];
	ssize_t n = readlink("/proc/self/exe", program, sizeof(program) - 1);
	if (!host->interpreter || n <= 0) {
		host->hwcaps_problem = strdup(host->interpreter ? "/proc/self/exe cannot be read" : "the inspector has no PT_INTERP to ask");
		host->machine.legacy_possible = true;
		return host->hwcaps_knowledge;
	}
	program[n] = '\0';
	/* Only these two variables: nothing of the caller's (LD_PRELOAD, LD_AUDIT) in the probe. */
	char *env[] = { "LD_LIBRARY_PATH=" LOADER_PROBE_PATH, "LD_DEBUG=libs", NULL };
	size_t length = 0;
	char *text = loader_probe_output(host->interpreter, program, env, &length, &host->hwcaps_problem);
	if (!text) {
		host->machine.legacy_possible = true;
		return host->hwcaps_knowledge;
	}
	if (loader_machine_from_debug_output(text, length, &host->machine)) {
		host->hwcaps_knowledge = HWCAPS_KNOWN;
		host->lib = strdup(host->machine.lib);
		host->platform = host->machine.platform_known ? strdup(host->machine.platform) : NULL;
		host->hwcaps_count = loader_machine_hwcaps(&host->machine, host->hwcaps, LOADER_MAX_SUBDIRS);
	} else {
		host->hwcaps_problem = strdup("the loader's search did not show its machine facts");
	}
	/* Not known: every glibc-hwcaps subfolder is looked in, and a legacy one makes a search unknown. */
	host->machine.legacy_possible = host->hwcaps_knowledge != HWCAPS_KNOWN;
	free(text);
	return host->hwcaps_knowledge;
}
