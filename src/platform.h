/* What the shared rooms ask of the operating system: one small function for each difference, so
   that the rooms read the same on every platform. src/linux/platform.c (POSIX) and
   src/windows/platform.c (Win32) hold the two answers. Paths are char strings: the file system's
   own bytes on Linux, UTF-8 on Windows (converted to UTF-16 at each call into Win32). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A folder's identity, the same under every name that reaches it (links, case, either separator):
   (st_dev, st_ino) on Linux; (volume serial number, file index) on Windows. */
struct folder_identity {
	unsigned long long device;
	unsigned long long inode;
	/* The folder holds no folder: its link count says so, on a file system whose link counts
	   count the folders inside (ext2/3/4, XFS, tmpfs). False where that is not known. */
	bool no_subfolders;
	/* When the folder last changed (its status change time, in nanoseconds; 0 where unknown): an
	   entry created, removed or renamed inside it changes this, and nobody can set it back. */
	long long changed_ns;
	/* That change lies over a second in the past. File system clocks are coarse (a tick of some
	   milliseconds): a change in the same tick as the one just read would leave changed_ns as it
	   is, so only a settled folder may be remembered by its change time. */
	bool settled;
};

/* Fills identity for an existing folder. False, with errno set, when the folder cannot be examined
   (ENOENT, EACCES, ...) or is something else (ENOTDIR). */
bool platform_folder_identity(const char *folder, struct folder_identity *identity);

/* True when now is the folder remembered (its identity, settled when it was remembered) and it has
   not changed since: what a fact about its entries may be remembered by. Never where the change
   time is unknown. */
static inline bool platform_folder_unchanged(const struct folder_identity *remembered, const struct folder_identity *now)
{
	return remembered->changed_ns && remembered->changed_ns == now->changed_ns && remembered->inode == now->inode &&
	       remembered->device == now->device;
}

/* True when path names an existing file that is not a folder. */
bool platform_is_file(const char *path);
/* True when both paths reach one file (links followed): the loader maps a file once, whatever name
   it is asked by. */
bool platform_same_file(const char *a, const char *b);

/* The names in folder, "." and ".." left out, sorted in byte order on Linux (strcmp, whatever the
   process's locale; on Windows as Windows compares names): the order the search visits wheel
   siblings in, the same in every run, for the runtime and the inspector alike. Returns how many
   there are, with the malloc'd array in *names (NULL when none; free it with platform_free_names),
   or -1 with errno. */
int platform_list_folder(const char *folder, char ***names);
void platform_free_names(char **names, int count);

/* Who owns a folder or file and who else may write to it, for the trust rule (src/trust.h). */
struct platform_access {
	unsigned long long owner; /* st_uid */
	unsigned long long group; /* st_gid */
	bool group_writable;
	bool others_writable;
	bool sticky;
};

/* Fills access for path, following links as the loader does; false, with errno, when path cannot
   be examined. Windows: always false (ENOSYS): its permissions are access-control lists, which
   these facts do not describe. */
bool platform_access_of(const char *path, struct platform_access *access);

/* Who a process acts as, for the trust rule: its effective user and every group it acts with
   (effective and supplementary). known is false where the platform has no such facts (Windows),
   and the trust rule is then not applied. */
#define PLATFORM_MAX_GROUPS 64
struct platform_identity {
	bool known;
	unsigned long long user;
	size_t group_count;
	unsigned long long groups[PLATFORM_MAX_GROUPS];
};

/* This process. */
void platform_current_identity(struct platform_identity *identity);

/* Opens path for appending, creating it when missing: each write lands whole at the end of the
   file, also when other processes append to it (O_APPEND; FILE_APPEND_DATA on Windows). A file
   descriptor for write(2) and close(2), or -1 with errno (EINVAL: not a regular file, which a
   FIFO, a pipe, a socket or a device would be: they can block or kill the host process). On Linux
   the other rules of platform_append_line apply too. */
int platform_open_append(const char *path);

/* Appends one line (length bytes, its newline included) to the event log at path, an absolute
   path: the file is opened for this line alone and closed after it, so the runtime holds no
   descriptor between events (a program that closes or reuses descriptors it did not open never
   meets one of the runtime's, the descriptor limit is never held against the program, and a file
   replaced by log rotation gets the next line). The file must be a regular file on a file system
   that holds data (not procfs, sysfs, cgroupfs, debugfs and the like, whose files are the kernel's
   settings), reached without a symbolic link at its last component, and, in a privileged process
   (platform_is_privileged), without one anywhere on its path; owned by the effective user or root,
   with no other name (hard link); created 0600. The line is never glued to a partial one left by
   an earlier short write (a newline goes first then), and a short write of its own is taken back.
   With line NULL: the same checks, and the file created, but nothing written. 0, or a negative
   errno (-EINVAL not a regular file, -EXDEV a kernel's file, -ELOOP a symbolic link on the way,
   -EPERM another owner, -EMLINK other names, -EFBIG the line would pass the process's file size
   limit). */
int platform_append_line(const char *path, const char *line, size_t length);

/* The process may write where its user could not: its effective user is root (a container's root
   too), or it holds in its effective set a capability that overrides file permissions
   (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER). Set-user-ID and file-capability programs
   (AT_SECURE) read no setting at all (config.h), so they never get this far. Such a process
   follows no symbolic link to its event log. Raw system calls only, callable in the append's
   child. Windows: false (its permissions are access-control lists). */
bool platform_is_privileged(void);

/* Writes length bytes to the process's standard error, whole unless it fails: the log's lines and
   the exit report. Linux: write(2) on descriptor 2. Windows: WriteFile on the standard error handle,
   past the C runtime, whose exit closes its descriptors before the DLLs' DLL_PROCESS_DETACH runs
   (the exit report's moment; see platform_keep_stderr) and whose locks a thread that ended with
   the process may hold. */
void platform_write_stderr(const char *text, size_t length);
/* Windows: keeps a handle of its own to the standard error of now, which platform_write_stderr
   uses from then on. The C runtime of a program may close its standard handles at exit before
   DLL_PROCESS_DETACH, where the exit report is written; the front calls this at start-up only when
   a report is asked for, since the handle keeps a pipe's writing end open until the process ends.
   Nothing on Linux. */
void platform_keep_stderr(void);

/* path made absolute against the working folder now (unchanged when it is absolute already).
   False, with errno, when it does not fit in size or the working folder cannot be named. */
bool platform_absolute_path(const char *path, char *absolute, size_t size);

/* Seconds and microseconds since 1970, for the event log. */
void platform_wall_clock(long long *seconds, long *microseconds);

long platform_process_id(void);

/* True when this process is the one NVINTERPOSE_REPORT names: the process with that pid. On
   Windows also the program the launcher with that pid started for --report: Windows has no exec,
   and the launcher learns its program's pid only when it creates it, so it writes that pid into a
   section named for its own (report_section.h), which this reads. */
bool platform_reports_for(long report_pid);

/* The file of a run's report that NVINTERPOSE_REPORT=report_pid names, into path: where each
   other process of the run appends its report at exit, for the reported process (or the launcher)
   to print. Linux: TMPDIR (when absolute; else /tmp)/nvinterpose-report-PID, which
   nvinterpose-run makes the same way (platform_append_line's rules keep another user's file
   there from being written). False where the runs' reports are not gathered (Windows:
   the launcher starts one program, which reports). */
bool platform_report_file(long report_pid, const char *tmpdir, char *path, size_t size);
/* Reads the file at path (not through a symbolic link; a regular file of the effective user's),
   at most max bytes, into a malloc'd, NUL-terminated text, and removes it. NULL when there is
   none or it is refused. */
char *platform_take_file(const char *path, size_t max);

/* Lets another thread run (sched_yield; SwitchToThread on Windows). */
void platform_yield(void);

/* Runs handler in the child after a fork, where fork exists (pthread_atfork); nothing on Windows,
   where a child process starts with fresh memory. */
void platform_after_fork_in_child(void (*handler)(void));
