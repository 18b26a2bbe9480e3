/* A fork caught at one of the two moments of another thread's loader call that leave a forked
   child in trouble, made to happen every time, and what the child then does: a load of an NVIDIA
   library and a call into it. Prints "child: ok", "child: hung" (killed by its alarm), "child:
   signal N" or "child: exit N", and exits 0; 77 (with the reason) where the moment cannot be made.
   Usage: fork-child list-lock LIBRARY | fork-child cache LIBRARY

   list-lock  LIBRARY (an NVIDIA library, loaded by path) is loaded before the fork, and at the fork
              another thread is inside dl_iterate_phdr: it holds the loader's list lock, which glibc
              does not reset in the child. The child's repeated loads of LIBRARY (by path and by
              soname) need no such lock without the runtime.
   cache      At the fork another thread's dlopen has unmapped ld.so.cache but not yet cleared the
              loader's pointer to it (held there by a seccomp trap on that munmap): the child's first
              dlopen, of LIBRARY, unmaps the range again, and with it whatever is mapped there by
              then. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define SKIP 77

enum stage { WAITING, AT_THE_MOMENT, FORKED, MISSED };
static _Atomic int stage;

static void wait_for(int wanted)
{
	while (atomic_load(&stage) != wanted)
		sched_yield();
}

static int hold_the_list_lock(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	atomic_store(&stage, AT_THE_MOMENT);
	wait_for(FORKED);
	return 1;
}

static void *list_lock_thread(void *arg)
{
	(void)arg;
	dl_iterate_phdr(hold_the_list_lock, NULL);
	return NULL;
}

/* ---- cache: the munmap of ld.so.cache trapped, done by the handler, the thread held there ---- */

static unsigned long cache_size;

#if defined(__x86_64__)
#define ARGUMENT(uc, i) ((uc)->uc_mcontext.gregs[(i) == 0 ? REG_RDI : REG_RSI])
#define SET_RESULT(uc, value) ((uc)->uc_mcontext.gregs[REG_RAX] = (value))
#elif defined(__aarch64__)
#define ARGUMENT(uc, i) ((uc)->uc_mcontext.regs[i])
#define SET_RESULT(uc, value) ((uc)->uc_mcontext.regs[0] = (value))
#endif

#ifdef ARGUMENT
static void on_trapped_munmap(int sig, siginfo_t *info, void *context)
{
	ucontext_t *uc = context;
	unsigned long address = (unsigned long)ARGUMENT(uc, 0), length = (unsigned long)ARGUMENT(uc, 1);
	(void)sig, (void)info;
	/* The same pages under another length, which the filter lets through. */
	long result = syscall(SYS_munmap, address, length % 4096 ? (length + 4095) & ~4095ul : length - 1);
	SET_RESULT(uc, result);
	int expected = WAITING;
	if (atomic_compare_exchange_strong(&stage, &expected, AT_THE_MOMENT))
		wait_for(FORKED);
}

static void *cache_thread(void *arg)
{
	(void)arg;
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_munmap, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)cache_size, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog program = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
	/* This thread only: the child is forked from the main thread, without the filter. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
		atomic_store(&stage, MISSED);
		return "seccomp filters are refused here";
	}
	/* A bare name nobody has: the search reaches ld.so.cache, which the loader maps, and fails. */
	dlopen("libnvinterpose-fork-child-missing.so.77", RTLD_NOW);
	int expected = WAITING;
	atomic_compare_exchange_strong(&stage, &expected, MISSED);
	return "the loader's dlopen did not unmap ld.so.cache";
}
#endif

static int child(const char *library)
{
	alarm(5);
	void *by_path = dlopen(library, RTLD_NOW);
	const char *soname = strrchr(library, '/') ? strrchr(library, '/') + 1 : library;
	void *by_soname = by_path ? dlopen(soname, RTLD_NOW | RTLD_NOLOAD) : NULL;
	int (*release)(void) = by_path ? (int (*)(void))dlsym(by_path, "nvrtc_like_release") : NULL;
	return by_soname && release && release() == -1 ? 0 : 3;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "list-lock") != 0 && strcmp(argv[1], "cache") != 0)) {
		fprintf(stderr, "usage: fork-child list-lock|cache LIBRARY\n");
		return 2;
	}
	const char *library = argv[2];
	void *(*thread)(void *) = list_lock_thread;
	if (strcmp(argv[1], "list-lock") == 0) {
		if (!dlopen(library, RTLD_NOW)) {
			printf("cannot load %s: %s\n", library, dlerror());
			return 2;
		}
	} else {
#ifdef ARGUMENT
		struct stat st;
		if (stat("/etc/ld.so.cache", &st) != 0 || st.st_size == 0) {
			printf("skipped: no /etc/ld.so.cache\n");
			return SKIP;
		}
		cache_size = (unsigned long)st.st_size;
		struct sigaction action = { .sa_sigaction = on_trapped_munmap, .sa_flags = SA_SIGINFO };
		sigaction(SIGSYS, &action, NULL);
		thread = cache_thread;
#else
		printf("skipped: no register layout for the trap on this architecture\n");
		return SKIP;
#endif
	}
	pthread_t id;
	pthread_create(&id, NULL, thread, NULL);
	while (atomic_load(&stage) == WAITING)
		sched_yield();
	if (atomic_load(&stage) == MISSED) {
		void *reason = NULL;
		pthread_join(id, &reason);
		printf("skipped: %s\n", (const char *)reason);
		return SKIP;
	}
	pid_t pid = fork();
	if (pid == 0)
		_exit(child(library));
	atomic_store(&stage, FORKED);
	pthread_join(id, NULL);
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		perror("fork");
		return 2;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		printf("child: hung\n");
	else if (WIFSIGNALED(status))
		printf("child: signal %d\n", WTERMSIG(status));
	else if (WEXITSTATUS(status) != 0)
		printf("child: exit %d\n", WEXITSTATUS(status));
	else
		printf("child: ok\n");
	return 0;
}
