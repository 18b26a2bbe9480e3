/* The shared rooms' platform functions (src/platform.h) on Linux: POSIX calls, nothing more. */
#define _GNU_SOURCE
#include "platform.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool platform_folder_identity(const char *folder, struct folder_identity *identity)
{
	struct stat st;
	if (stat(folder, &st) != 0)
		return false;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return false;
	}
	identity->device = (unsigned long long)st.st_dev;
	identity->inode = (unsigned long long)st.st_ino;
	return true;
}

bool platform_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

static int skip_dot_entries(const struct dirent *entry)
{
	const char *name = entry->d_name;
	return !(name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')));
}

int platform_list_folder(const char *folder, char ***names)
{
	struct dirent **entries = NULL;
	int n = scandir(folder, &entries, skip_dot_entries, alphasort);
	*names = NULL;
	if (n < 0)
		return -1;
	/* A struct dirent starts with its fixed fields; the names are handed over as strings of their own. */
	char **list = malloc(sizeof(*list) * (size_t)(n ? n : 1));
	int count = 0;
	for (int i = 0; i < n; i++) {
		char *name = list ? strdup(entries[i]->d_name) : NULL;
		if (name)
			list[count++] = name;
		free(entries[i]);
	}
	free(entries);
	if (!list) {
		errno = ENOMEM;
		return -1;
	}
	*names = list;
	return count;
}

void platform_free_names(char **names, int count)
{
	for (int i = 0; names && i < count; i++)
		free(names[i]);
	free(names);
}

int platform_open_append(const char *path)
{
	/* A regular file only: opening a FIFO for writing blocks until a reader comes (in a constructor,
	   the whole process with it), and a pipe or socket whose reader goes raises SIGPIPE. */
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
	struct stat st;
	if (fd < 0) {
		if (errno == ENXIO)
			errno = EINVAL; /* a FIFO that nobody reads yet */
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);
	return fd;
}

void platform_wall_clock(long long *seconds, long *microseconds)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	*seconds = (long long)now.tv_sec;
	*microseconds = now.tv_nsec / 1000;
}

long platform_process_id(void) { return (long)getpid(); }

void platform_yield(void) { sched_yield(); }

void platform_after_fork_in_child(void (*handler)(void)) { pthread_atfork(NULL, NULL, handler); }
