/* nvinterpose-inspect --scan. Every copy of every NVIDIA library this environment holds (the
   site-packages of a python, CONDA_PREFIX, CUDA_HOME and CUDA_PATH, LD_LIBRARY_PATH, ld.so.cache),
   grouped by library with their versions and installations. Then the mix each would load. Each
   copy is resolved as if loaded by path here (its DT_NEEDED and run-time dependents), with a hint
   for each dependency it would take from another installation and each one it would not find. */
#pragma once

#include "resolve.h"

#include <stdbool.h>
#include <stdio.h>

struct scan_request {
	struct resolver *resolver; /* no what-if: the environment as it is */
	const char *python;        /* whose site-packages; NULL: python3 (else python) on PATH */
	unsigned python_timeout_s; /* how long the python may take, start to exit */
	bool json;
	bool color;
	const char *cache_problem; /* why ld.so.cache was not read, or NULL */
};

/* Scans and writes the report to out. The exit status: 0 when nothing is wrong, 1 when a mix or a
   missing dependency was found, 3 when a tree was cut at its bound. */
int scan_run(const struct scan_request *request, FILE *out);
