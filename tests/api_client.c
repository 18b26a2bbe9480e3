/* A program linked against libnvinterpose.so (no LD_PRELOAD): the hooks come first through its
   link order, and the API is called directly. Used by the API and secure-execution tests.
   Usage: api-client LIBRARY [FAMILY]: loads LIBRARY (an NVRTC-like), compiles, prints the origin. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvinterpose.h"

int main(int argc, char **argv)
{
	printf("version: %s\n", nvi_version());
	if (argc < 2)
		return 0;
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*compile)(void) = h ? (int (*)(void))dlsym(h, "nvrtc_like_compile") : NULL;
	printf("compile: %d\n", compile ? compile() : -100);
	char folder[4096];
	int rc = nvi_family_origin(argc > 2 ? argv[2] : "nvrtc", folder, sizeof(folder));
	printf("origin: %s\n", rc == 0 ? folder : strerror(-rc));
	return 0;
}
