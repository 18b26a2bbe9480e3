/* A program's start on glibc 2.17 and newer (the inspector's; see glibc_compat.h). The start code
   of glibc 2.34 and newer (Scrt1.o) calls __libc_start_main@GLIBC_2.34, which older glibc lack, with
   no init function: that glibc runs the program's constructors itself. The program is linked with
   -Wl,--wrap=__libc_start_main, so the call comes here, and goes on to the machine's base version
   with an init function that runs them, as libc_nonshared's __libc_csu_init did for programs linked
   before 2.34. Every glibc runs an init function it is given, and then leaves the program's
   constructors to it; the loader runs the preinit array before. */
#include <stddef.h>

typedef void (*init_function)(int argc, char **argv, char **envp);
typedef int (*main_function)(int argc, char **argv, char **envp);

/* The linker's bounds of the program's init array, and crti's _init (DT_INIT). */
extern init_function __init_array_start[] __attribute__((visibility("hidden")));
extern init_function __init_array_end[] __attribute__((visibility("hidden")));
extern void _init(void);

int __libc_start_main(main_function main, int argc, char **argv, init_function init, void (*fini)(void), void (*rtld_fini)(void),
		      void *stack_end);
__asm__(".symver __libc_start_main, __libc_start_main@" GLIBC_COMPAT_BASE);

int __wrap___libc_start_main(main_function main, int argc, char **argv, init_function init, void (*fini)(void), void (*rtld_fini)(void),
			     void *stack_end);

static void run_constructors(int argc, char **argv, char **envp)
{
	_init();
	for (init_function *constructor = __init_array_start; constructor < __init_array_end; constructor++)
		(*constructor)(argc, argv, envp);
}

int __wrap___libc_start_main(main_function main, int argc, char **argv, init_function init, void (*fini)(void), void (*rtld_fini)(void),
			     void *stack_end)
{
	(void)init;
	(void)fini;
	return __libc_start_main(main, argc, argv, run_constructors, NULL, rtld_fini, stack_end);
}
