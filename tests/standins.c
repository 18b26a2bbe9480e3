#include "standins.h"

#include "common.h"

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
