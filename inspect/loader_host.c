#define _GNU_SOURCE
#include "loader_host.h"

#include "loader/dst.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
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

int loader_host_expand(const struct loader_host *host, const char *list, const char *separators, const char *origin,
		       char ***dirs)
{
	*dirs = NULL;
	/* glibc ignores an empty RPATH or RUNPATH as a whole (decompose_rpath). */
	if (!list || !list[0])
		return 0;
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
	if (!self || dlinfo(self, RTLD_DI_SERINFOSIZE, &probe) != 0 || !(info = malloc(probe.dls_size))) {
		snprintf(message, size, "cannot learn the loader's default folders: %s", self ? dlerror() : "dlopen(NULL) failed");
		goto out;
	}
	*info = probe;
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
	const char *platform = (const char *)getauxval(AT_PLATFORM);
	host->platform = platform ? strdup(platform) : NULL;
	if (learn_default_dirs(host, message, size) != 0)
		return -1;
	/* $LIB is the name of glibc's own library folder (DL_DST_LIB): its first default folder
	   without the leading slash ("lib/x86_64-linux-gnu" on Debian, "lib64" on Fedora). */
	host->lib = strdup(host->default_dirs[0] + (host->default_dirs[0][0] == '/'));
	host->library_path = library_path ? strdup(library_path) : NULL;
	int major = 0, minor = 0;
	sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor);
	host->legacy_hwcaps = major == 2 && minor < 37;
	return 0;
}

void loader_host_free(struct loader_host *host)
{
	free(host->interpreter);
	free(host->lib);
	free(host->platform);
	loader_host_free_dirs(host->default_dirs, host->default_count);
	free(host->library_path);
	loader_host_free_dirs(host->hwcaps, host->hwcaps_count);
	loader_host_free_dirs(host->legacy, host->legacy_count);
	free(host->hwcaps_problem);
	memset(host, 0, sizeof(*host));
}

/* The loader's --help, or NULL. Bounded in size and time: a loader that hangs is killed. */
static char *loader_help(const char *interpreter, char **problem)
{
	int pipe_fds[2];
	posix_spawn_file_actions_t actions;
	pid_t pid;
	char *argv[] = { (char *)interpreter, "--help", NULL };
	if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
		*problem = strdup(strerror(errno));
		return NULL;
	}
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	int error = posix_spawn(&pid, interpreter, &actions, NULL, argv, environ);
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
		*problem = strdup("the loader printed nothing for --help");
		return NULL;
	}
	text[used] = '\0';
	return text;
}

/* The names listed under heading ("  NAME (..., searched)"), in order, without repeats. */
static size_t searched_names(const char *text, const char *heading, char ***names)
{
	*names = NULL;
	const char *s = strstr(text, heading);
	size_t count = 0;
	if (!s)
		return 0;
	s = strchr(s, '\n');
	while (s && s[1] == ' ' && s[2] == ' ') {
		const char *line = s + 3;
		const char *end = strchrnul(line, '\n');
		size_t length = strcspn(line, " \n");
		char *name = strndup(line, length);
		bool searched = memmem(line, (size_t)(end - line), "searched", 8) != NULL;
		for (size_t i = 0; name && searched && i < count; i++)
			if (strcmp((*names)[i], name) == 0)
				searched = false;
		char **grown = searched && name ? realloc(*names, (count + 1) * sizeof(char *)) : NULL;
		if (grown) {
			*names = grown;
			(*names)[count++] = name;
		} else {
			free(name);
		}
		s = *end ? end : NULL;
	}
	return count;
}

enum hwcaps_knowledge loader_host_hwcaps(struct loader_host *host)
{
	if (host->hwcaps_knowledge != HWCAPS_NOT_ASKED)
		return host->hwcaps_knowledge;
	host->hwcaps_knowledge = HWCAPS_UNKNOWN;
	if (!host->interpreter) {
		host->hwcaps_problem = strdup("the inspector has no PT_INTERP to ask");
		return host->hwcaps_knowledge;
	}
	char *text = loader_help(host->interpreter, &host->hwcaps_problem);
	if (!text)
		return host->hwcaps_knowledge;
	/* glibc 2.33 and later print these sections; an older loader searches no glibc-hwcaps. */
	host->hwcaps_count = searched_names(text, "Subdirectories of glibc-hwcaps directories", &host->hwcaps);
	host->legacy_count = searched_names(text, "Legacy HWCAP subdirectories", &host->legacy);
	if (strstr(text, "glibc-hwcaps") || strstr(text, "Shared library search path"))
		host->hwcaps_knowledge = HWCAPS_KNOWN;
	else
		host->hwcaps_problem = strdup("the loader's --help does not list its hwcaps subfolders");
	free(text);
	return host->hwcaps_knowledge;
}
