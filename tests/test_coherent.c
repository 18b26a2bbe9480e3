/* The coherent policy: an NVIDIA library's NVIDIA dependents come from its own folder or that
   folder's wheel siblings before other copies; first loaded still wins, and a mixed origin is
   reported; the default fallback keeps the loader's choice and reports the mixed origin it makes. Stand-ins use names that the
   machine's ld.so.cache does not hold. */
#include "common.h"
#include "standins.h"

#include <string.h>

struct mixed {
	char *root, *cusparse_lib, *wheel_nvjitlink, *system, *system_nvjitlink;
};

/* A wheel pair (cusparse-like needing libnvJitLink.so.77, value 7) and a "system" nvJitLink in
   ROOT/system that lacks the symbol cusparse needs (or, with compatible, has it with value 3). */
static struct mixed make_mixed(bool compatible)
{
	struct mixed m;
	m.root = test_tmpdir();
	char *cusparse = test_format("%s/site-packages/nvidia/cusparse/lib", m.root);
	char *nvjitlink = test_format("%s/site-packages/nvidia/nvjitlink/lib", m.root);
	m.system = test_format("%s/system", m.root);
	test_mkdirs(cusparse);
	test_mkdirs(nvjitlink);
	test_mkdirs(m.system);
	m.wheel_nvjitlink = test_format("%s/libnvJitLink.so.77", nvjitlink);
	test_build_library("value.c", m.wheel_nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=7");
	m.system_nvjitlink = test_format("%s/libnvJitLink.so.77", m.system);
	test_build_library("value.c", m.system_nvjitlink, "libnvJitLink.so.77",
			   compatible ? "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=3" : "-DVALUE_SYMBOL=older_nvjitlink_value -DVALUE=3");
	m.cusparse_lib = test_format("%s/libcusparse.so.77", cusparse);
	test_build_library("needer.c", m.cusparse_lib, "libcusparse.so.77",
			   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=nvjitlink_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'",
				       m.wheel_nvjitlink));
	return m;
}

static struct test_run run_policy(const struct mixed *m, const char *policy, const char *args, const char *log)
{
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s", m->system), policy ? standin_preload() : NULL,
			      policy ? test_format("NVINTERPOSE_POLICY=%s", policy) : NULL, "NVINTERPOSE_LOG=warn",
			      log ? test_format("NVINTERPOSE_LOG_FILE=%s", log) : NULL, NULL };
	return test_probe(env, args);
}

START_TEST(test_system_nvjitlink_on_ld_library_path_breaks_cusparse_without_the_runtime)
{
	struct mixed m = make_mixed(false);
	struct test_run run = run_policy(&m, NULL, test_format("open %s", m.cusparse_lib), NULL);
	ck_assert_msg(test_contains(run.output, "undefined symbol: nvjitlink_value"), "%s", run.output);
}
END_TEST

START_TEST(test_fallback_keeps_the_loaders_choice)
{
	struct mixed m = make_mixed(false);
	struct test_run run = run_policy(&m, "fallback", test_format("open %s", m.cusparse_lib), NULL);
	ck_assert_msg(test_contains(run.output, "undefined symbol: nvjitlink_value"), "%s", run.output);
}
END_TEST

/* The mixed origin the default policy leaves in place is said all the same, by default: a warning
   (before the loader fails the load with its own message), the "mixed-origin" event and the
   report's line. */
START_TEST(test_fallback_says_the_loaders_choice_is_a_mixed_origin)
{
	struct mixed m = make_mixed(false);
	char *log = test_format("%s/events.jsonl", m.root);
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s", m.system), standin_preload(), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	const char *argv[] = { "/bin/sh", "-c", test_format("NVINTERPOSE_REPORT=$$ exec '%s' open '%s'", test_setting("NVI_PROBE"), m.cusparse_lib), NULL };
	struct test_run run = test_run(argv, env, 120);
	ck_assert_msg(test_contains(run.output, "undefined symbol: nvjitlink_value"), "%s", run.output);
	ck_assert_msg(test_count(run.output, "nvinterpose: warning: mixed origins") == 1 &&
			      test_contains(run.output, test_format("nvinterpose: warning: mixed origins: %s gets libnvJitLink.so.77 from another installation: %s; its own installation holds %s (the coherent policy would take it)\n",
								    m.cusparse_lib, m.system_nvjitlink, m.wheel_nvjitlink)),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: report: mixed origin libnvJitLink.so.77 for %s: from %s; its own installation holds %s\n",
							    m.cusparse_lib, m.system_nvjitlink, m.wheel_nvjitlink)) &&
		      test_contains(run.output, " 1 mixed origins\n"), "%s", run.output);
	char *mixed = test_find_event(log, "mixed-origin", NULL, NULL);
	ck_assert_msg(mixed, "%s", test_read_file(log));
	ck_assert_str_eq(test_event_value(mixed, "reason"), "from another installation than the caller's");
	ck_assert_str_eq(test_event_value(mixed, "own"), m.wheel_nvjitlink);
	ck_assert_str_eq(test_event_value(mixed, "policy"), "fallback");
}
END_TEST

/* First loaded wins under fallback too, and is said as under coherent; off looks for nothing. */
START_TEST(test_fallback_says_a_first_loaded_mixed_origin_and_off_does_not)
{
	struct mixed m = make_mixed(true);
	const char *args = test_format("open %s open %s call %s cusparse_value", m.system_nvjitlink, m.cusparse_lib, m.cusparse_lib);
	const char *fallback[] = { standin_preload(), NULL };
	struct test_run run = test_probe(fallback, args);
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1003"), "%s", run.output);
	ck_assert_msg(test_count(run.output, "nvinterpose: ") == 1 &&
			      test_contains(run.output, test_format("nvinterpose: warning: mixed origins: libnvJitLink.so.77 is already loaded from %s; %s would take %s\n",
								    m.system_nvjitlink, m.cusparse_lib, m.wheel_nvjitlink)),
		      "%s", run.output);
	const char *off[] = { standin_preload(), "NVINTERPOSE_POLICY=off", "NVINTERPOSE_LOG=debug", NULL };
	run = test_probe(off, args);
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1003") && !test_contains(run.output, "mixed origin"), "%s", run.output);
}
END_TEST

START_TEST(test_coherent_takes_nvjitlink_from_the_sibling_wheel)
{
	struct mixed m = make_mixed(false);
	char *log = test_format("%s/events.jsonl", m.root);
	struct test_run run = run_policy(&m, "coherent", test_format("call %s cusparse_value maps libnvJitLink", m.cusparse_lib), log);
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1007"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "mixed origin"), "coherent prevents it: %s", run.output);
	ck_assert_msg(test_count(run.output, "maps: ") == 1 && test_contains(run.output, test_format("maps: %s\n", m.wheel_nvjitlink)),
		      "%s", run.output);
	char *events = test_read_file(log);
	ck_assert_msg(test_contains(events, test_format("\"event\":\"needed\",\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\"", m.wheel_nvjitlink)),
		      "%s", events);
	ck_assert_msg(test_contains(events, "\"policy\":\"coherent\""), "%s", events);
	char **lines;
	ck_assert_uint_ge(test_event_lines(log, &lines), 2);
}
END_TEST

START_TEST(test_coherent_keeps_first_loaded_and_reports_the_mixed_origin)
{
	/* The system nvJitLink is loaded first (by path); cusparse then gets it (first loaded wins),
	   and the runtime says that the wheel's copy was there. */
	struct mixed m = make_mixed(true);
	char *log = test_format("%s/events.jsonl", m.root);
	struct test_run run = run_policy(&m, "coherent", test_format("open %s call %s cusparse_value", m.system_nvjitlink, m.cusparse_lib), log);
	ck_assert_msg(test_contains(run.output, "call cusparse_value: 1003"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: warning: mixed origins: libnvJitLink.so.77 is already loaded from %s; %s would take %s",
							 m.system_nvjitlink, m.cusparse_lib, m.wheel_nvjitlink)), "%s", run.output);
	char *events = test_read_file(log);
	ck_assert_msg(test_contains(events, test_format("\"event\":\"mixed-origin\",\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"own\":\"%s\",\"caller\":\"%s\"",
							m.system_nvjitlink, m.wheel_nvjitlink, m.cusparse_lib)), "%s", events);
	char *mixed = test_find_event(log, "mixed-origin", NULL, NULL);
	ck_assert_str_eq(test_event_value(mixed, "reason"), "first loaded wins: already loaded from another folder");
}
END_TEST

struct cudnn_pair {
	char *root, *parent, *other;
};

/* A cuDNN-like parent (RUNPATH $ORIGIN) with its sub-library beside it (value 9), and another
   cuDNN's sub-library (value 1) in ROOT/other, which LD_LIBRARY_PATH puts first. */
static struct cudnn_pair make_cudnn_pair(void)
{
	struct cudnn_pair c;
	c.root = test_tmpdir();
	char *lib = test_format("%s/site-packages/nvidia/cudnn/lib", c.root);
	c.other = test_format("%s/other", c.root);
	test_mkdirs(lib);
	test_mkdirs(c.other);
	c.parent = test_format("%s/libcudnn.so.76", lib);
	test_build_library("cudnn_like.c", c.parent, "libcudnn.so.76", "-DSUB_LIBRARY='\"libcudnn_ops.so.76\"' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
	test_build_library("value.c", test_format("%s/libcudnn_ops.so.76", lib), "libcudnn_ops.so.76", "-DVALUE_SYMBOL=ops_value -DVALUE=9");
	test_build_library("value.c", test_format("%s/libcudnn_ops.so.76", c.other), "libcudnn_ops.so.76", "-DVALUE_SYMBOL=ops_value -DVALUE=1");
	return c;
}

/* A good copy on LD_LIBRARY_PATH, which the loader takes without the runtime, and a copy cut short
   in the asker's own folder (an interrupted install), which coherent would prefer: the cut copy is
   skipped in every way in, and the program works as it does without the runtime, never a signal.
   For a bare name (NVRTC's builtins) and for a DT_NEEDED (cusparse's nvJitLink). */
START_TEST(test_cut_copy_in_the_askers_folder_is_skipped_for_the_loaders_good_one)
{
	for (int cut = 0; cut < STANDIN_CUTS; cut++) {
		struct standin_wheel wheel = standin_nvrtc_wheel(0);
		standin_cut_builtins(wheel.builtins, cut);
		char *system = test_format("%s/system", wheel.root);
		standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", test_mkdirs(system)), 42, NULL);
		char *path = test_format("LD_LIBRARY_PATH=%s", system);
		const char *plain_env[] = { path, NULL };
		const char *settings[] = { path, "NVINTERPOSE_POLICY=coherent", NULL };
		char *call = test_format("call %s nvrtc_like_compile", wheel.nvrtc);
		standin_check_every_way_in(&(struct standin_runs){ .label = test_format("builtins %s", standin_cut_name(cut)),
								   .plain_env = plain_env, .plain_args = call, .args = call,
								   .result = "call nvrtc_like_compile: " },
					   settings, wheel.nvrtc);

		struct mixed m = make_mixed(true);
		test_build_library("value.c", m.wheel_nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=7 " STANDIN_PADDING);
		standin_cut_library(m.wheel_nvjitlink, cut);
		char *m_path = test_format("LD_LIBRARY_PATH=%s", m.system);
		const char *m_plain[] = { m_path, NULL };
		const char *m_preload[] = { m_path, standin_preload(), "NVINTERPOSE_POLICY=coherent", NULL };
		char *needs = test_format("call %s cusparse_value", m.cusparse_lib);
		standin_check_like_plain(&(struct standin_runs){ .label = test_format("nvJitLink %s, preloaded", standin_cut_name(cut)),
								 .plain_env = m_plain, .plain_args = needs, .env = m_preload, .args = needs,
								 .result = "call cusparse_value: " });
	}
}
END_TEST

START_TEST(test_cudnn_sub_library_comes_from_the_parents_folder_under_coherent)
{
	struct cudnn_pair c = make_cudnn_pair();
	const char *plain_env[] = { test_format("LD_LIBRARY_PATH=%s", c.other), NULL };
	const char *fallback_env[] = { plain_env[0], standin_preload(), NULL };
	const char *coherent_env[] = { plain_env[0], standin_preload(), "NVINTERPOSE_POLICY=coherent", NULL };
	/* The other copy is an origin too (loaded by path first); unloaded again before the parent asks. */
	char *args = test_format("open %s/libcudnn_ops.so.76 close %s/libcudnn_ops.so.76 call %s cudnn_like_load", c.other, c.other, c.parent);
	struct test_run plain = test_probe(plain_env, args);
	struct test_run fallback = test_probe(fallback_env, args);
	struct test_run coherent = test_probe(coherent_env, args);
	ck_assert_msg(test_contains(plain.output, "call cudnn_like_load: 1"), "%s", plain.output);
	ck_assert_msg(test_contains(fallback.output, "call cudnn_like_load: 1"), "%s", fallback.output);
	ck_assert_msg(test_contains(coherent.output, "call cudnn_like_load: 9"), "%s", coherent.output);
}
END_TEST

START_TEST(test_errno_is_kept_on_a_repeated_load_under_coherent)
{
	/* The system copy is loaded; then an NVIDIA library of the wheel asks for it by bare name,
	   for the first time: the loader's answer stands, and the runtime's check for a mixed origin
	   (files looked at in the wheel) must leave errno as the successful load leaves it. */
	struct mixed m = make_mixed(true);
	char *asker = test_format("%s/libcusolver.so.77", strrchr(m.cusparse_lib, '/') ? test_format("%.*s", (int)(strrchr(m.cusparse_lib, '/') - m.cusparse_lib), m.cusparse_lib) : m.root);
	test_build_library("host.c", asker, "libcusolver.so.77", "-DPLUGIN='\"libnvJitLink.so.77\"' -ldl");
	struct test_run run = run_policy(&m, "coherent", test_format("open %s call %s host_keeps_errno call %s host_keeps_errno",
								    m.system_nvjitlink, asker, asker), NULL);
	ck_assert_msg(test_count(run.output, "call host_keeps_errno: 1") == 2, "%s", run.output);
	ck_assert_msg(test_contains(run.output, "mixed origins: libnvJitLink.so.77"), "the check ran: %s", run.output);
}
END_TEST

START_TEST(test_coherent_never_redirects_the_driver)
{
	standin_check_driver_is_left_to_the_loader("coherent");
}
END_TEST

START_TEST(test_a_loaded_driver_is_no_mixed_origin)
{
	/* The process loaded a driver library first; an NVIDIA library whose folder holds another copy
	   asks for it by name. The loaded one is used, and since the runtime never takes a driver
	   library from an installation, no copy of the asker's "would be taken": nothing to warn of. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *system = test_format("%s/system", test_tmpdir());
	test_mkdirs(system);
	test_build_library("value.c", test_format("%s/libcuda.so.1", system), "libcuda.so.1", "");
	test_build_library("value.c", test_format("%s/libcuda.so.1", wheel.lib), "libcuda.so.1", "");
	const char *env[] = { standin_preload(), "NVINTERPOSE_POLICY=coherent", "NVINTERPOSE_LOG=info", NULL };
	struct test_run run = test_probe(env, test_format("open %s/libcuda.so.1 call %s nvrtc_like_driver", system, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_driver: 1"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "mixed origins"), "%s", run.output);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("coherent");
	TCase *tc = tcase_create("coherent");
	tcase_add_test(tc, test_system_nvjitlink_on_ld_library_path_breaks_cusparse_without_the_runtime);
	tcase_add_test(tc, test_fallback_keeps_the_loaders_choice);
	tcase_add_test(tc, test_fallback_says_the_loaders_choice_is_a_mixed_origin);
	tcase_add_test(tc, test_fallback_says_a_first_loaded_mixed_origin_and_off_does_not);
	tcase_add_test(tc, test_coherent_takes_nvjitlink_from_the_sibling_wheel);
	tcase_add_test(tc, test_coherent_keeps_first_loaded_and_reports_the_mixed_origin);
	tcase_add_test(tc, test_cut_copy_in_the_askers_folder_is_skipped_for_the_loaders_good_one);
	tcase_add_test(tc, test_cudnn_sub_library_comes_from_the_parents_folder_under_coherent);
	tcase_add_test(tc, test_errno_is_kept_on_a_repeated_load_under_coherent);
	tcase_add_test(tc, test_coherent_never_redirects_the_driver);
	tcase_add_test(tc, test_a_loaded_driver_is_no_mixed_origin);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
