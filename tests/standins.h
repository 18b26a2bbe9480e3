/* Stand-in NVIDIA trees built at test time, shared by the preload suites. They use a major no real
   package ships (libnvrtc.so.77, libnvrtc-builtins.so.77.1): a stand-in named like an installed
   CUDA (a toolkit in ld.so.cache, Debian's 11.8 packages) would be answered by the real file. */
#pragma once

#include <stdbool.h>

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

/* The NVRTC wheel with builtins and a libcuda.so.1 stand-in beside NVRTC (a driver in the folder
   the runtime registers). With reaches_no_driver, NVRTC is linked with -z nodefaultlib: run
   through test_probe_without_cache, its own search for the driver (no LD_LIBRARY_PATH, no RUNPATH,
   no default folder, no cache) ends without one on any machine, so the runtime is asked. */
struct standin_wheel standin_nvrtc_wheel_with_driver(bool reaches_no_driver);

/* The driver rule under policy (NULL: the default), held on any machine, checked by path: the
   wheel's libcuda.so.1 stand-in is never mapped, and the driver an NVRTC-like library ends with
   is the one the loader finds without the runtime (this machine's, or none). */
void standin_check_driver_is_left_to_the_loader(const char *policy);
