/* The real CUDA toolkit: NVRTC from a wheel-like folder, its builtins beside it, the toolkit's own
   copy hidden from the loader (ld.so --inhibit-cache; the toolkit folder is only in ld.so.cache).
   Without the runtime the compile must fail, or the set-up proves nothing; with it (preloaded, or
   attached before or after NVRTC) it must pass with exactly one builtins mapped, the wheel's. Programs linked
   against the real cuSPARSE and cuSOLVERMg start under the audit front only. And the table is held
   against the library names the real binaries mention. */
#define _GNU_SOURCE
#include "common.h"
#include "libnames.h"
#include "standins.h"

#include <dirent.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };
static char *lib64;

struct nvrtc_wheel {
	char *lib, *nvrtc, *builtins;
};

/* NVRTC and its builtins in site-packages/nvidia/PACKAGE/lib (cuda_nvrtc: the CUDA 12 wheels'
   folder; cu13: the CUDA 13 wheels'). */
static struct nvrtc_wheel nvrtc_wheel_in(const char *package)
{
	struct nvrtc_wheel wheel;
	char *root = test_tmpdir();
	wheel.lib = test_format("%s/site-packages/nvidia/%s/lib", root, package);
	test_mkdirs(wheel.lib);
	wheel.nvrtc = test_format("%s/libnvrtc.so.13", wheel.lib);
	wheel.builtins = test_format("%s/libnvrtc-builtins.so.13.0", wheel.lib);
	test_copy_file(test_format("%s/libnvrtc.so.13", lib64), wheel.nvrtc);
	test_copy_file(test_format("%s/libnvrtc-builtins.so.13.0", lib64), wheel.builtins);
	return wheel;
}

static struct nvrtc_wheel nvrtc_wheel(void) { return nvrtc_wheel_in("cu13"); }

/* The probe through the launcher with options, the loader's cache off. */
static struct test_run launched_with(const char *options, const char *const *env, const char *args)
{
	char *command = test_format("exec '%s' %s -- '%s' --inhibit-cache '%s' %s", test_setting("NVI_RUN"), options, test_interpreter(),
				    test_setting("NVI_PROBE"), args);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	return test_run(argv, env, 300);
}

static struct test_run launched(const char *const *env, const char *args) { return launched_with("", env, args); }
static struct test_run launched_audit(const char *const *env, const char *args) { return launched_with("--audit", env, args); }

START_TEST(test_real_nvrtc_compile_fails_without_the_runtime)
{
	struct nvrtc_wheel wheel = nvrtc_wheel();
	struct test_run run = test_probe_without_cache(no_env, test_format("nvrtc %s", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "nvrtc compile: failed: nvrtc: error: failed to open libnvrtc-builtins.so.13.0."), "%s", run.output);
}
END_TEST

START_TEST(test_real_nvrtc_compiles_with_the_runtime_preloaded)
{
	struct nvrtc_wheel wheel = nvrtc_wheel();
	const char *env[] = { test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME")), NULL };
	struct test_run run = test_probe_without_cache(env, test_format("nvrtc %s maps builtins", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "nvrtc compile: ok"), "%s", run.output);
	ck_assert_msg(test_count(run.output, "maps: ") == 1, "exactly one builtins: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)), "%s", run.output);
}
END_TEST

/* The wheel's NVRTC where the loader's ld.so.cache holds a toolkit's builtins (this machine's, when
   it does): the loader's choice stands under fallback, and the runtime says it is a mixed origin
   (the inspector's rule), with a line of the report; under coherent the wheel's own builtins are
   taken and nothing is said. */
START_TEST(test_real_nvrtc_with_the_caches_builtins_is_a_mixed_origin_under_fallback)
{
	struct nvrtc_wheel wheel = nvrtc_wheel();
	struct test_run plain = test_probe(no_env, test_format("nvrtc %s maps builtins", wheel.nvrtc));
	if (!test_contains(plain.output, "nvrtc compile: ok")) {
		printf("skipped: this machine's ld.so.cache holds no libnvrtc-builtins.so.13.0\n");
		return;
	}
	const char *fallback[] = { test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME")), NULL };
	const char *argv[] = { "/bin/sh", "-c", test_format("NVINTERPOSE_REPORT=$$ exec '%s' nvrtc '%s' maps builtins", test_setting("NVI_PROBE"),
							    wheel.nvrtc), NULL };
	struct test_run run = test_run(argv, fallback, 300);
	ck_assert_msg(test_contains(run.output, "nvrtc compile: ok") && !test_contains(run.output, test_format("maps: %s\n", wheel.builtins)),
		      "the loader's choice stands: %s", run.output);
	ck_assert_msg(test_count(run.output, test_format("nvinterpose: warning: mixed origins: %s gets libnvrtc-builtins.so.13.0 from another installation: ",
							  wheel.nvrtc)) == 1 &&
		      test_contains(run.output, test_format("; its own installation holds %s (the coherent policy would take it)\n", wheel.builtins)),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, " 1 mixed origins\n") &&
		      test_contains(run.output, test_format("nvinterpose: report: mixed origin libnvrtc-builtins.so.13.0 for %s: from ", wheel.nvrtc)),
		      "%s", run.output);
	const char *coherent[] = { fallback[0], "NVINTERPOSE_POLICY=coherent", NULL };
	run = test_probe(coherent, test_format("nvrtc %s maps builtins", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)) && !test_contains(run.output, "mixed origin"),
		      "%s", run.output);
}
END_TEST

/* The real NVRTC loaded with RTLD_DEEPBIND binds its dlopen in its own scope first (libc's): its
   builtins are still found, preloaded. */
START_TEST(test_real_nvrtc_loaded_with_deepbind_compiles_with_the_runtime_preloaded)
{
	struct nvrtc_wheel wheel = nvrtc_wheel();
	char *args = test_format("open:now,deepbind %s nvrtc %s maps builtins", wheel.nvrtc, wheel.nvrtc);
	struct test_run plain = test_probe_without_cache(no_env, args);
	ck_assert_msg(test_contains(plain.output, "nvrtc compile: failed: nvrtc: error: failed to open libnvrtc-builtins.so.13.0."), "%s", plain.output);
	const char *env[] = { test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME")), NULL };
	struct test_run run = test_probe_without_cache(env, args);
	ck_assert_msg(test_contains(run.output, "nvrtc compile: ok"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)), "%s", run.output);
}
END_TEST

START_TEST(test_real_nvrtc_compiles_through_the_launcher)
{
	struct nvrtc_wheel wheel = nvrtc_wheel();
	struct test_run run = launched(no_env, test_format("nvrtc %s maps builtins", wheel.nvrtc));
	ck_assert_msg(run.status == 0 && test_contains(run.output, "nvrtc compile: ok"), "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)), "%s", run.output);
}
END_TEST

/* Through the launcher with --audit --report: one redirect, as without --audit, for NVRTC. */
START_TEST(test_real_nvrtc_through_the_launcher_with_audit_reports_its_redirect)
{
	struct nvrtc_wheel wheel = nvrtc_wheel();
	struct test_run run = launched_with("--audit --report", no_env, test_format("nvrtc %s", wheel.nvrtc));
	ck_assert_msg(run.status == 0 && test_contains(run.output, "nvrtc compile: ok"), "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, " registered, 1 redirects, ") &&
		      test_contains(run.output, test_format("nvinterpose: report: redirect libnvrtc-builtins.so.13.0 for %s: %s\n", wheel.nvrtc,
							    wheel.builtins)),
		      "%s", run.output);
}
END_TEST

START_TEST(test_real_nvrtc_compiles_with_the_runtime_attached_late)
{
	struct nvrtc_wheel wheel = nvrtc_wheel();
	struct test_run run = test_probe_without_cache(no_env, test_format("open %s late %s nvrtc %s maps builtins", wheel.nvrtc,
								    test_setting("NVI_RUNTIME"), wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "late: attached"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "nvrtc compile: ok"), "%s", run.output);
	ck_assert_msg(test_count(run.output, "maps: ") == 1, "exactly one builtins: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)), "%s", run.output);
}
END_TEST

START_TEST(test_real_nvrtc_compiles_with_the_runtime_attached_before_it_and_no_rescan)
{
	/* The runtime dlopen'ed first, NVRTC after it: NVRTC binds its dlopen to the hook through
	   libc's patched symbol. Without the patching (NVINTERPOSE_PATCH=0) the same run fails. */
	struct nvrtc_wheel wheel = nvrtc_wheel_in("cu13");
	char *args = test_format("late %s nvrtc %s maps builtins", test_setting("NVI_RUNTIME"), wheel.nvrtc);
	const char *off[] = { "NVINTERPOSE_PATCH=0", NULL };
	struct test_run unpatched = test_probe_without_cache(off, args);
	ck_assert_msg(test_contains(unpatched.output, "nvrtc compile: failed: nvrtc: error: failed to open libnvrtc-builtins.so.13.0."), "%s",
		      unpatched.output);
	struct test_run run = test_probe_without_cache(no_env, args);
	ck_assert_msg(test_contains(run.output, "late: attached"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "nvrtc compile: ok"), "%s", run.output);
	ck_assert_msg(test_count(run.output, "maps: ") == 1, "exactly one builtins: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)), "%s", run.output);
}
END_TEST

/* The compile in every way in under policy (NULL: the default), each against the plain run under
   plain_env: the same result line, never a signal. */
static void check_every_way_in_like_plain(const char *label, const char *const *plain_env, const char *extra, const char *policy,
					  const char *nvrtc)
{
	char *compile = test_format("nvrtc %s", nvrtc);
	const char *settings[3] = { NULL };
	size_t n = 0;
	if (extra)
		settings[n++] = extra;
	if (policy)
		settings[n++] = policy;
	struct standin_runs runs = { .label = test_format("%s, %s", label, policy ? policy : "fallback"), .plain_run = test_probe_without_cache,
				     .run = test_probe_without_cache, .plain_env = plain_env, .plain_args = compile, .args = compile,
				     .result = "nvrtc compile: " };
	standin_check_every_way_in(&runs, settings, nvrtc);
	runs.label = test_format("%s, the launcher", runs.label);
	runs.run = launched;
	runs.env = settings;
	standin_check_like_plain(&runs);
	if (test_glibc_at_least(2, 34)) { /* the audit front answers from 2.34 */
		runs.label = test_format("%s --audit", runs.label);
		runs.run = launched_audit;
		standin_check_like_plain(&runs);
	}
}

/* The real builtins cut to their first 3,000,000 bytes beside NVRTC (an interrupted pip install, a
   concurrent upgrade on a shared file system, a full disk). Without the runtime the compile fails
   cleanly; with it, in every way in and under both policies, the copy is skipped and the compile
   fails the same way, never a signal. With a good copy on LD_LIBRARY_PATH, which the loader takes
   without the runtime, the compile works in every way in (coherent would prefer the asker's own
   folder's copy, were it whole). */
START_TEST(test_real_nvrtc_with_cut_builtins_is_never_worse_than_without_the_runtime)
{
	struct nvrtc_wheel wheel = nvrtc_wheel();
	ck_assert_int_eq(truncate(wheel.builtins, 3000000), 0);
	struct test_run plain = test_probe_without_cache(no_env, test_format("nvrtc %s", wheel.nvrtc));
	ck_assert_msg(test_contains(plain.output, "nvrtc compile: failed: nvrtc: error: failed to open libnvrtc-builtins.so.13.0."), "%s",
		      plain.output);
	const char *policies[] = { NULL, "NVINTERPOSE_POLICY=coherent" };
	char *good = test_format("LD_LIBRARY_PATH=%s", lib64);
	const char *good_env[] = { good, NULL };
	for (size_t i = 0; i < 2; i++) {
		check_every_way_in_like_plain("cut builtins", no_env, NULL, policies[i], wheel.nvrtc);
		check_every_way_in_like_plain("cut builtins, a good copy on LD_LIBRARY_PATH", good_env, good, policies[i], wheel.nvrtc);
	}
}
END_TEST

/* The CUDA 12 wheel layout with the real binaries: libcusparse.so.12 (RUNPATH $ORIGIN, DT_NEEDED
   libnvJitLink.so.13) in nvidia/cusparse/lib, nvJitLink in its sibling nvidia/nvjitlink/lib. */
static char *cusparse_wheels(char **nvjitlink)
{
	char *root = test_tmpdir();
	char *cusparse = test_format("%s/site-packages/nvidia/cusparse/lib", root);
	char *jitlink = test_format("%s/site-packages/nvidia/nvjitlink/lib", root);
	test_mkdirs(cusparse);
	test_mkdirs(jitlink);
	test_copy_file(test_format("%s/libcusparse.so.12", lib64), test_format("%s/libcusparse.so.12", cusparse));
	*nvjitlink = test_format("%s/libnvJitLink.so.13", jitlink);
	test_copy_file(test_format("%s/libnvJitLink.so.13", lib64), *nvjitlink);
	return test_format("%s/libcusparse.so.12", cusparse);
}

START_TEST(test_real_cusparse_needs_the_sibling_wheels_nvjitlink)
{
	char *nvjitlink;
	char *cusparse = cusparse_wheels(&nvjitlink);
	struct test_run plain = test_probe_without_cache(no_env, test_format("open %s", cusparse));
	ck_assert_msg(test_contains(plain.output, "error: libnvJitLink.so.13: cannot open shared object file"), "%s", plain.output);
	const char *env[] = { test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME")), NULL };
	struct test_run run = test_probe_without_cache(env, test_format("open %s maps libnvJitLink", cusparse));
	ck_assert_msg(test_contains(run.output, test_format("open %s: %s\n", cusparse, cusparse)), "%s", run.output);
	ck_assert_msg(test_count(run.output, "maps: ") == 1, "one nvJitLink: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", nvjitlink)), "%s", run.output);
}
END_TEST

START_TEST(test_real_cusparse_by_path_loads_with_the_runtime_attached_before_it)
{
	char *nvjitlink;
	char *cusparse = cusparse_wheels(&nvjitlink);
	struct test_run run = test_probe_without_cache(no_env, test_format("late %s open %s maps libnvJitLink", test_setting("NVI_RUNTIME"), cusparse));
	ck_assert_msg(test_contains(run.output, test_format("open %s: %s\n", cusparse, cusparse)), "%s", run.output);
	ck_assert_msg(test_count(run.output, "maps: ") == 1, "one nvJitLink: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", nvjitlink)), "%s", run.output);
}
END_TEST

START_TEST(test_real_cusparse_with_a_system_nvjitlink_first_on_the_path)
{
	/* The field's most reported failure: an older nvJitLink (a stand-in with the same soname and
	   version node, without the 13.0 symbols) on LD_LIBRARY_PATH wins over the sibling wheel's.
	   Plain and fallback fail alike; coherent takes the wheel's. */
	char *nvjitlink;
	char *cusparse = cusparse_wheels(&nvjitlink);
	char *system = test_format("%s/system", test_tmpdir());
	test_mkdirs(system);
	char *map = test_format("%s/nvjitlink.map", system);
	test_write_file(map, "libnvJitLink.so.13 { global: builtins_value; local: *; };\n");
	test_build_library("value.c", test_format("%s/libnvJitLink.so.13", system), "libnvJitLink.so.13",
			   test_format("-Wl,--version-script,'%s'", map));
	char *path = test_format("LD_LIBRARY_PATH=%s", system), *preload = test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME"));
	const char *plain_env[] = { path, NULL };
	const char *fallback_env[] = { path, preload, NULL };
	const char *coherent_env[] = { path, preload, "NVINTERPOSE_POLICY=coherent", NULL };
	char *args = test_format("open %s maps libnvJitLink", cusparse);
	const char *failure = "undefined symbol: __nvJitLinkCreate_13_0, version libnvJitLink.so.13";
	struct test_run plain = test_probe(plain_env, args);
	ck_assert_msg(test_contains(plain.output, failure), "%s", plain.output);
	struct test_run fallback = test_probe(fallback_env, args);
	ck_assert_msg(test_contains(fallback.output, failure), "%s", fallback.output);
	struct test_run coherent = test_probe(coherent_env, args);
	ck_assert_msg(test_contains(coherent.output, test_format("open %s: %s\n", cusparse, cusparse)), "%s", coherent.output);
	ck_assert_msg(test_count(coherent.output, "maps: ") == 1 && test_contains(coherent.output, test_format("maps: %s\n", nvjitlink)),
		      "%s", coherent.output);
}
END_TEST

/* ---- the audit front with the real binaries ---------------------------------------------------- */

/* tests/fixtures/references_main.c as FOLDER/program, linked against library and taking the address
   of its function referenced, with the extra link flags. */
static char *linked_program(const char *folder, const char *library, const char *referenced, const char *flags)
{
	return test_build_program("references_main.c", folder, test_format("-DREFERENCED=%s '%s' %s", referenced, library, flags));
}

/* PROGRAM started by the loader with the cache off (the toolkit's folder is only in ld.so.cache),
   through the launcher with the given options, or plainly without. */
static struct test_run start_without_cache(const char *launcher_options, const char *program)
{
	char *command = launcher_options ? test_format("exec '%s' %s -- '%s' --inhibit-cache '%s'", test_setting("NVI_RUN"), launcher_options,
						       test_interpreter(), program)
					 : test_format("exec '%s' --inhibit-cache '%s'", test_interpreter(), program);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	return test_run(argv, no_env, 300);
}

static void check_starts_with_the_audit_front_only(const char *program, const char *missing)
{
	struct test_run plain = start_without_cache(NULL, program);
	ck_assert_msg(plain.status == 127 && test_contains(plain.output, test_format("%s: cannot open shared object file", missing)), "%d: %s",
		      plain.status, plain.output);
	struct test_run preloaded = start_without_cache("", program);
	ck_assert_msg(preloaded.status == 127, "no preload hook runs before main: %d: %s", preloaded.status, preloaded.output);
	struct test_run audited = start_without_cache("--audit", program);
	ck_assert_msg(audited.status == 0 && test_contains(audited.output, "started: 1"), "%d: %s", audited.status, audited.output);
}

/* A program linked against the CUDA 12 wheels' libcusparse.so.12 (RUNPATH $ORIGIN) whose
   nvJitLink lies in the sibling wheel folder. */
START_TEST(test_real_program_linked_against_split_cusparse_starts_with_launcher_audit)
{
	char *nvjitlink;
	char *cusparse = cusparse_wheels(&nvjitlink);
	char *folder = test_format("%.*s", (int)(strrchr(cusparse, '/') - cusparse), cusparse);
	char *jitlink_folder = test_format("%.*s", (int)(strrchr(nvjitlink, '/') - nvjitlink), nvjitlink);
	char *program = linked_program(test_tmpdir(), cusparse, "cusparseGetVersion",
				       test_format("-Wl,-rpath-link,'%s' -Wl,--enable-new-dtags,-rpath,'%s'", jitlink_folder, folder));
	check_starts_with_the_audit_front_only(program, "libnvJitLink.so.13");
}
END_TEST

/* A program linked against the real cuSPARSE whose sibling wheel's nvJitLink is cut to its first
   3,000,000 bytes: without the runtime it cannot start (exit 127); under the audit front, with
   either policy, the same, never a signal. */
START_TEST(test_real_program_with_a_cut_sibling_nvjitlink_fails_to_start_as_without_the_runtime)
{
	char *root = test_tmpdir();
	char *folder = test_format("%s/site-packages/nvidia/cusparse/lib", root);
	char *jitlink_folder = test_format("%s/site-packages/nvidia/nvjitlink/lib", root);
	char *cusparse = test_format("%s/libcusparse.so.12", test_mkdirs(folder));
	ck_assert_int_eq(symlink(test_format("%s/libcusparse.so.12", lib64), cusparse), 0);
	char *nvjitlink = test_format("%s/libnvJitLink.so.13", test_mkdirs(jitlink_folder));
	test_copy_file(test_format("%s/libnvJitLink.so.13", lib64), nvjitlink);
	char *program = linked_program(root, cusparse, "cusparseGetVersion",
				       test_format("-Wl,-rpath-link,'%s' -Wl,--enable-new-dtags,-rpath,'%s'", jitlink_folder, folder));
	ck_assert_int_eq(truncate(nvjitlink, 3000000), 0);
	struct test_run plain = start_without_cache(NULL, program);
	ck_assert_msg(plain.status == 127, "%d: %s", plain.status, plain.output);
	const char *options[] = { "--audit", "--audit --policy=coherent" };
	for (size_t i = 0; i < 2; i++) {
		struct test_run run = start_without_cache(options[i], program);
		ck_assert_msg(run.status == 127, "%s: the plain run's exit 127, not %d: %s", options[i], run.status, run.output);
	}
}
END_TEST

/* A program linked against the CUDA 13 wheel's libcusolverMg.so.12, which has no RUNPATH: its
   nvJitLink, cuBLAS and cuBLASLt beside it in nvidia/cu13/lib are not found for it, though the
   program's RUNPATH names that folder (links to the toolkit's files: cuBLASLt is 500 MB). */
START_TEST(test_real_program_linked_against_cusolvermg_starts_with_launcher_audit)
{
	char *lib = test_format("%s/site-packages/nvidia/cu13/lib", test_tmpdir());
	test_mkdirs(lib);
	const char *files[] = { "libcusolverMg.so.12", "libnvJitLink.so.13", "libcublas.so.13", "libcublasLt.so.13" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ck_assert_int_eq(symlink(test_format("%s/%s", lib64, files[i]), test_format("%s/%s", lib, files[i])), 0);
	char *program = linked_program(test_tmpdir(), test_format("%s/libcusolverMg.so.12", lib), "cusolverMgCreate",
				       test_format("-Wl,-rpath-link,'%s' -Wl,--enable-new-dtags,-rpath,'%s'", lib, lib));
	check_starts_with_the_audit_front_only(program, "libnvJitLink.so.13");
}
END_TEST

/* Names of NVIDIA libraries a binary mentions: strings that look like sonames of NVIDIA's own
   libraries (libcu*, libnv*, libnpp*, libcudnn*, libnccl*). */
static bool looks_nvidia(const char *name)
{
	static const char *const prefixes[] = { "libcu", "libnv", "libnpp", "libnccl", "libcheckpoint", "libpcsamplingutil", "libmathdx" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* Driver-side libraries the toolkit binaries mention that the runtime leaves alone by design: they
   come with the display driver (graphics, OpenCL, optix), never from a wheel or the toolkit. */
static bool left_alone_by_design(const char *name)
{
	static const char *const names[] = { "libnvidia-opencl", "libnvidia-vksc-core", "libnvoptix", "libnvidia-ptxjitcompiler",
					     "libnvidia-nvvm", "libnvidia-gpucomp", "libnvcuvid", "libnvidia-encode", "libnvidia-fbc",
					     "libnvidia-glcore", "libnvidia-tls", "libnvidia-eglcore", "libnvidia-glsi", "libnvidia-rtcore",
					     "libnccl-net" /* NCCL's network plugin, from the network's vendor */ };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strncmp(name, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

START_TEST(test_table_covers_the_names_the_real_binaries_mention)
{
	char *command = test_format("for f in '%s'/lib*.so.*; do strings -n 8 \"$f\"; done | grep -oE '^lib[A-Za-z0-9_+-]+(\\.alt)?\\.so(\\.[0-9]+)*$' | sort -u", lib64);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, no_env, 300);
	ck_assert_int_eq(run.status, 0);
	size_t checked = 0;
	char *missing = test_format("%s", "");
	for (char *name = strtok(run.output, "\n"); name; name = strtok(NULL, "\n")) {
		if (!looks_nvidia(name) || left_alone_by_design(name))
			continue;
		checked++;
		if (libnames_match_linux(name, NULL) < 0)
			missing = test_format("%s %s", missing, name);
	}
	ck_assert_msg(checked >= 10, "the strings of %s name only %zu NVIDIA libraries", lib64, checked);
	ck_assert_msg(missing[0] == '\0', "names the table does not recognize:%s", missing);
}
END_TEST

START_TEST(test_table_recognizes_every_toolkit_library)
{
	DIR *dir = opendir(lib64);
	ck_assert_ptr_nonnull(dir);
	struct dirent *entry;
	char *missing = test_format("%s", "");
	size_t checked = 0;
	while ((entry = readdir(dir))) {
		if (strncmp(entry->d_name, "lib", 3) != 0 || !strstr(entry->d_name, ".so"))
			continue;
		checked++;
		if (libnames_match_linux(entry->d_name, NULL) < 0)
			missing = test_format("%s %s", missing, entry->d_name);
	}
	closedir(dir);
	ck_assert_msg(checked >= 20, "only %zu libraries in %s", checked, lib64);
	ck_assert_msg(missing[0] == '\0', "toolkit libraries the table does not recognize:%s", missing);
}
END_TEST

int main(void)
{
	const char *home = getenv("NVI_CUDA_HOME") ? getenv("NVI_CUDA_HOME") : "/usr/local/cuda";
	char *nvrtc = NULL, *builtins = NULL;
	if (asprintf(&lib64, "%s/lib64", home) < 0 || asprintf(&nvrtc, "%s/libnvrtc.so.13", lib64) < 0 ||
	    asprintf(&builtins, "%s/libnvrtc-builtins.so.13.0", lib64) < 0)
		return EXIT_FAILURE;
	if (access(nvrtc, R_OK) != 0 || access(builtins, R_OK) != 0) {
		printf("SKIP: no CUDA 13 toolkit at %s (libnvrtc.so.13 and its builtins)\n", lib64);
		return TEST_SKIP;
	}
	Suite *suite = suite_create("cuda");
	TCase *tc = tcase_create("cuda");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_real_nvrtc_compile_fails_without_the_runtime);
	tcase_add_test(tc, test_real_nvrtc_compiles_with_the_runtime_preloaded);
	tcase_add_test(tc, test_real_nvrtc_with_the_caches_builtins_is_a_mixed_origin_under_fallback);
	tcase_add_test(tc, test_real_nvrtc_loaded_with_deepbind_compiles_with_the_runtime_preloaded);
	tcase_add_test(tc, test_real_nvrtc_compiles_through_the_launcher);
	if (test_glibc_at_least(2, 34)) /* the audit front answers from 2.34 */
		tcase_add_test(tc, test_real_nvrtc_through_the_launcher_with_audit_reports_its_redirect);
	tcase_add_test(tc, test_real_nvrtc_compiles_with_the_runtime_attached_late);
	tcase_add_test(tc, test_real_nvrtc_compiles_with_the_runtime_attached_before_it_and_no_rescan);
	tcase_add_test(tc, test_real_nvrtc_with_cut_builtins_is_never_worse_than_without_the_runtime);
	tcase_add_test(tc, test_real_cusparse_needs_the_sibling_wheels_nvjitlink);
	tcase_add_test(tc, test_real_cusparse_by_path_loads_with_the_runtime_attached_before_it);
	tcase_add_test(tc, test_real_cusparse_with_a_system_nvjitlink_first_on_the_path);
	if (test_glibc_at_least(2, 34)) { /* the audit front answers from 2.34 (src/linux/start.h) */
		tcase_add_test(tc, test_real_program_linked_against_split_cusparse_starts_with_launcher_audit);
		tcase_add_test(tc, test_real_program_linked_against_cusolvermg_starts_with_launcher_audit);
		tcase_add_test(tc, test_real_program_with_a_cut_sibling_nvjitlink_fails_to_start_as_without_the_runtime);
	} else {
		printf("skipped: the audit front with the real binaries (glibc %s; it answers from 2.34)\n", gnu_get_libc_version());
	}
	tcase_add_test(tc, test_table_covers_the_names_the_real_binaries_mention);
	tcase_add_test(tc, test_table_recognizes_every_toolkit_library);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
