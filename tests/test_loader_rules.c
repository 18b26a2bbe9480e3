/* The loader's own rules, kept under the runtime: each test runs the same thing without and with
   the runtime and holds both to what glibc documents. */
#define _GNU_SOURCE
#include "common.h"
#include "standins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

/* output without the runtime's own lines ("nvinterpose: ..."), which it adds where a user must hear
   of something (a required dependent nobody has, a mixed origin); those lines into *said. */
static char *program_lines(const char *output, char **said)
{
	char *kept = test_format("%s", ""), *runtime = test_format("%s", "");
	for (const char *line = output, *end; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		if (strncmp(line, "nvinterpose: ", 13) == 0)
			runtime = test_format("%s%.*s", runtime, (int)(end - line), line);
		else
			kept = test_format("%s%.*s", kept, (int)(end - line), line);
	}
	*said = runtime;
	return kept;
}

/* Runs the probe without and with the runtime: the program's output and status are the same, and
   contain expected (when given); returns what the runtime said besides (its own lines). */
static char *same_with_and_without(const char *const *extra_env, const char *args, const char *expected)
{
	const char *env[8] = { 0 };
	size_t n = 0;
	for (; extra_env && extra_env[n] && n < 6; n++)
		env[n] = extra_env[n];
	struct test_run plain = test_probe(env, args);
	env[n] = standin_preload();
	struct test_run run = test_probe(env, args);
	char *said;
	ck_assert_msg(strcmp(plain.output, program_lines(run.output, &said)) == 0, "without:\n%s\nwith:\n%s", plain.output, run.output);
	ck_assert_msg(plain.status == run.status, "exit status %d without, %d with", plain.status, run.status);
	if (expected)
		ck_assert_msg(test_contains(run.output, expected), "expected '%s' in:\n%s", expected, run.output);
	return said;
}

/* The same, for a run the runtime has nothing to say about: it says nothing. */
static void same_and_quiet(const char *const *extra_env, const char *args, const char *expected)
{
	char *said = same_with_and_without(extra_env, args, expected);
	ck_assert_msg(said[0] == '\0', "the runtime said:\n%s", said);
}

/* A caller whose search path (dtags: RUNPATH with --enable-new-dtags, DT_RPATH without) is
   $ORIGIN/sub asks for an NVIDIA name that lies in sub/ (value) and in a registered origin (42): the
   caller's copy wins, as without the runtime. */
static void check_caller_search_path_is_kept(const char *dtags, int value)
{
	char *root = test_tmpdir();
	test_mkdirs(test_format("%s/sub", root));
	standin_builtins(test_format("%s/sub/libnvrtc-builtins.so.77.1", root), value, NULL);
	char *host = test_format("%s/libhost.so", root);
	test_build_library("host.c", host, "libhost.so", test_format("-Wl,%s,-rpath,'$ORIGIN/sub'", dtags));
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	same_and_quiet(NULL, test_format("open %s call %s host_load_plugin", wheel.nvrtc, host),
		       test_format("call host_load_plugin: %d", value));
}

START_TEST(test_runpath_of_caller_is_kept) { check_caller_search_path_is_kept("--enable-new-dtags", 5); }
END_TEST

START_TEST(test_rpath_of_caller_is_kept) { check_caller_search_path_is_kept("--disable-new-dtags", 6); }
END_TEST

START_TEST(test_origin_of_library_loaded_through_symlink_is_the_links_folder)
{
	/* libcudnn.so.77 in real/ is reached through link/libcudnn.so.77; its RUNPATH $ORIGIN means
	   link/, where alone the sub-library is. */
	char *root = test_tmpdir();
	char *real = test_format("%s/real", root), *link = test_format("%s/link", root);
	test_mkdirs(real);
	test_mkdirs(link);
	test_build_library("cudnn_like.c", test_format("%s/libcudnn.so.77", real), "libcudnn.so.77", "-Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
	test_build_library("value.c", test_format("%s/libcudnn_ops.so.77", link), "libcudnn_ops.so.77", "-DVALUE_SYMBOL=ops_value -DVALUE=3");
	ck_assert_int_eq(symlink(test_format("%s/libcudnn.so.77", real), test_format("%s/libcudnn.so.77", link)), 0);
	same_and_quiet(NULL, test_format("call %s/libcudnn.so.77 cudnn_like_load", link), "call cudnn_like_load: 3");
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open %s/libcudnn.so.77 origin cudnn", link));
	ck_assert_msg(test_contains(run.output, test_format("origin cudnn: %s\n", link)), "%s", run.output);
}
END_TEST

START_TEST(test_executable_rpath_applies_to_a_needed_librarys_bare_name_load)
{
	/* An executable with DT_RPATH plugins/ needs libhost.so (no RPATH, no RUNPATH), which dlopens
	   an NVIDIA-named plugin by bare name: the executable's RPATH finds it, with or without the
	   runtime, even though a registered origin holds another copy. */
	char *root = test_tmpdir();
	char *plugins = test_format("%s/plugins", root);
	test_mkdirs(plugins);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", plugins), 11, NULL);
	test_build_library("host.c", test_format("%s/libhost.so", plugins), "libhost.so", "");
	char *program = test_format("%s/rpath-main", root);
	char *command = test_format("'%s' -o '%s' '%s/rpath_main.c' -L'%s' -lhost -Wl,--disable-new-dtags,-rpath,'%s'",
				    test_setting("NVI_CC"), program, test_setting("NVI_FIXTURES"), plugins, plugins);
	const char *build[] = { "/bin/sh", "-c", command, NULL };
	struct test_run built = test_run(build, no_env, 120);
	ck_assert_msg(built.status == 0, "%s", built.output);
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	(void)wheel;
	const char *argv[] = { program, NULL };
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_PATH=%s", wheel.lib), NULL };
	struct test_run plain = test_run(argv, no_env, 60);
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(test_contains(plain.output, "plugin: 11"), "%s", plain.output);
	ck_assert_msg(test_contains(run.output, "plugin: 11"), "%s", run.output);
}
END_TEST

START_TEST(test_cache_question_never_searches_the_programs_rpath_for_a_caller_with_runpath)
{
	/* The same layout, but libhost.so has a RUNPATH (of an empty folder): a caller with a RUNPATH
	   never gets the program's RPATH, so the loader finds no builtins for it. The runtime asks the
	   loader by name for what only ld.so.cache could hold, from its own frame: that must not see
	   the program's RPATH either, and the copy NVINTERPOSE_PATH names is loaded, not plugins/'. */
	char *root = test_tmpdir();
	char *plugins = test_format("%s/plugins", root);
	const char *empty = test_mkdirs(test_format("%s/empty", root));
	test_mkdirs(plugins);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", plugins), 11, NULL);
	test_build_library("host.c", test_format("%s/libhost.so", plugins), "libhost.so",
			   test_format("-Wl,--enable-new-dtags,-rpath,'%s'", empty));
	char *program = test_format("%s/rpath-main", root);
	char *command = test_format("'%s' -o '%s' '%s/rpath_main.c' -L'%s' -lhost -Wl,--disable-new-dtags,-rpath,'%s'",
				    test_setting("NVI_CC"), program, test_setting("NVI_FIXTURES"), plugins, plugins);
	const char *build[] = { "/bin/sh", "-c", command, NULL };
	struct test_run built = test_run(build, no_env, 120);
	ck_assert_msg(built.status == 0, "%s", built.output);
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *argv[] = { program, NULL };
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_PATH=%s", wheel.lib), NULL };
	struct test_run plain = test_run(argv, no_env, 60);
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(test_contains(plain.output, "plugin: -1"), "%s", plain.output);
	ck_assert_msg(test_contains(run.output, "plugin: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_bare_name_of_a_library_without_soname_follows_the_callers_rpath)
{
	/* Two copies of an NVIDIA-named library without DT_SONAME: one loaded by path from x/ (and on
	   LD_LIBRARY_PATH), the other in the caller's DT_RPATH folder y/. The loader does not match the
	   bare name against the loaded copy (it has no soname): the caller's RPATH gives y's copy. */
	char *root = test_tmpdir();
	char *x = test_format("%s/x", root), *y = test_format("%s/y", root);
	test_mkdirs(x);
	test_mkdirs(y);
	test_build_library("value.c", test_format("%s/libcudart.so.77", x), "", "-DVALUE=1");
	test_build_library("value.c", test_format("%s/libcudart.so.77", y), "", "-DVALUE=2");
	char *host = test_format("%s/libhost.so", root);
	test_build_library("host.c", host, "libhost.so", test_format("-DPLUGIN='\"libcudart.so.77\"' -Wl,--disable-new-dtags,-rpath,'%s'", y));
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s", x), NULL };
	same_and_quiet(env, test_format("open %s/libcudart.so.77 open %s/libcudart.so.77 call %s host_load_plugin", x, x, host),
		       "call host_load_plugin: 2");
}
END_TEST

START_TEST(test_caller_with_an_empty_search_list_gets_the_runtimes_copy)
{
	/* A caller with DF_1_NODEFLIB and neither RPATH nor RUNPATH, in a program without them and no
	   LD_LIBRARY_PATH: the loader lists it an empty search (dlinfo's size for it is smaller than
	   Dl_serinfo itself). The loader finds no builtins; the runtime reads that list without harm
	   and supplies the copy NVINTERPOSE_PATH names. */
	char *root = test_tmpdir();
	char *host = test_format("%s/libhost.so", root);
	test_build_library("host.c", host, "libhost.so", "-Wl,-z,nodefaultlib");
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *plain_env[] = { "LD_LIBRARY_PATH=", NULL };
	struct test_run plain = test_probe(plain_env, test_format("call %s host_load_plugin", host));
	ck_assert_msg(test_contains(plain.output, "call host_load_plugin: -1"), "%s", plain.output);
	/* glibc's malloc checks make a write past the buffer fail at once. */
	const char *env[] = { "LD_LIBRARY_PATH=", test_format("LD_PRELOAD=%s:libc_malloc_debug.so.0", test_setting("NVI_RUNTIME")),
			      "GLIBC_TUNABLES=glibc.malloc.check=3", test_format("NVINTERPOSE_PATH=%s", wheel.lib), NULL };
	struct test_run run = test_probe(env, test_format("call %s host_load_plugin", host));
	ck_assert_msg(run.status == 0 && test_contains(run.output, "call host_load_plugin: 42"), "status %d: %s", run.status, run.output);
}
END_TEST

START_TEST(test_ld_library_path_order_is_kept)
{
	char *root = test_tmpdir();
	char *first = test_format("%s/first", root), *second = test_format("%s/second", root);
	test_mkdirs(first);
	test_mkdirs(second);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", first), 1, NULL);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", second), 2, NULL);
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s:%s", first, second), NULL };
	char *said = same_with_and_without(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc), "call nvrtc_like_compile: 1");
	/* The loader's choice stands; that it comes from another installation than NVRTC's, which holds
	   builtins of its own, is said. */
	ck_assert_msg(test_count(said, "nvinterpose: ") == 1 &&
			      test_contains(said, test_format("nvinterpose: warning: mixed origins: %s gets libnvrtc-builtins.so.77.1 from another installation: %s/libnvrtc-builtins.so.77.1; its own installation holds %s",
							      wheel.nvrtc, first, wheel.builtins)),
		      "%s", said);
}
END_TEST

START_TEST(test_already_loaded_soname_returns_the_same_handle)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	same_and_quiet(NULL, test_format("same %s libnvrtc-builtins.so.77.1 same libnvrtc-builtins.so.77.1 libnvrtc-builtins.so.77.1", wheel.builtins),
		       "same libnvrtc-builtins.so.77.1 libnvrtc-builtins.so.77.1: yes");
}
END_TEST

START_TEST(test_pass_through_names_behave_as_without_the_runtime)
{
	/* The empty name, names with '/', '$' tokens, RTLD_NOLOAD, RTLD_DEEPBIND and missing names:
	   the same answer and the same dlerror text, and errno untouched where the loader leaves it. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	same_and_quiet(NULL,
		       test_format("open - open ./libnvrtc.so.77 open /nonexistent/libnvrtc.so.77 open '$ORIGIN/libnvrtc.so.77' "
				   "open:noload libnvrtc.so.77 open:deepbind %s open libnvrtc-builtins.so.99.9 open libcublas.so.99 "
				   "open / open libz.so.1 errno libz.so.1 errno libm.so.6 open:noload libnvrtc-builtins.so.77.1",
				   wheel.builtins),
		       "open libnvrtc-builtins.so.99.9: error: libnvrtc-builtins.so.99.9: cannot open shared object file");
}
END_TEST

START_TEST(test_missing_dependent_keeps_the_loaders_message)
{
	/* NVRTC registered, its builtins nowhere: the loader's own message for the original name, and
	   the runtime's one warning, by default, that names the places tried (test_report.c holds its
	   words). */
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *said = same_with_and_without(NULL, test_format("call %s nvrtc_like_compile", wheel.nvrtc),
					   "failed to open libnvrtc-builtins.so.77.1: libnvrtc-builtins.so.77.1: cannot open shared object file: No such file or directory");
	ck_assert_msg(test_count(said, "nvinterpose: ") == 1 && test_contains(said, "nvinterpose: warning: libnvrtc-builtins.so.77.1 wanted by "),
		      "%s", said);
}
END_TEST

START_TEST(test_both_glibc_symbol_versions_reach_the_hook)
{
	/* Binaries built before glibc 2.34 call dlopen@GLIBC_2.2.5 from libdl.so.2; newer ones the
	   default dlopen@GLIBC_2.34. An NVRTC-like library linked against a libdl.so.2 stub that
	   defines the old version (as old glibc did) must reach the hook as well as one linked now:
	   only the hook fixes their bare-name load. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *sdk = test_format("%s/old-sdk", wheel.root);
	test_mkdirs(sdk);
	/* The old default version is the machine's first glibc version (GLIBC_2.2.5 on x86-64,
	   GLIBC_2.17 on aarch64): the build names it. */
	const char *base = test_setting("NVI_GLIBC_BASE");
	char *map = test_format("%s/libdl.map", sdk);
	test_write_file(map, test_format("%s { global: dlopen; local: *; };\n", base));
	test_build_library("old_libdl.c", test_format("%s/libdl.so", sdk), "libdl.so.2", test_format("-Wl,--version-script,%s", map));
	struct standin_wheel old_wheel = standin_nvrtc_wheel(1);
	char *old = old_wheel.nvrtc;
	test_build_library("nvrtc_like.c", old, "libnvrtc.so.77", test_format("-L%s -Wl,--no-as-needed", sdk));
	const char *argv[] = { "/bin/sh", "-c", test_format("objdump -T '%s' | grep -w dlopen | tr -d '()'", old), NULL };
	struct test_run bound = test_run(argv, no_env, 60);
	ck_assert_msg(test_contains(bound.output, test_format(" %s dlopen", base)), "bound to the old version: %s", bound.output);
	const char *env[] = { standin_preload(), NULL };
	struct test_run plain = test_probe(no_env, test_format("call %s nvrtc_like_compile", old));
	ck_assert_msg(test_contains(plain.output, "call nvrtc_like_compile: -1"), "%s", plain.output);
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", old));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
	run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_exports_are_exactly_the_hooks_and_the_api)
{
	const char *argv[] = { "/bin/sh", "-c", test_format("nm -D --defined-only '%s' | awk '{print $3}' | sort | tr '\\n' ' '", test_setting("NVI_RUNTIME")), NULL };
	struct test_run run = test_run(argv, no_env, 60);
	ck_assert_str_eq(run.output, "dlmopen dlopen la_objopen la_objsearch la_version nvi_family_origin nvi_list_families nvi_list_origins nvi_list_patches nvi_register_folder nvi_report nvi_rescan nvi_version ");
	/* Unversioned: a named version node would make dlopen@@NODE and stop matching callers. */
	const char *versions[] = { "/bin/sh", "-c", test_format("objdump -T '%s' | grep -E ' (dlopen|dlmopen)$'", test_setting("NVI_RUNTIME")), NULL };
	run = test_run(versions, no_env, 60);
	ck_assert_int_eq(test_count(run.output, "Base"), 2);
}
END_TEST

START_TEST(test_no_symbol_needs_a_glibc_above_2_17)
{
	/* The documents promise glibc 2.17 or newer on x86-64 and aarch64: under LD_PRELOAD a version the
	   running glibc lacks is the loader's fatal error, before any of the runtime's code runs. */
	const char *argv[] = { "/bin/sh", "-c", test_format("objdump -T '%s' | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1", test_setting("NVI_RUNTIME")), NULL };
	struct test_run run = test_run(argv, no_env, 60);
	ck_assert_msg(test_contains(run.output, "GLIBC_2.") && strverscmp(run.output, "GLIBC_2.17\n") <= 0, "highest: %s", run.output);
	/* The loader functions at the machine's first version, which every glibc has (libdl's before
	   2.34, libc's since), each a weak reference: before 2.34 the runtime loads where no libdl.so.2
	   is loaded, and finds them once one is. No pthread_ function at all: before 2.32 some lived in
	   libpthread.so.0 alone, and an unresolved call is the loader's fatal error. */
	const char *dl[] = { "/bin/sh", "-c", test_format("objdump -T '%s' | grep -E ' (dlsym|dlerror|dlclose|dlinfo|dladdr1|pthread_[a-z_]*)$' | awk '{print $2, $NF}' | sort | tr '\\n' ' '",
							   test_setting("NVI_RUNTIME")), NULL };
	run = test_run(dl, no_env, 60);
	ck_assert_str_eq(run.output, "w dladdr1 w dlclose w dlerror w dlinfo w dlsym ");
	const char *versions[] = { "/bin/sh", "-c", test_format("objdump -T '%s' | grep -wE 'dlsym|dlerror|dlclose' | grep -o 'GLIBC_[0-9.]*' | sort -u",
								 test_setting("NVI_RUNTIME")), NULL };
	run = test_run(versions, no_env, 60);
	ck_assert_str_eq(run.output, test_format("%s\n", test_setting("NVI_GLIBC_BASE")));
}
END_TEST

START_TEST(test_runtime_runpath_is_the_loader_probe_and_it_needs_libc_and_the_loader)
{
	/* The RUNPATH is a folder that cannot exist, which the loader lists expanded ($PLATFORM, $LIB)
	   in the runtime's own search list, then /proc, which exists (so the loader keeps the list
	   after searching it) and holds no library; as a RUNPATH it keeps the program's RPATH out of
	   the runtime's own searches. No libdl.so.2 or libpthread.so.0: each is one more object every
	   process maps and every dlopen's name match walks, and their functions are libc's from glibc
	   2.34 (before, libdl's are found once it is loaded). Nothing else.
	   A sanitizer build adds the sanitizer's own runtime, and nothing else may come with it. */
	const char *sanitize = test_setting("NVI_SANITIZE");
	const char *sanitizer_runtimes = test_format("%s%s", strstr(sanitize, "address") ? "|libasan" : "", strstr(sanitize, "undefined") ? "|libubsan" : "");
	const char *argv[] = { "/bin/sh", "-c", test_format("readelf -d '%s' | grep -E 'NEEDED|RPATH|RUNPATH' | grep -vE 'Shared library: \\[(-%s)\\.so\\.[0-9]+\\]' | sed 's/.*\\[//; s/\\]//' | sort | tr '\\n' ' '",
							   test_setting("NVI_RUNTIME"), sanitizer_runtimes), NULL };
	struct test_run run = test_run(argv, no_env, 60);
	const char *loader = strrchr(test_interpreter(), '/') + 1;
	ck_assert_str_eq(run.output, test_format("/proc/nvinterpose-probe-P/$PLATFORM/nvinterpose-probe-L/$LIB/nvinterpose-probe-E:/proc %s libc.so.6 ", loader));
}
END_TEST

START_TEST(test_runtime_binds_libc_as_the_build_option_says)
{
	/* By default the runtime's libc functions are bound at their first call, so a process that
	   never calls the runtime resolves none of them (docs/performance.md); -Dbind_now=true binds
	   them at load, with full RELRO. The dynamic section's flags say which the loader will do. */
	const char *argv[] = { "/bin/sh", "-c", test_format("readelf -d '%s' | grep -E '\\((FLAGS|FLAGS_1)\\)' | grep -cwE 'BIND_NOW|NOW'", test_setting("NVI_RUNTIME")), NULL };
	struct test_run run = test_run(argv, no_env, 60);
	if (strcmp(test_setting("NVI_BIND_NOW"), "1") == 0)
		ck_assert_msg(strcmp(run.output, "0\n") != 0, "bind_now asked, and no BIND_NOW or NOW flag");
	else
		ck_assert_msg(strcmp(run.output, "0\n") == 0, "bound at load without bind_now: %s", run.output);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("loader_rules");
	TCase *tc = tcase_create("loader_rules");
	tcase_add_test(tc, test_runtime_binds_libc_as_the_build_option_says);
	tcase_add_test(tc, test_runpath_of_caller_is_kept);
	tcase_add_test(tc, test_rpath_of_caller_is_kept);
	tcase_add_test(tc, test_origin_of_library_loaded_through_symlink_is_the_links_folder);
	tcase_add_test(tc, test_executable_rpath_applies_to_a_needed_librarys_bare_name_load);
	tcase_add_test(tc, test_cache_question_never_searches_the_programs_rpath_for_a_caller_with_runpath);
	tcase_add_test(tc, test_bare_name_of_a_library_without_soname_follows_the_callers_rpath);
	tcase_add_test(tc, test_caller_with_an_empty_search_list_gets_the_runtimes_copy);
	tcase_add_test(tc, test_ld_library_path_order_is_kept);
	tcase_add_test(tc, test_already_loaded_soname_returns_the_same_handle);
	tcase_add_test(tc, test_pass_through_names_behave_as_without_the_runtime);
	tcase_add_test(tc, test_missing_dependent_keeps_the_loaders_message);
	tcase_add_test(tc, test_both_glibc_symbol_versions_reach_the_hook);
	tcase_add_test(tc, test_exports_are_exactly_the_hooks_and_the_api);
	tcase_add_test(tc, test_no_symbol_needs_a_glibc_above_2_17);
	tcase_add_test(tc, test_runtime_runpath_is_the_loader_probe_and_it_needs_libc_and_the_loader);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
