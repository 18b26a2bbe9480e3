/* Stand-in NVIDIA trees built at test time, shared by the preload suites. They use a major no real
   package ships (libnvrtc.so.77, libnvrtc-builtins.so.77.1): a stand-in named like an installed
   CUDA (a toolkit in ld.so.cache, Debian's 11.8 packages) would be answered by the real file. */
#pragma once

#include "common.h"

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

/* How a copy is cut short, as an interrupted pip install, a concurrent upgrade or a full disk
   leaves one: STANDIN_CUT_DYNAMIC where its dynamic section starts (no reader reads it); STANDIN_CUT_DATA inside the initialized data of its last load segment, after its
   dynamic section (every header and string still reads; the loader maps past the end). A library
   cut with STANDIN_CUT_DATA is built with STANDIN_PADDING among its flags. */
enum standin_cut { STANDIN_CUT_DYNAMIC, STANDIN_CUT_DATA };
#define STANDIN_CUTS 2
#define STANDIN_PADDING "-DPADDING=65536"
void standin_cut_library(const char *path, enum standin_cut cut);
/* A builtins stand-in (value 42) at path, cut short. */
void standin_cut_builtins(const char *path, enum standin_cut cut);
const char *standin_cut_name(enum standin_cut cut);

/* Two runs of the probe (or of plain_run and run, where set): with plain_args under plain_env (no
   runtime), then with args under env. The second ends without a signal, and its line that starts
   with result is the plain run's. label names the case in a failure. */
struct standin_runs {
	const char *label;
	struct test_run (*plain_run)(const char *const *env, const char *args);
	struct test_run (*run)(const char *const *env, const char *args);
	const char *const *plain_env;
	const char *plain_args;
	const char *const *env;
	const char *args;
	const char *result;
};
void standin_check_like_plain(const struct standin_runs *runs);

/* The same check in every way in a probe run takes, for runs->args that use library (an NVRTC):
   preloaded, attached before library is loaded and after it, and (from glibc 2.34, where the
   audit front answers) audited, each with settings (NULL-terminated, at most four) added to the
   environment; runs->env is not read. */
void standin_check_every_way_in(const struct standin_runs *runs, const char *const *settings, const char *library);

/* A folder for LOCPATH holding en_US.UTF-8, compiled by localedef at test time: a locale whose
   collation is not byte order ("alpha" sorts before "Zeta"). NULL, having said why, where the
   machine has no localedef or no locale sources. */
char *standin_collating_locales(void);

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
