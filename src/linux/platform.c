/* The shared rooms' platform functions (src/platform.h) on Linux: POSIX calls, nothing more. */
#define _GNU_SOURCE
#include "platform.h"

#include <dirent.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Whether the file system of device (which holds folder) counts the folders inside a folder in its
   link count (2 + one for each), as ext2/3/4, XFS and tmpfs do; btrfs, overlay, network and FUSE
   file systems do not promise it. Asked once a device (statfs), remembered in a small table. */
#define COUNTING_DEVICES 16
static struct {
	_Atomic unsigned long long device_plus_one; /* 0: free */
	_Atomic int counts;                         /* 0 not yet known, 1 no, 2 yes */
} counting[COUNTING_DEVICES];

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif

static bool counts_subfolders(dev_t device, const char *folder)
{
	unsigned long long key = (unsigned long long)device + 1;
	for (size_t i = 0; i < COUNTING_DEVICES; i++) {
		unsigned long long held = atomic_load_explicit(&counting[i].device_plus_one, memory_order_acquire);
		if (held == 0 && atomic_compare_exchange_strong(&counting[i].device_plus_one, &held, key))
			held = key; /* this slot is the device's now (a failed exchange left the holder in held) */
		if (held != key)
			continue;
		int counts = atomic_load_explicit(&counting[i].counts, memory_order_acquire);
		if (counts == 0) {
			struct statfs fs;
			bool yes = statfs(folder, &fs) == 0 &&
				   (fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == XFS_SUPER_MAGIC || fs.f_type == TMPFS_MAGIC);
			counts = yes ? 2 : 1;
			atomic_store_explicit(&counting[i].counts, counts, memory_order_release);
		}
		return counts == 2;
	}
	return false;
}

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
	identity->no_subfolders = st.st_nlink == 2 && counts_subfolders(st.st_dev, folder);
	identity->changed_ns = (long long)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	struct timespec now;
	identity->settled = clock_gettime(CLOCK_REALTIME, &now) == 0 && st.st_ctim.tv_sec < now.tv_sec - 1;
	return true;
}

bool platform_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

bool platform_same_file(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static bool is_dot_entry(const char *name) { return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')); }

/* Byte order, as strcmp: never the locale's collation (alphasort's strcoll), which a program that
   calls setlocale(LC_ALL, "") would change under the runtime, and the inspector would not share. */
static int compare_names(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int platform_list_folder(const char *folder, char ***names)
{
	DIR *dir = opendir(folder);
	*names = NULL;
	if (!dir)
		return -1;
	char **list = NULL;
	size_t count = 0, capacity = 0;
	bool failed = false;
	for (struct dirent *entry; !failed && (entry = readdir(dir));) {
		if (is_dot_entry(entry->d_name))
			continue;
		if (count == capacity) {
			char **grown = count < INT_MAX / 2 ? realloc(list, (capacity ? 2 * capacity : 16) * sizeof(*list)) : NULL;
			if (!(failed = !grown)) {
				list = grown;
				capacity = capacity ? 2 * capacity : 16;
			}
		}
		if (!failed && !(failed = !(list[count] = strdup(entry->d_name))))
			count++;
	}
	closedir(dir);
	if (failed) {
		platform_free_names(list, (int)count);
		errno = ENOMEM;
		return -1;
	}
	if (count)
		qsort(list, count, sizeof(*list), compare_names);
	*names = list;
	return (int)count;
}

void platform_free_names(char **names, int count)
{
	for (int i = 0; names && i < count; i++)
		free(names[i]);
	free(names);
}

/* ---- the event log -----------------------------------------------------------------------
   Raw system calls only (syscall(2)): the append runs in a child that shares the caller's memory
   and thread pointer, where no libc cancellation point or lock may be reached. */

static long sys(long number, long a, long b, long c, long d)
{
	long result;
	do
		result = syscall(number, a, b, c, d);
	while (result < 0 && errno == EINTR);
	return result;
}

bool platform_is_privileged(void)
{
	if (sys(SYS_geteuid, 0, 0, 0, 0) == 0)
		return true;
	struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	/* A process whose capabilities cannot be read is taken for privileged: the stricter rule. */
	if (sys(SYS_capget, (long)&header, (long)data, 0, 0) != 0)
		return true;
	unsigned mask = 1u << CAP_DAC_OVERRIDE | 1u << CAP_DAC_READ_SEARCH | 1u << CAP_FOWNER;
	return (data[0].effective & mask) != 0;
}

/* File systems whose files are the kernel's settings and state, not data: a write there changes
   the system (the host name through /proc/sys, a cgroup's limits) or fails, whatever the file's
   owner and mode say. Numbers as linux/magic.h has them (older headers lack some). */
static bool is_kernel_file_system(unsigned long type)
{
	static const unsigned long kernel_types[] = {
		0x9fa0,     /* proc */
		0x62656572, /* sysfs */
		0x27e0eb,   /* cgroup */
		0x63677270, /* cgroup2 */
		0x64626720, /* debugfs */
		0x74726163, /* tracefs */
		0x73636673, /* securityfs */
		0xf97cff8c, /* selinuxfs */
		0x43415d53, /* smackfs */
		0xcafe4a11, /* bpf */
		0x6165676c, /* pstore */
		0xde5e81e4, /* efivarfs */
		0x62656570, /* configfs */
		0x65735543, /* fusectl */
		0x42494e4d, /* binfmt_misc */
		0x19800202, /* mqueue */
		0x67596969, /* rpc_pipefs */
		0x6e667364, /* nfsd */
		0x958458f6, /* hugetlbfs: write(2) is refused there */
	};
	for (size_t i = 0; i < sizeof(kernel_types) / sizeof(kernel_types[0]); i++)
		if (type == kernel_types[i])
			return true;
	return false;
}

/* -EXDEV when the descriptor's file lies on a kernel file system; 0 otherwise, and where fstatfs
   cannot say (an O_PATH descriptor before Linux 3.12: the file's own check, after it is opened,
   still holds). */
static int refuse_kernel_file(int fd)
{
	struct statfs fs;
	return sys(SYS_fstatfs, fd, (long)&fs, 0, 0) == 0 && is_kernel_file_system((unsigned long)fs.f_type) ? -EXDEV : 0;
}

#ifndef SYS_openat2
#define SYS_openat2 437 /* every architecture, since Linux 5.6; glibc before 2.32 names no number for it */
#endif
/* struct open_how and RESOLVE_NO_SYMLINKS (linux/openat2.h, which older headers lack). */
struct log_open_how {
	unsigned long long flags, mode, resolve;
};
#define LOG_RESOLVE_NO_SYMLINKS 0x04

#define FOLDER_FLAGS (O_PATH | O_DIRECTORY | O_CLOEXEC)
/* A FIFO opened O_RDWR never blocks; O_NONBLOCK keeps other special files from blocking. */
#define LOG_FLAGS (O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK)

/* The entry name of the folder fd is a symbolic link. */
static bool is_link_at(int fd, const char *name)
{
	struct stat st;
	return sys(SYS_newfstatat, fd, (long)name, (long)&st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* path opened with flags one component at a time, none a symbolic link (O_NOFOLLOW at each; a link
   opened as a folder gives ENOTDIR, told apart by an lstat): where openat2 is missing. At most two
   descriptors at once. */
static int open_by_components(const char *path, int flags, int mode)
{
	int fd = (int)sys(SYS_openat, AT_FDCWD, (long)(path[0] == '/' ? "/" : "."), FOLDER_FLAGS, 0);
	if (fd < 0)
		return -errno;
	for (const char *s = path;;) {
		while (*s == '/')
			s++;
		size_t length = strcspn(s, "/");
		if (length == 0)
			return fd;
		bool last = s[length + strspn(s + length, "/")] == '\0';
		char component[256]; /* NAME_MAX + 1 */
		int next = -ENAMETOOLONG;
		if (length < sizeof(component)) {
			memcpy(component, s, length);
			component[length] = '\0';
			next = (int)sys(SYS_openat, fd, (long)component, (last ? flags : FOLDER_FLAGS) | O_NOFOLLOW, mode);
			int error = errno;
			if (next < 0)
				next = (error == ENOTDIR || error == ELOOP) && is_link_at(fd, component) ? -ELOOP : -error;
		}
		sys(SYS_close, fd, 0, 0, 0);
		if (next < 0 || last)
			return next;
		fd = next;
		s += length;
	}
}

/* path opened with flags, no symbolic link anywhere on it: openat2's RESOLVE_NO_SYMLINKS, or one
   component at a time where the kernel lacks it (before 5.6) or a seccomp filter refuses it (as
   Docker's did before 20.10). A descriptor or a negative errno (-ELOOP for a link). */
static int open_without_links(const char *path, int flags, int mode)
{
	struct log_open_how how = { .flags = (unsigned long long)flags, .mode = (unsigned long long)mode,
				    .resolve = LOG_RESOLVE_NO_SYMLINKS };
	int fd = (int)sys(SYS_openat2, AT_FDCWD, (long)path, (long)&how, sizeof(how));
	if (fd >= 0)
		return fd;
	return errno == ENOSYS || errno == EPERM ? open_by_components(path, flags, mode) : -errno;
}

/* The folder's file system and the file's kind, checked before the event log is opened. A kernel's
   file or a device is refused before it is opened, since an open alone can act (a watchdog device
   starts counting). A privileged process follows no symbolic link on the way, since a link planted
   in a folder on the path could send its appends into any file. 0 or a negative errno. */
static int check_log_place(const char *folder, const char *name, const char *path, bool privileged)
{
	struct statfs fs;
	struct stat st;
	int error = 0, dir = AT_FDCWD;
	const char *entry = path;
	if (privileged) {
		if ((dir = open_without_links(folder, FOLDER_FLAGS, 0)) < 0)
			return dir;
		error = refuse_kernel_file(dir);
		entry = name;
	} else if (sys(SYS_statfs, (long)folder, (long)&fs, 0, 0) == 0 && is_kernel_file_system((unsigned long)fs.f_type)) {
		error = -EXDEV;
	}
	if (!error && sys(SYS_newfstatat, dir, (long)entry, (long)&st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		error = S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL;
	if (dir != AT_FDCWD)
		sys(SYS_close, dir, 0, 0, 0);
	return error;
}

/* The event log opened under its rules (platform.h), or a negative errno. Read access is needed
   too: the last byte of the file says whether an earlier line was left partial. One descriptor at
   a time (two for a moment where openat2 is missing), as a program at its descriptor limit leaves
   few. */
static int open_log(const char *path)
{
	char folder[4352] = ".";
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	size_t length = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path); /* "/x": the folder is "/" */
	if (length >= sizeof(folder))
		return -ENAMETOOLONG;
	if (slash) {
		memcpy(folder, path, length);
		folder[length] = '\0';
	}
	if (!name[0])
		return -EISDIR;
	bool privileged = platform_is_privileged();
	int error = check_log_place(folder, name, path, privileged);
	if (error)
		return error;
	int fd = privileged ? open_without_links(path, LOG_FLAGS, 0600) : (int)sys(SYS_openat, AT_FDCWD, (long)path, LOG_FLAGS, 0600);
	if (fd < 0 && !privileged)
		fd = -errno;
	if (fd < 0)
		return fd == -ENXIO ? -EINVAL : fd;
	struct stat st;
	if (sys(SYS_fstat, fd, (long)&st, 0, 0) != 0)
		error = -errno;
	else if (!S_ISREG(st.st_mode))
		error = -EINVAL;
	/* Whoever else owns it chose what it is (a planted file the runtime would append to, as root);
	   a second name may be a hard link planted to another user's file. */
	else if (st.st_uid != (uid_t)sys(SYS_geteuid, 0, 0, 0, 0) && st.st_uid != 0)
		error = -EPERM;
	else if (st.st_nlink > 1)
		error = -EMLINK;
	else if (sys(SYS_fcntl, fd, F_SETFL, O_APPEND, 0) != 0)
		error = -errno;
	/* A kernel's file can lie on another file system than its folder (a bind mount). */
	if (!error)
		error = refuse_kernel_file(fd);
	if (error) {
		sys(SYS_close, fd, 0, 0, 0);
		return error;
	}
	return fd;
}

/* Writers of the log take its lock for the few system calls between reading its end and writing
   theirs, so that a partial line is seen and taken back before another line follows it. The lock
   is waited for 10 ms at most: a writer stopped while it holds it (SIGSTOP) must not stall the
   others' hosts. */
static bool lock_log(int fd)
{
	for (int i = 0; i < 50; i++) {
		if (sys(SYS_flock, fd, LOCK_EX | LOCK_NB, 0, 0) == 0)
			return true;
		if (errno != EWOULDBLOCK)
			return false;
		struct timespec pause = { 0, 200000 };
		syscall(SYS_nanosleep, (long)&pause, 0L);
	}
	return false;
}

static int append_to(int fd, const char *line, size_t length)
{
	struct stat st;
	char last = '\n';
	bool locked = lock_log(fd);
	if (sys(SYS_fstat, fd, (long)&st, 0, 0) != 0)
		return -errno;
	/* An earlier writer's short write (ENOSPC, a file size limit) left a line without its end: the
	   new line starts on a line of its own. Only under the lock: without it the size read may be
	   that of another writer's line half copied in (the kernel grows the file a page at a time),
	   and its last byte no line end. The append itself stays whole either way (O_APPEND). */
	if (locked && st.st_size > 0 && sys(SYS_pread64, fd, (long)&last, 1, st.st_size - 1) != 1)
		last = '\n';
	struct iovec parts[2] = { { (void *)"\n", 1 }, { (void *)line, length } };
	int first = last == '\n';
	size_t total = length + (size_t)!first;
	/* A write that starts past RLIMIT_FSIZE raises SIGXFSZ, whose default kills the process, and one
	   that crosses it is cut: a line that does not fit is not written at all. */
	struct rlimit limit;
	if (sys(SYS_getrlimit, RLIMIT_FSIZE, (long)&limit, 0, 0) == 0 && limit.rlim_cur != RLIM_INFINITY &&
	    (unsigned long long)st.st_size + total > (unsigned long long)limit.rlim_cur)
		return -EFBIG;
	long n = sys(SYS_writev, fd, (long)(parts + first), 2 - first, 0);
	if (n == (long)total)
		return 0;
	int error = n < 0 ? -errno : -ENOSPC;
	/* A short write is taken back: the file ends where this line began. */
	if (n > 0 && sys(SYS_fstat, fd, (long)&st, 0, 0) == 0 && st.st_size >= n)
		sys(SYS_ftruncate, fd, st.st_size - n, 0, 0);
	return error;
}

struct append_job {
	const char *path, *line;
	size_t length;
	int result;
};

static int run_append(void *arg)
{
	struct append_job *job = arg;
	int fd = open_log(job->path);
	job->result = fd < 0 ? fd : job->line ? append_to(fd, job->line, job->length) : 0;
	if (fd >= 0)
		sys(SYS_close, fd, 0, 0, 0);
	return 0;
}

#define APPEND_STACK (64 * 1024)

/* The append in a child process that shares this one's memory but has a copy of its descriptor
   table (CLONE_VM | CLONE_VFORK, no CLONE_FILES; what posix_spawn makes): the log's descriptor
   exists in the child's table only, so no thread of the program can close it, reuse its number,
   or see its number taken, whatever it does meanwhile, and the program's descriptor limit is not
   touched. The caller's thread waits for the child; every signal is blocked meanwhile (the
   child's SIGXFSZ, if any, dies with it). The child exits with no signal to the parent, so the
   program's own wait() never sees it. False when no child could be made. */
static bool append_in_child(struct append_job *job)
{
	/* A seccomp filter may kill the process for a clone it did not expect: no child under one. */
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0)
		return false;
	void *stack = mmap(NULL, APPEND_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return false;
	sigset_t all, old;
	sigfillset(&all);
	/* sigprocmask: glibc's sets the calling thread's mask, as pthread_sigmask, which lived in
	   libpthread.so.0 before glibc 2.32 (the runtime needs libc alone). */
	sigprocmask(SIG_SETMASK, &all, &old);
	pid_t child = clone(run_append, (char *)stack + APPEND_STACK, CLONE_VM | CLONE_VFORK, job);
	if (child > 0)
		while (waitpid(child, NULL, __WCLONE) < 0 && errno == EINTR)
			;
	sigprocmask(SIG_SETMASK, &old, NULL);
	munmap(stack, APPEND_STACK);
	return child > 0;
}

/* Where no child can be made (a seccomp filter, the process limit): the same in this thread,
   which leaves a window of a few system calls in which another thread that closes descriptors it
   does not own could give the log's number to a file of its own. SIGXFSZ is held and, when this
   write raised it, taken. */
static void append_in_thread(struct append_job *job)
{
	sigset_t xfsz, old;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	sigprocmask(SIG_BLOCK, &xfsz, &old);
	run_append(job);
	struct timespec now = { 0, 0 };
	if (job->result == -EFBIG && !sigismember(&old, SIGXFSZ))
		sigtimedwait(&xfsz, NULL, &now);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int platform_append_line(const char *path, const char *line, size_t length)
{
	int saved_errno = errno;
	struct append_job job = { .path = path, .line = line, .length = length, .result = -ECHILD };
	if (!append_in_child(&job))
		append_in_thread(&job);
	errno = saved_errno;
	return job.result;
}

bool platform_access_of(const char *path, struct platform_access *access)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	access->owner = (unsigned long long)st.st_uid;
	access->group = (unsigned long long)st.st_gid;
	access->group_writable = (st.st_mode & S_IWGRP) != 0;
	access->others_writable = (st.st_mode & S_IWOTH) != 0;
	access->sticky = (st.st_mode & S_ISVTX) != 0;
	return true;
}

void platform_current_identity(struct platform_identity *identity)
{
	gid_t groups[PLATFORM_MAX_GROUPS];
	int n = getgroups(PLATFORM_MAX_GROUPS, groups);
	identity->known = true;
	identity->user = (unsigned long long)geteuid();
	identity->groups[0] = (unsigned long long)getegid();
	identity->group_count = 1;
	/* More groups than that (getgroups fails with EINVAL) leave the effective group alone: fewer
	   groups only make the rule stricter. */
	for (int i = 0; i < n && identity->group_count < PLATFORM_MAX_GROUPS; i++)
		identity->groups[identity->group_count++] = (unsigned long long)groups[i];
}

int platform_open_append(const char *path)
{
	int fd = open_log(path);
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	return fd;
}

bool platform_absolute_path(const char *path, char *absolute, size_t size)
{
	size_t length = strlen(path);
	if (path[0] == '/') {
		if (length >= size) {
			errno = ENAMETOOLONG;
			return false;
		}
		memcpy(absolute, path, length + 1);
		return true;
	}
	if (!getcwd(absolute, size))
		return false;
	size_t used = strlen(absolute);
	if (used + 1 + length >= size) {
		errno = ENAMETOOLONG;
		return false;
	}
	if (used > 1 || absolute[0] != '/')
		absolute[used++] = '/';
	else
		used = 1;
	memcpy(absolute + used, path, length + 1);
	return true;
}

void platform_wall_clock(long long *seconds, long *microseconds)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	*seconds = (long long)now.tv_sec;
	*microseconds = now.tv_nsec / 1000;
}

void platform_write_stderr(const char *text, size_t length)
{
	while (length > 0) {
		ssize_t n = write(STDERR_FILENO, text, length);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		text += n;
		length -= (size_t)n;
	}
}

void platform_keep_stderr(void) {}

bool platform_reports_for(long report_pid) { return platform_process_id() == report_pid; }

bool platform_report_file(long report_pid, const char *tmpdir, char *path, size_t size)
{
	const char *folder = tmpdir && tmpdir[0] == '/' ? tmpdir : "/tmp";
	int n = snprintf(path, size, "%s/nvinterpose-report-%ld", folder, report_pid);
	return n > 0 && (size_t)n < size;
}

char *platform_take_file(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char *text = NULL;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (size_t)st.st_size > max ||
	    !(text = malloc((size_t)st.st_size + 1)))
		goto out;
	size_t used = 0;
	for (ssize_t n; used < (size_t)st.st_size && (n = read(fd, text + used, (size_t)st.st_size - used)) > 0;)
		used += (size_t)n;
	text[used] = '\0';
	unlink(path);
out:
	close(fd);
	return text;
}

long platform_process_id(void) { return (long)getpid(); }

void platform_yield(void) { sched_yield(); }

void platform_after_fork_in_child(void (*handler)(void)) { pthread_atfork(NULL, NULL, handler); }
