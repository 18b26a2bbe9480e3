/* The demo's application: loads an NVRTC (the real libnvrtc.so.13, or the NVRTC-like stand-in) by
   path, as Python's ctypes or a framework would, compiles a kernel, and says which builtins
   library the process mapped. Usage: nvinterpose-demo-app LIBRARY [RUNTIME-TO-ATTACH-LATE] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc-compile.h"

static int compile_real(void *nvrtc)
{
	char log[4096];
	int result = nvrtc_compile_kernel(nvrtc, log, sizeof(log));
	if (log[0])
		printf("    %s\n", log);
	return result;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		printf("usage: nvinterpose-demo-app LIBRARY [RUNTIME-TO-ATTACH-LATE]\n");
		return argc < 2 ? 2 : 0;
	}
	void *nvrtc = dlopen(argv[1], RTLD_NOW);
	if (!nvrtc) {
		printf("    %s\n", dlerror());
		return 1;
	}
	if (argc > 2 && !dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)) {
		printf("    %s\n", dlerror());
		return 1;
	}
	int (*standin)(void) = (int (*)(void))dlsym(nvrtc, "nvrtc_like_compile");
	int result = standin ? (standin() == 42 ? 0 : 1) : compile_real(nvrtc);
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[8192], builtins[4096] = "";
	while (maps && fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');
		if (path && strstr(path, "builtins")) {
			path[strcspn(path, "\n")] = '\0';
			snprintf(builtins, sizeof(builtins), "%s", path);
		}
	}
	if (maps)
		fclose(maps);
	printf("    compile: %s%s%s\n", result == 0 ? "ok" : "FAILED", builtins[0] ? ", builtins from " : "", builtins);
	return result == 0 ? 0 : 1;
}
