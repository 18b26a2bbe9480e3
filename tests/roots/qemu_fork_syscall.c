/* qemu-user's fork: a thread makes system calls in a loop while the main thread forks 200 times;
   each child makes one system call and exits. Every glibc on hardware runs it in well under a
   second; under qemu-user 7.2 it hangs most runs, a child blocked inside qemu (where its alarm is
   never delivered). The registry's fork test does the same, so the arm64 suite leaves it out and
   runs this to show why. Prints what it saw; exits 0 when every child exited. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int stop, calls;

static void *stat_in_a_loop(void *unused)
{
	(void)unused;
	struct stat st;
	while (!atomic_load(&stop)) {
		stat("/", &st);
		atomic_fetch_add(&calls, 1);
	}
	return NULL;
}

int main(void)
{
	pthread_t thread;
	pthread_create(&thread, NULL, stat_in_a_loop, NULL);
	while (atomic_load(&calls) < 1000)
		;
	int failed = 0;
	for (int i = 0; i < 200; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			alarm(5);
			struct stat st;
			_exit(stat("/", &st) == 0 ? 0 : 1);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	atomic_store(&stop, 1);
	pthread_join(thread, NULL);
	printf("200 children forked while a thread makes system calls: %d did not exit cleanly\n", failed);
	return failed != 0;
}
