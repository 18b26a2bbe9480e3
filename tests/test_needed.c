/* DT_NEEDED dependents: an NVIDIA library loaded by path whose NVIDIA DT_NEEDED lives in a sibling
   wheel folder (CUDA 12 layout: cusparse in nvidia/cusparse/lib, nvJitLink in nvidia/nvjitlink/lib).
   Stand-ins use a major no real package ships (.so.77), so no installed CUDA can answer for them. */
#include "common.h"
#include "standins.h"

#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

struct wheels {
	char *root, *cusparse, *nvjitlink, *cusparse_lib, *nvjitlink_lib;
};

/* site-packages/nvidia/{cusparse,nvjitlink}/lib with libcusparse.so.77 (RUNPATH $ORIGIN, as the real
   one) needing libnvJitLink.so.77, which returns 7: cusparse_value() == 1007. */
static struct wheels make_wheels(void)
{
	struct wheels w;
	w.root = test_tmpdir();
	w.cusparse = test_format("%s/site-packages/nvidia/cusparse/lib", w.root);
	w.nvjitlink = test_format("%s/site-packages/nvidia/nvjitlink/lib", w.root);
	test_mkdirs(w.cusparse);
	test_mkdirs(w.nvjitlink);
	w.nvjitlink_lib = test_format("%s/libnvJitLink.so.77", w.nvjitlink);
	test_build_library("value.c", w.nvjitlink_lib, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=7");
	w.cusparse_lib = test_format("%s/libcusparse.so.77", w.cusparse);
	test_build_library("needer.c", w.cusparse_lib, "libcusparse.so.77",
			   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=nvjitlink_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'",
				       w.nvjitlink_lib));
	return w;
}

START_TEST(test_sibling_wheel_dt_needed_fails_without_the_runtime)
{
	struct wheels w = make_wheels();
	struct test_run run = test_probe(no_env, test_format("open %s", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "error: libnvJitLink.so.77: cannot open shared object file"), "%s", run.output);
}
END_TEST

START_TEST(test_sibling_wheel_dt_needed_loads_under_the_runtime)
{
	struct wheels w = make_wheels();
	char *log = test_format("%s/events.jsonl", w.root);
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	/* The parent is loaded by path first: that registers its folder, whose wheel sibling has it. */
	struct test_run run = test_probe(env, test_format("call %s cusparse_value maps libnvJitLink", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", w.nvjitlink_lib)), "%s", run.output);
	ck_assert_int_eq(test_count(run.output, "maps: "), 1);
	char *events = test_read_file(log);
	ck_assert_msg(test_contains(events, test_format("\"event\":\"needed\",\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"caller\":\"%s\"", w.nvjitlink_lib, w.cusparse_lib)), "%s", events);
	char **lines;
	ck_assert_uint_ge(test_event_lines(log, &lines), 2);
}
END_TEST

/* A DT_NEEDED the loader finds itself (in the parent's RUNPATH) is registered at the next sync,
   with the library whose DT_NEEDED names it as its caller. */
START_TEST(test_dt_needed_the_loader_found_is_registered_with_the_library_that_needs_it)
{
	struct wheels w = make_wheels();
	char *beside = test_format("%s/libnvJitLink.so.77", w.cusparse);
	test_copy_file(w.nvjitlink_lib, beside);
	char *log = test_format("%s/events.jsonl", w.root);
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	struct test_run run = test_probe(env, test_format("call %s cusparse_value origin nvJitLink", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "%s", run.output);
	char *registered = test_find_event(log, "register", "name", "libnvJitLink.so.77");
	ck_assert_msg(registered, "%s", test_read_file(log));
	ck_assert_str_eq(test_event_value(registered, "path"), beside);
	ck_assert_str_eq(test_event_value(registered, "caller"), w.cusparse_lib);
	ck_assert_str_eq(test_event_value(registered, "reason"), "seen loaded");
}
END_TEST

START_TEST(test_dlclose_still_unloads_the_tree)
{
	struct wheels w = make_wheels();
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open %s close %s maps libnvJitLink maps libcusparse", w.cusparse_lib, w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, test_format("open %s: %s", w.cusparse_lib, w.cusparse_lib)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "maps: "), "the runtime keeps no reference: %s", run.output);
}
END_TEST

START_TEST(test_dependencies_load_leaves_first)
{
	/* cusolver-like needs cusparse-like (a sibling), which needs nvJitLink (another sibling). */
	struct wheels w = make_wheels();
	char *cusolver = test_format("%s/site-packages/nvidia/cusolver/lib", w.root);
	test_mkdirs(cusolver);
	char *cusolver_lib = test_format("%s/libcusolver.so.77", cusolver);
	test_build_library("needer.c", cusolver_lib, "libcusolver.so.77",
			   test_format("-DNEEDER_SYMBOL=cusolver_value -DNEEDED_SYMBOL=cusparse_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", w.cusparse_lib));
	const char *env[] = { standin_preload(), NULL };
	struct test_run plain = test_probe(no_env, test_format("call %s cusolver_value", cusolver_lib));
	ck_assert_msg(test_contains(plain.output, "error: libcusparse.so.77: cannot open shared object file"), "%s", plain.output);
	struct test_run run = test_probe(env, test_format("call %s cusolver_value", cusolver_lib));
	ck_assert_msg(test_contains(run.output, "call cusolver_value: 2007"), "%s", run.output);
}
END_TEST

START_TEST(test_dependency_cycle_ends)
{
	/* Two sibling libraries that need each other: the walk must end, and the load works. */
	char *root = test_tmpdir();
	char *a = test_format("%s/site-packages/nvidia/cufft/lib", root), *b = test_format("%s/site-packages/nvidia/curand/lib", root);
	test_mkdirs(a);
	test_mkdirs(b);
	char *first = test_format("%s/libcurand.so.77", b), *second = test_format("%s/libcufft.so.77", a);
	/* Build the cycle in three steps: b without its need, a needing b, b again needing a. */
	test_build_library("value.c", first, "libcurand.so.77", "-DVALUE_SYMBOL=curand_value -DVALUE=5");
	test_build_library("needer.c", second, "libcufft.so.77", test_format("-DNEEDER_SYMBOL=cufft_value -DNEEDED_SYMBOL=curand_value '%s'", first));
	test_build_library("value.c", first, "libcurand.so.77", test_format("-DVALUE_SYMBOL=curand_value -DVALUE=5 '%s'", second));
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open %s call %s cufft_value", test_format("%s/libnvrtc.so.77", standin_nvrtc_wheel(0).lib), second));
	ck_assert_msg(run.status == 0 && test_contains(run.output, "call cufft_value: 1005"), "%s", run.output);
}
END_TEST

START_TEST(test_runpath_that_covers_the_dependency_needs_no_help)
{
	/* The dependency lies beside the parent, whose RUNPATH is $ORIGIN: the loader finds it. */
	struct wheels w = make_wheels();
	test_copy_file(w.nvjitlink_lib, test_format("%s/libnvJitLink.so.77", w.cusparse));
	char *log = test_format("%s/events.jsonl", w.root);
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	struct test_run run = test_probe(env, test_format("call %s cusparse_value maps libnvJitLink", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s/libnvJitLink.so.77\n", w.cusparse)), "%s", run.output);
	char *events = test_read_file(log);
	ck_assert_msg(!test_contains(events, "\"needed\""), "%s", events);
}
END_TEST

/* A caller library whose RPATH or RUNPATH names a folder A holding another nvJitLink (value 99)
   dlopens the cusparse stand-in by path. glibc maps the dlopen'ed library with no loader: its
   DT_NEEDED see its own RPATH or RUNPATH, the program's RPATH, LD_LIBRARY_PATH, the cache and the
   system folders, never the caller's lists. So A's copy is not found, plainly, and the runtime
   must supply the wheel sibling's (not predict that the loader finds A's). */
static void check_dlopen_caller_lists_do_not_reach_the_dt_needed(const char *dtags, const char *cusparse_path_flags)
{
	struct wheels w = make_wheels();
	if (cusparse_path_flags) /* the parent with an RPATH of its own (or none) instead of RUNPATH $ORIGIN */
		test_build_library("needer.c", w.cusparse_lib, "libcusparse.so.77",
				   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=nvjitlink_value '%s' %s", w.nvjitlink_lib,
					       cusparse_path_flags));
	const char *a = test_mkdirs(test_format("%s/a", w.root));
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", a), "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=99");
	char *caller = test_format("%s/libcaller.so.77", w.root);
	test_build_library("host.c", caller, "libcaller.so.77",
			   test_format("-DPLUGIN='\"%s\"' -DPLUGIN_SYMBOL='\"cusparse_value\"' -ldl -Wl,%s,-rpath,%s", w.cusparse_lib, dtags, a));
	struct test_run plain = test_probe(no_env, test_format("call %s host_load_plugin", caller));
	ck_assert_msg(test_contains(plain.output, "call host_load_plugin: -1"), "the loader does not search the caller's list: %s", plain.output);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("call %s host_load_plugin maps libnvJitLink", caller));
	ck_assert_msg(test_contains(run.output, "call host_load_plugin: 1007"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", w.nvjitlink_lib)), "%s", run.output);
}

START_TEST(test_dt_needed_of_a_dlopened_library_never_sees_the_callers_runpath)
{
	check_dlopen_caller_lists_do_not_reach_the_dt_needed("--enable-new-dtags", NULL);
}
END_TEST

START_TEST(test_dt_needed_of_a_dlopened_library_never_sees_the_callers_rpath)
{
	/* The parent has no RUNPATH, so an RPATH chain applies to its needs: its own, then the
	   program's; the dlopen caller is not in that chain. */
	check_dlopen_caller_lists_do_not_reach_the_dt_needed("--disable-new-dtags", "");
}
END_TEST

/* The parent's RUNPATH uses $PLATFORM and $LIB; the folder they expand to (as the loader expands
   them: dl_platform, not AT_PLATFORM) holds an nvJitLink (value 5) the loader takes. The runtime
   must see it too and change nothing, though the wheel sibling holds another copy (value 7). With
   that folder emptied the loader finds none, and the runtime, knowing the tokens, supplies the
   sibling's. The probe program loads libc only, so the loader searches the runtime's RUNPATH for
   the runtime's own libdl.so.2 before the runtime starts: the tokens must outlive that search. */
static void check_token_in_the_parents_runpath_is_expanded_as_the_loader_does(const char *runpath)
{
	struct wheels w = make_wheels();
	char *expanded = test_loader_expansion(test_format("%s/%s", w.cusparse, runpath));
	test_mkdirs(expanded);
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", expanded), "libnvJitLink.so.77",
			   "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=5");
	test_build_library("needer.c", w.cusparse_lib, "libcusparse.so.77",
			   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=nvjitlink_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN/%s'",
				       w.nvjitlink_lib, runpath));
	struct test_run plain = test_probe(no_env, test_format("call %s cusparse_value", w.cusparse_lib));
	ck_assert_msg(test_contains(plain.output, "call cusparse_value: 1005"), "%s", plain.output);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("call %s cusparse_value", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1005"), "the loader's own copy: %s", run.output);
	ck_assert_int_eq(unlink(test_format("%s/libnvJitLink.so.77", expanded)), 0);
	plain = test_probe(no_env, test_format("call %s cusparse_value", w.cusparse_lib));
	ck_assert_msg(test_contains(plain.output, "error: libnvJitLink.so.77: cannot open shared object file"), "%s", plain.output);
	run = test_probe(env, test_format("call %s cusparse_value", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "the wheel sibling's: %s", run.output);
}

/* On both kinds of CPU (tests/common.h): "haswell" or "x86_64", as the loader says. */
START_TEST(test_platform_in_the_parents_runpath_is_the_loaders_dl_platform)
{
	if (test_cpu_kind(_i))
		check_token_in_the_parents_runpath_is_expanded_as_the_loader_does("by-platform/$PLATFORM");
}
END_TEST

START_TEST(test_lib_in_the_parents_runpath_is_the_loaders)
{
	check_token_in_the_parents_runpath_is_expanded_as_the_loader_does("by-lib/${LIB}");
}
END_TEST

/* The cusparse stand-in again, with the search-path flags given instead of RUNPATH $ORIGIN. */
static void rebuild_cusparse(const struct wheels *w, const char *path_flags)
{
	test_build_library("needer.c", w->cusparse_lib, "libcusparse.so.77",
			   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=nvjitlink_value '%s' %s", w->nvjitlink_lib, path_flags));
}

/* A program with DT_RPATH a/ (which holds an nvJitLink returning 5) dlopens the cusparse stand-in by
   path through libhost.so. The program's RPATH serves the DT_NEEDED of a dlopened library that has
   no RUNPATH: the loader takes a/'s copy, and so must the runtime (not the wheel sibling's). With
   a RUNPATH of its own (cusparse_path_flags NULL: of an empty folder) the program's RPATH no longer
   counts: the loader finds nothing, and the runtime supplies the wheel sibling's. */
static void check_program_with_rpath(const char *cusparse_path_flags, const char *plain_expected, const char *expected)
{
	struct wheels w = make_wheels();
	rebuild_cusparse(&w, cusparse_path_flags ? cusparse_path_flags
				 : test_format("-Wl,--enable-new-dtags,-rpath,'%s'", test_mkdirs(test_format("%s/empty", w.root))));
	const char *a = test_mkdirs(test_format("%s/a", w.root));
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", a), "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=5");
	test_build_library("host.c", test_format("%s/libhost.so", a), "libhost.so",
			   test_format("-DPLUGIN='\"%s\"' -DPLUGIN_SYMBOL='\"cusparse_value\"'", w.cusparse_lib));
	char *program = test_format("%s/rpath-main", w.root);
	char *command = test_format("'%s' -o '%s' '%s/rpath_main.c' -L'%s' -lhost -Wl,--disable-new-dtags,-rpath,'%s'",
				    test_setting("NVI_CC"), program, test_setting("NVI_FIXTURES"), a, a);
	const char *build[] = { "/bin/sh", "-c", command, NULL };
	struct test_run built = test_run(build, no_env, 120);
	ck_assert_msg(built.status == 0, "%s", built.output);
	const char *argv[] = { program, NULL };
	const char *plain_env[] = { "LD_LIBRARY_PATH=", NULL };
	const char *env[] = { "LD_LIBRARY_PATH=", standin_preload(), NULL };
	struct test_run plain = test_run(argv, plain_env, 60);
	ck_assert_msg(test_contains(plain.output, plain_expected), "without the runtime: %s", plain.output);
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(test_contains(run.output, expected), "with the runtime: %s", run.output);
}

START_TEST(test_programs_rpath_serves_the_dt_needed_of_a_dlopened_library_without_runpath)
{
	check_program_with_rpath("", "plugin: 1005", "plugin: 1005"); /* a/'s copy, left to the loader */
}
END_TEST

START_TEST(test_programs_rpath_does_not_serve_a_dlopened_library_with_runpath)
{
	check_program_with_rpath(NULL, "plugin: -1", "plugin: 1007"); /* the wheel sibling's */
}
END_TEST

START_TEST(test_empty_element_of_the_parents_rpath_is_the_working_folder)
{
	/* RPATH "/nonexistent-a::/nonexistent-b": the empty element is the working folder, which holds
	   an nvJitLink returning 5; the loader takes it, and the runtime must not supply the sibling's. */
	struct wheels w = make_wheels();
	rebuild_cusparse(&w, "-Wl,--disable-new-dtags,-rpath,/nonexistent-a::/nonexistent-b");
	const char *work = test_mkdirs(test_format("%s/work", w.root));
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", work), "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=5");
	const char *plain_env[] = { "LD_LIBRARY_PATH=", NULL };
	struct test_run plain = test_probe(plain_env, test_format("cd %s call %s cusparse_value", work, w.cusparse_lib));
	ck_assert_msg(test_contains(plain.output, "call cusparse_value: 1005"), "%s", plain.output);
	const char *env[] = { "LD_LIBRARY_PATH=", standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("cd %s call %s cusparse_value maps libnvJitLink", work, w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1005"), "the loader's copy: %s", run.output);
}
END_TEST

START_TEST(test_dt_needed_candidate_must_have_the_name_as_its_soname)
{
	/* A copy of nvJitLink without DT_SONAME lies beside cusparse (no RUNPATH: the loader does not
	   look there). Loaded first, it would not answer for the name libnvJitLink.so.77 (the loader
	   matches a loaded object's SONAME): the runtime must pass over it to the wheel sibling's. */
	struct wheels w = make_wheels();
	rebuild_cusparse(&w, "");
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", w.cusparse), "", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=3");
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("call %s cusparse_value", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "%s", run.output);
}
END_TEST

START_TEST(test_copy_in_an_hwcaps_subfolder_the_runtime_cannot_rank_is_left_to_the_loader_and_said)
{
	/* The only nvJitLink in cusparse's RUNPATH folder lies in glibc-hwcaps/model-none, which no
	   glibc searches, but the runtime cannot ask which ones this loader searches: it may be the
	   loader's. The runtime leaves the name to the loader (which fails) and says so at debug. */
	struct wheels w = make_wheels();
	const char *hwcaps = test_mkdirs(test_format("%s/glibc-hwcaps/model-none", w.cusparse));
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", hwcaps), "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=3");
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=debug", NULL };
	struct test_run run = test_probe(env, test_format("open %s", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "error: libnvJitLink.so.77: cannot open shared object file"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("libnvJitLink.so.77 for %s: unknown whether the loader finds it", w.cusparse_lib)),
		      "%s", run.output);
}
END_TEST

START_TEST(test_an_unranked_copy_is_not_said_left_to_the_loader_when_coherent_takes_the_askers_own)
{
	/* As above, the only nvJitLink in cusparse's RUNPATH folder lies in a glibc-hwcaps subfolder the
	   runtime cannot rank. Under coherent the copy in cusparse's wheel sibling is taken over it, so
	   the runtime does not say that it left the name to the loader. */
	struct wheels w = make_wheels();
	const char *hwcaps = test_mkdirs(test_format("%s/glibc-hwcaps/model-none", w.cusparse));
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", hwcaps), "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=3");
	const char *env[] = { standin_preload(), "NVINTERPOSE_POLICY=coherent", "NVINTERPOSE_LOG=debug", NULL };
	struct test_run run = test_probe(env, test_format("call %s cusparse_value", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "unknown whether the loader finds it"), "%s", run.output);
}
END_TEST

/* A subfolder that appears after a folder was walked is seen by the next walk: the runtime may
   remember that a folder had no subfolder to try only while the folder is unchanged. cusparse's
   folder is walked for its nvJitLink (supplied from the wheel sibling); then a glibc-hwcaps
   subfolder holding a cuFFT is moved into it, and cusolver, beside cusparse, needs cuFFT: the
   runtime can no longer tell whether the loader takes that copy, so it leaves the name to the
   loader (which never searches model-none, and fails) instead of supplying cuFFT's own wheel's.
   With other_subfolder the folder holds an unrelated folder from the start (then the first walk
   remembers the folder, which has settled: the test waits over a second first). */
static void check_subfolder_created_after_a_walk(bool other_subfolder)
{
	struct wheels w = make_wheels();
	if (other_subfolder)
		test_mkdirs(test_format("%s/include", w.cusparse));
	const char *cufft = test_mkdirs(test_format("%s/site-packages/nvidia/cufft/lib", w.root));
	test_build_library("value.c", test_format("%s/libcufft.so.77", cufft), "libcufft.so.77", "-DVALUE_SYMBOL=cufft_value -DVALUE=5");
	const char *staged = test_mkdirs(test_format("%s/staged/glibc-hwcaps/model-none", w.root));
	test_build_library("value.c", test_format("%s/libcufft.so.77", staged), "libcufft.so.77", "-DVALUE_SYMBOL=cufft_value -DVALUE=3");
	char *cusolver = test_format("%s/libcusolver.so.77", w.cusparse);
	test_build_library("needer.c", cusolver, "libcusolver.so.77",
			   test_format("-DNEEDER_SYMBOL=cusolver_value -DNEEDED_SYMBOL=cufft_value '%s/libcufft.so.77' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'",
				       cufft));
	sleep(2);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=debug", NULL };
	struct test_run run = test_probe(env, test_format("call %s cusparse_value rename %s/staged/glibc-hwcaps %s/glibc-hwcaps call %s cusolver_value",
							  w.cusparse_lib, w.root, w.cusparse, cusolver));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "error: libcufft.so.77: cannot open shared object file"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("libcufft.so.77 for %s: unknown whether the loader finds it", cusolver)), "%s",
		      run.output);
}

START_TEST(test_subfolder_created_after_a_walk_is_seen_by_the_next)
{
	check_subfolder_created_after_a_walk(false);
}
END_TEST

START_TEST(test_subfolder_created_after_a_walk_is_seen_beside_another_subfolder)
{
	check_subfolder_created_after_a_walk(true);
}
END_TEST

START_TEST(test_legacy_subfolders_without_the_name_leave_the_search_known)
{
	/* cusparse's RUNPATH folder has the legacy hwcap subfolders tls/, x86_64/tls/ and the
	   platform's (PLATFORM/tls/), empty: they cannot give the loader an nvJitLink, so the runtime
	   still knows the loader finds none and supplies the wheel sibling's. On both kinds of CPU. */
	if (!test_cpu_kind(_i))
		return;
	struct wheels w = make_wheels();
	test_mkdirs(test_format("%s/tls", w.cusparse));
	test_mkdirs(test_format("%s/x86_64/tls", w.cusparse));
	test_mkdirs(test_format("%s%s/tls", w.cusparse, test_loader_expansion("/$PLATFORM")));
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("call %s cusparse_value", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "%s", run.output);
}
END_TEST

START_TEST(test_rtld_now_binds_what_the_runtime_supplies)
{
	/* The supplied nvJitLink references a function nobody defines. The plain loader, finding that
	   file itself, refuses it under RTLD_NOW; so the runtime must not load the parent with it: the
	   call fails, with the loader's own message for what it could not do. RTLD_LAZY loads. */
	struct wheels w = make_wheels();
	test_build_library("unresolved.c", w.nvjitlink_lib, "libnvJitLink.so.77", "");
	const char *env[] = { standin_preload(), NULL };
	const char *plain_env[] = { test_format("LD_LIBRARY_PATH=%s", w.nvjitlink), NULL };
	struct test_run plain = test_probe(plain_env, test_format("open:now %s", w.cusparse_lib));
	ck_assert_msg(test_contains(plain.output, "undefined symbol: missing_function"), "%s", plain.output);
	struct test_run run = test_probe(env, test_format("open:now %s", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, test_format("open %s: error: ", w.cusparse_lib)), "%s", run.output);
	run = test_probe(env, test_format("open:lazy %s", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, test_format("open %s: %s\n", w.cusparse_lib, w.cusparse_lib)), "%s", run.output);
}
END_TEST

START_TEST(test_deepbind_load_is_left_alone)
{
	struct wheels w = make_wheels();
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open:now,deepbind %s", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "error: libnvJitLink.so.77: cannot open shared object file"), "%s", run.output);
}
END_TEST

START_TEST(test_policy_off_leaves_dt_needed_alone)
{
	struct wheels w = make_wheels();
	const char *env[] = { standin_preload(), "NVINTERPOSE_POLICY=off", NULL };
	struct test_run run = test_probe(env, test_format("open %s", w.cusparse_lib));
	ck_assert_msg(test_contains(run.output, "error: libnvJitLink.so.77: cannot open shared object file"), "%s", run.output);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("needed");
	TCase *tc = tcase_create("needed");
	tcase_add_test(tc, test_sibling_wheel_dt_needed_fails_without_the_runtime);
	tcase_add_test(tc, test_sibling_wheel_dt_needed_loads_under_the_runtime);
	tcase_add_test(tc, test_dt_needed_the_loader_found_is_registered_with_the_library_that_needs_it);
	tcase_add_test(tc, test_dlclose_still_unloads_the_tree);
	tcase_add_test(tc, test_dependencies_load_leaves_first);
	tcase_add_test(tc, test_dependency_cycle_ends);
	tcase_add_test(tc, test_runpath_that_covers_the_dependency_needs_no_help);
	tcase_add_test(tc, test_dt_needed_of_a_dlopened_library_never_sees_the_callers_runpath);
	tcase_add_test(tc, test_dt_needed_of_a_dlopened_library_never_sees_the_callers_rpath);
	tcase_add_loop_test(tc, test_platform_in_the_parents_runpath_is_the_loaders_dl_platform, 0, TEST_CPU_KINDS);
	tcase_add_test(tc, test_lib_in_the_parents_runpath_is_the_loaders);
	tcase_add_test(tc, test_programs_rpath_serves_the_dt_needed_of_a_dlopened_library_without_runpath);
	tcase_add_test(tc, test_programs_rpath_does_not_serve_a_dlopened_library_with_runpath);
	tcase_add_test(tc, test_empty_element_of_the_parents_rpath_is_the_working_folder);
	tcase_add_test(tc, test_dt_needed_candidate_must_have_the_name_as_its_soname);
	tcase_add_test(tc, test_copy_in_an_hwcaps_subfolder_the_runtime_cannot_rank_is_left_to_the_loader_and_said);
	tcase_add_test(tc, test_an_unranked_copy_is_not_said_left_to_the_loader_when_coherent_takes_the_askers_own);
	tcase_add_loop_test(tc, test_legacy_subfolders_without_the_name_leave_the_search_known, 0, TEST_CPU_KINDS);
	tcase_add_test(tc, test_subfolder_created_after_a_walk_is_seen_by_the_next);
	tcase_add_test(tc, test_subfolder_created_after_a_walk_is_seen_beside_another_subfolder);
	tcase_add_test(tc, test_rtld_now_binds_what_the_runtime_supplies);
	tcase_add_test(tc, test_deepbind_load_is_left_alone);
	tcase_add_test(tc, test_policy_off_leaves_dt_needed_alone);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
