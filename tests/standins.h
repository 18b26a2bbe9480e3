/* Stand-in NVIDIA trees built at test time, shared by the preload suites. They use a major no real
   package ships (libnvrtc.so.77, libnvrtc-builtins.so.77.1): a stand-in named like an installed
   CUDA (a toolkit in ld.so.cache, Debian's 11.8 packages) would be answered by the real file. */
#pragma once

struct standin_wheel {
	char *root;     /* a temporary folder */
	char *lib;      /* ROOT/site-packages/nvidia/cuda_nvrtc/lib */
	char *nvrtc;    /* LIB/libnvrtc.so.77: NVRTC-like, no RUNPATH */
	char *builtins; /* LIB/libnvrtc-builtins.so.77.1: builtins_value() == 42 */
};

/* The NVRTC wheel layout with an NVRTC-like library and, when with_builtins, its builtins beside it. */
struct standin_wheel standin_nvrtc_wheel(int with_builtins);

/* Builds a builtins stand-in returning value at path (soname: its basename unless soname given). */
void standin_builtins(const char *path, int value, const char *soname);

/* The environment entry that preloads the runtime (NVI_RUNTIME). */
const char *standin_preload(void);
