/* A 32-bit (x86) program, built with i686-w64-mingw32-gcc: a child of another machine than the
   runtime's, which must start without the runtime, and which the launcher must refuse. */
#include <stdio.h>

int main(void)
{
	puts("32-bit probe ran");
	fflush(stdout);
	return 3;
}
