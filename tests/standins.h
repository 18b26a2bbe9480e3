/* Stand-in NVIDIA trees built at test time, shared by the preload suites. They use CUDA 12 names
   (libnvrtc.so.12, libnvrtc-builtins.so.12.9): the machine's CUDA 13 toolkit is in ld.so.cache, and
   a stand-in named like it would be shadowed by the real file. */
#pragma once

struct standin_wheel {
	char *root;     /* a temporary folder */
	char *lib;      /* ROOT/site-packages/nvidia/cuda_nvrtc/lib */
	char *nvrtc;    /* LIB/libnvrtc.so.12: NVRTC-like, no RUNPATH */
	char *builtins; /* LIB/libnvrtc-builtins.so.12.9: builtins_value() == 42 */
};

/* The NVRTC wheel layout with an NVRTC-like library and, when with_builtins, its builtins beside it. */
struct standin_wheel standin_nvrtc_wheel(int with_builtins);

/* The same with other versions: libnvrtc.so.NVRTC asking for libnvrtc-builtins.so.BUILTINS (e.g.
   "77" and "77.0", which no real package ships). */
struct standin_wheel standin_nvrtc_wheel_versions(int with_builtins, const char *nvrtc, const char *builtins);

/* Builds a builtins stand-in returning value at path (soname: its basename unless soname given). */
void standin_builtins(const char *path, int value, const char *soname);

/* The environment entry that preloads the runtime (NVI_RUNTIME). */
const char *standin_preload(void);
