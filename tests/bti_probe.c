/* The aarch64 stub under BTI: the runtime and a stand-in for the real dlopen (fixtures/bti_dlopen.c)
   are marked for BTI, so the loader maps them guarded. A call of dlopen from this program through
   the PLT (`br x17`) and through a pointer (`blr`) must land on the stub's `bti c`, and the stub's
   tail jump must enter the stand-in through x16. Exits 77 where BTI is not enforced (a CPU
   without it, or a loader that does not guard pages): checked first with a call to a function
   that has no landing pad. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern int bti_real_calls;
int bti_no_landing_pad(void);

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0); /* a fault must not take the lines before it */
	pid_t pid = fork();
	if (pid == 0) {
		int (*volatile unguarded)(void) = bti_no_landing_pad;
		_exit(unguarded() == 7 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("BTI is not enforced here: a call to a function without a landing pad went through\n");
		return 77;
	}
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGILL) {
		printf("the call without a landing pad ended with status %#x, not SIGILL\n", status);
		return 1;
	}
	printf("BTI enforced: a call without a landing pad raises SIGILL\n");
	void *handle = dlopen("libnot-an-nvidia-library.so.77", RTLD_NOW);
	void *(*volatile through_pointer)(const char *, int) = dlopen;
	void *again = through_pointer("libnot-an-nvidia-library.so.77", RTLD_NOW);
	printf("dlopen through the PLT and through a pointer: the real function reached %d times\n", bti_real_calls);
	return handle == &bti_real_calls && again == &bti_real_calls && bti_real_calls == 2 ? 0 : 1;
}
