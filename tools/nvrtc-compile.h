/* Compiling a small kernel with an NVRTC library found by dlopen, for the demo and the test probe. */
#pragma once

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int (*nvrtc_create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*nvrtc_compile_fn)(void *, int, const char *const *);
typedef int (*nvrtc_log_size_fn)(void *, size_t *);
typedef int (*nvrtc_log_fn)(void *, char *);

/* Creates and compiles a kernel with nvrtc (a dlopen handle); writes the first line of the compile
   log into log. Returns NVRTC's result (0 when it compiled), -1 when the symbols are missing. */
static inline int nvrtc_compile_kernel(void *nvrtc, char *log, size_t size)
{
	nvrtc_create_fn create = (nvrtc_create_fn)dlsym(nvrtc, "nvrtcCreateProgram");
	nvrtc_compile_fn compile = (nvrtc_compile_fn)dlsym(nvrtc, "nvrtcCompileProgram");
	nvrtc_log_size_fn log_size = (nvrtc_log_size_fn)dlsym(nvrtc, "nvrtcGetProgramLogSize");
	nvrtc_log_fn get_log = (nvrtc_log_fn)dlsym(nvrtc, "nvrtcGetProgramLog");
	void *program = NULL;
	log[0] = '\0';
	if (!create || !compile || !log_size || !get_log ||
	    create(&program, "extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }", "twice.cu", 0, NULL, NULL) != 0)
		return -1;
	int result = compile(program, 0, NULL);
	size_t length = 0;
	log_size(program, &length);
	char *text = calloc(1, length + 1);
	if (text) {
		get_log(program, text);
		text[strcspn(text, "\n")] = '\0';
		strncpy(log, text, size - 1);
		log[size - 1] = '\0';
		free(text);
	}
	return result;
}
