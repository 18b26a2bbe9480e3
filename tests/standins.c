#include "standins.h"

#include "common.h"

#include <string.h>

void standin_builtins(const char *path, int value, const char *soname)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *flags = test_format("-DVALUE=%d", value);
	test_build_library("value.c", path, soname ? soname : base, flags);
}

struct standin_wheel standin_nvrtc_wheel_versions(int with_builtins, const char *nvrtc, const char *builtins)
{
	struct standin_wheel wheel;
	wheel.root = test_tmpdir();
	wheel.lib = test_format("%s/site-packages/nvidia/cuda_nvrtc/lib", wheel.root);
	test_mkdirs(wheel.lib);
	wheel.nvrtc = test_format("%s/libnvrtc.so.%s", wheel.lib, nvrtc);
	wheel.builtins = test_format("%s/libnvrtc-builtins.so.%s", wheel.lib, builtins);
	test_build_library("nvrtc_like.c", wheel.nvrtc, strrchr(wheel.nvrtc, '/') + 1,
			   test_format("-DBUILTINS='\"libnvrtc-builtins.so.%s\"'", builtins));
	if (with_builtins)
		standin_builtins(wheel.builtins, 42, NULL);
	return wheel;
}

struct standin_wheel standin_nvrtc_wheel(int with_builtins) { return standin_nvrtc_wheel_versions(with_builtins, "12", "12.9"); }

const char *standin_preload(void) { return test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME")); }
