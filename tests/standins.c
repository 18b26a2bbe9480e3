#define _GNU_SOURCE
#include "standins.h"

#include "common.h"

#include <stdlib.h>
#include <string.h>

void standin_builtins(const char *path, int value, const char *soname)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *flags = test_format("-DVALUE=%d", value);
	test_build_library("value.c", path, soname ? soname : base, flags);
}

struct standin_wheel standin_nvrtc_wheel(int with_builtins)
{
	struct standin_wheel wheel;
	wheel.root = test_tmpdir();
	wheel.lib = test_format("%s/site-packages/nvidia/cuda_nvrtc/lib", wheel.root);
	test_mkdirs(wheel.lib);
	wheel.nvrtc = test_format("%s/libnvrtc.so.77", wheel.lib);
	wheel.builtins = test_format("%s/libnvrtc-builtins.so.77.1", wheel.lib);
	test_build_library("nvrtc_like.c", wheel.nvrtc, "libnvrtc.so.77", "");
	if (with_builtins)
		standin_builtins(wheel.builtins, 42, NULL);
	return wheel;
}

const char *standin_preload(void) { return test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME")); }

struct standin_wheel standin_nvrtc_wheel_with_driver(bool reaches_no_driver)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	test_build_library("value.c", test_format("%s/libcuda.so.1", wheel.lib), "libcuda.so.1", "");
	if (reaches_no_driver)
		test_build_library("nvrtc_like.c", wheel.nvrtc, "libnvrtc.so.77", "-Wl,-z,nodefaultlib");
	return wheel;
}

static int compare_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The "maps: " lines of output, sorted (the order of mappings is no part of the rule). */
static char *mapped(const char *output)
{
	char *lines[64];
	size_t count = 0, length = 1;
	for (const char *at = strstr(output, "maps: "); at && count < 64; at = strstr(at + 1, "\nmaps: ")) {
		at += at[0] == '\n';
		lines[count] = strndup(at, strcspn(at, "\n"));
		length += strlen(lines[count++]) + 1;
	}
	qsort(lines, count, sizeof(lines[0]), compare_text);
	char *joined = calloc(1, length);
	for (size_t i = 0; i < count; i++)
		strcat(strcat(joined, lines[i]), "\n");
	return joined;
}

/* The line "call nvrtc_like_driver: N" of output. */
static char *driver_result(const char *output)
{
	const char *at = strstr(output, "call nvrtc_like_driver: ");
	ck_assert_msg(at, "the driver was not asked for: %s", output);
	return strndup(at, strcspn(at, "\n"));
}

void standin_check_driver_is_left_to_the_loader(const char *policy)
{
	const char *env[] = { standin_preload(), policy ? test_format("NVINTERPOSE_POLICY=%s", policy) : NULL, NULL };
	/* Whatever the loader finds here: the same with the runtime, the stand-in never. */
	struct standin_wheel wheel = standin_nvrtc_wheel_with_driver(false);
	char *in_wheel = test_format("maps: %s/", realpath(wheel.lib, NULL));
	struct test_run plain = test_probe(NULL, test_format("call %s nvrtc_like_driver maps libcuda.so", wheel.nvrtc));
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile call %s nvrtc_like_driver maps libcuda.so",
							 wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "the origin is registered: %s", run.output);
	ck_assert_str_eq(driver_result(run.output), driver_result(plain.output));
	ck_assert_msg(!test_contains(run.output, in_wheel), "the wheel's stand-in was mapped: %s", run.output);
	ck_assert_str_eq(mapped(run.output), mapped(plain.output));
	/* The loader finds none: the runtime is asked, and supplies none either. */
	wheel = standin_nvrtc_wheel_with_driver(true);
	plain = test_probe_without_cache(NULL, test_format("call %s nvrtc_like_driver maps libcuda.so", wheel.nvrtc));
	ck_assert_msg(test_contains(plain.output, "call nvrtc_like_driver: 0") && !test_contains(plain.output, "maps: "),
		      "the loader finds no driver for the asker: %s", plain.output);
	run = test_probe_without_cache(env, test_format("call %s nvrtc_like_compile call %s nvrtc_like_driver maps libcuda.so",
							wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "the origin is registered: %s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_driver: 0") && !test_contains(run.output, "maps: "),
		      "no driver, the wheel's stand-in least of all: %s", run.output);
}
