/* Misses and the exit report: an NVIDIA library nobody can supply (a bare-name dlopen, a DT_NEEDED)
   is a warning, said by default for a required dependent (an optional one's and a driver library's
   at info) and a "miss" event naming every place tried, made only
   when someone will read it; NVINTERPOSE_REPORT prints, at exit, the figures and one line for each
   thing counted, in the process it names only, and every process writes its "summary" event. */
#define _GNU_SOURCE
#include "common.h"
#include "standins.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

static char *log_setting(const char *log) { return test_format("NVINTERPOSE_LOG_FILE=%s", log); }

/* The index of the place {folder, step} in a miss's looked list (as written), or -1. */
static int place_index(const char *looked, const char *folder, const char *step)
{
	char *place = folder ? test_format("{\"folder\":\"%s\",\"step\":\"%s\"}", folder, step)
			     : test_format("{\"folder\":null,\"step\":\"%s\"}", step);
	const char *at = strstr(looked, place);
	return at ? (int)(at - looked) : -1;
}

START_TEST(test_bare_name_miss_is_a_warning_with_every_place_looked)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *listed = test_format("%s/on-ld-library-path", wheel.root), *extra = test_format("%s/extra", wheel.root);
	test_mkdirs(listed);
	test_mkdirs(extra);
	char *log = test_format("%s/events.jsonl", wheel.root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=warn", log_setting(log), test_format("LD_LIBRARY_PATH=%s", listed),
			      test_format("NVINTERPOSE_PATH=%s", extra), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	/* The loader still fails the call with its own message. */
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "libnvrtc-builtins.so.77.1: cannot open shared object file"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: warning: libnvrtc-builtins.so.77.1 wanted by %s (dlopen by bare name): not found; looked in %s (listed), ",
							    wheel.nvrtc, listed)), "%s", run.output);
	char *miss = test_find_event(log, "miss", NULL, NULL);
	ck_assert_msg(miss, "no miss event: %s", test_read_file(log));
	ck_assert_str_eq(test_event_value(miss, "name"), "libnvrtc-builtins.so.77.1");
	ck_assert_str_eq(test_event_value(miss, "caller"), wheel.nvrtc);
	ck_assert_str_eq(test_event_value(miss, "family"), "nvrtc-builtins");
	ck_assert_str_eq(test_event_value(miss, "policy"), "fallback");
	ck_assert_str_eq(test_event_value(miss, "reason"), "dlopen by bare name");
	/* In the order tried: the loader's list, its cache, then the runtime's places. */
	char *looked = test_event_value(miss, "looked");
	int on_path = place_index(looked, listed, "listed"), cache = place_index(looked, NULL, "cache"),
	    own = place_index(looked, wheel.lib, "caller_folder"), last = place_index(looked, extra, "nvinterpose_path");
	ck_assert_msg(on_path >= 0 && cache > on_path && own > cache && last > own, "%s", looked);
	ck_assert_msg(test_count(looked, test_format("\"%s\"", wheel.lib)) == 1, "each folder once: %s", looked);
}
END_TEST

/* ROOT/site-packages/nvidia/cusparse/lib/libcusparse.so.77, linked with flags against ROOT/name
   (whose function is symbol), which is then removed: a DT_NEEDED nobody has. */
static char *cusparse_needing_what_is_gone(const char *root, const char *name, const char *symbol, const char *flags)
{
	char *lib = test_format("%s/site-packages/nvidia/cusparse/lib", root);
	test_mkdirs(lib);
	char *gone = test_format("%s/%s", root, name), *cusparse = test_format("%s/libcusparse.so.77", lib);
	test_build_library("value.c", gone, name, test_format("-DVALUE_SYMBOL=%s", symbol));
	test_build_library("needer.c", cusparse, "libcusparse.so.77",
			   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=%s '%s' %s", symbol, gone, flags));
	unlink(gone);
	return cusparse;
}

START_TEST(test_dt_needed_miss_names_the_library_that_needs_it)
{
	char *root = test_tmpdir(), *lib = test_format("%s/site-packages/nvidia/cusparse/lib", root);
	char *cusparse = cusparse_needing_what_is_gone(root, "libnvJitLink.so.77", "nvjitlink_value", "-Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
	char *log = test_format("%s/events.jsonl", root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=warn", log_setting(log), NULL };
	struct test_run run = test_probe(env, test_format("open %s", cusparse));
	ck_assert_msg(test_contains(run.output, "error: libnvJitLink.so.77: cannot open shared object file"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: warning: libnvJitLink.so.77 wanted by %s (DT_NEEDED): not found; looked in ",
							    cusparse)) && test_contains(run.output, test_format("%s (runpath), ", lib)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "nvinterpose-probe"), "the runtime's own RUNPATH is no place it looked: %s", run.output);
	char *miss = test_find_event(log, "miss", "name", "libnvJitLink.so.77");
	ck_assert_msg(miss, "%s", test_read_file(log));
	ck_assert_str_eq(test_event_value(miss, "caller"), cusparse);
	ck_assert_str_eq(test_event_value(miss, "reason"), "DT_NEEDED");
	char *looked = test_event_value(miss, "looked");
	ck_assert_msg(place_index(looked, lib, "runpath") >= 0 && place_index(looked, NULL, "cache") > place_index(looked, lib, "runpath"),
		      "%s", looked);
}
END_TEST

/* cuDNN asks for libcudnn_graph.so.9.19.0, then .so.9.19, then takes the .so.9 beside it: a miss
   of a more exact version of a file that is there is said at info, with that file; a mere other
   version (not one the name begins with) of a required dependent stays a warning. */
START_TEST(test_probe_for_a_more_exact_version_is_info)
{
	char *root = test_tmpdir(), *lib = test_format("%s/site-packages/nvidia/cudnn/lib", root);
	test_mkdirs(lib);
	char *parent = test_format("%s/libcudnn.so.77", lib), *shorter = test_format("%s/libcudnn_graph.so.77", lib);
	test_build_library("cudnn_like.c", parent, "libcudnn.so.77",
			   "-DSUB_LIBRARY='\"libcudnn_graph.so.77.1.0\"' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
	test_build_library("value.c", shorter, "libcudnn_graph.so.77", "-DVALUE_SYMBOL=graph_value");
	char *log = test_format("%s/events.jsonl", root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=info", log_setting(log), NULL };
	struct test_run run = test_probe(env, test_format("call %s cudnn_like_load", parent));
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: info: libcudnn_graph.so.77.1.0 wanted by %s (dlopen by bare name; another version is there: %s): not found",
							    parent, shorter)), "%s", run.output);
	char *miss = test_find_event(log, "miss", NULL, NULL);
	ck_assert_str_eq(test_event_value(miss, "reason"), test_format("dlopen by bare name; another version is there: %s", shorter));
	/* libcudnn_graph.so.76 is no shorter version of .so.77.1.0: a warning, as for any required
	   dependent nobody has. */
	unlink(shorter);
	test_build_library("value.c", test_format("%s/libcudnn_graph.so.76", lib), "libcudnn_graph.so.76", "-DVALUE_SYMBOL=graph_value");
	run = test_probe(env, test_format("call %s cudnn_like_load", parent));
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: warning: libcudnn_graph.so.77.1.0 wanted by %s (dlopen by bare name): not found",
							    parent)), "%s", run.output);
}
END_TEST

/* A dependent the table marks optional (cuDNN's libcudnn_ops, loaded for some operations only)
   that nobody has: said at info, not at warn, and still a "miss" event. */
START_TEST(test_optional_dependent_miss_is_info)
{
	char *root = test_tmpdir(), *lib = test_format("%s/site-packages/nvidia/cudnn/lib", root);
	test_mkdirs(lib);
	char *parent = test_format("%s/libcudnn.so.77", lib);
	test_build_library("cudnn_like.c", parent, "libcudnn.so.77", "-DSUB_LIBRARY='\"libcudnn_ops.so.77\"'");
	char *log = test_format("%s/events.jsonl", root);
	const char *warn[] = { standin_preload(), "NVINTERPOSE_LOG=warn", log_setting(log), NULL };
	struct test_run run = test_probe(warn, test_format("call %s cudnn_like_load", parent));
	ck_assert_msg(!test_contains(run.output, "nvinterpose:"), "%s", run.output);
	ck_assert_msg(test_find_event(log, "miss", "name", "libcudnn_ops.so.77"), "%s", test_read_file(log));
	const char *info[] = { standin_preload(), "NVINTERPOSE_LOG=info", NULL };
	run = test_probe(info, test_format("call %s cudnn_like_load", parent));
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: info: libcudnn_ops.so.77 wanted by %s (dlopen by bare name): not found; looked in ",
							    parent)), "%s", run.output);
}
END_TEST

/* The first of a few NVIDIA sonames the loader finds on this machine by itself (ld.so.cache, the
   system folders), or NULL. */
static const char *name_the_loader_finds(void)
{
	static const char *const names[] = { "libcudart.so.13", "libcublas.so.13", "libnvrtc.so.13", "libcudart.so.12",
					     "libcublas.so.12", "libcudart.so.11.0", NULL };
	for (size_t i = 0; names[i]; i++) {
		dlerror();
		void *handle = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
		if (handle || !dlerror())
			return names[i];
	}
	return NULL;
}

/* A name no folder the runtime can list holds, but the loader's cache does: not a miss (the
   loader's own answer, asked without loading, decides). */
START_TEST(test_name_the_loader_finds_in_its_cache_is_no_miss)
{
	const char *name = name_the_loader_finds();
	if (!name) {
		printf("skipped: no NVIDIA library in this machine's ld.so.cache or system folders\n");
		return;
	}
	char *root = test_tmpdir(), *lib = test_format("%s/site-packages/nvidia/cuda_nvrtc/lib", root);
	test_mkdirs(lib);
	char *nvrtc = test_format("%s/libnvrtc.so.77", lib);
	test_build_library("nvrtc_like.c", nvrtc, "libnvrtc.so.77", test_format("-DBUILTINS='\"%s\"'", name));
	char *log = test_format("%s/events.jsonl", root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=warn", log_setting(log), "LD_LIBRARY_PATH=", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", nvrtc));
	ck_assert_msg(!test_contains(run.output, "not found"), "%s is found by the loader: %s", name, run.output);
	ck_assert_msg(!test_find_event(log, "miss", NULL, NULL), "%s", test_read_file(log));
}
END_TEST

/* libcuda.so.1 where the loader finds no driver (for an asker that reaches none on any machine):
   said at info, not as a warning. */
START_TEST(test_driver_library_miss_is_info_not_a_warning)
{
	struct standin_wheel wheel = standin_nvrtc_wheel_with_driver(true);
	char *log = test_format("%s/events.jsonl", wheel.root);
	const char *warn[] = { standin_preload(), "NVINTERPOSE_LOG=warn", NULL };
	struct test_run run = test_probe_without_cache(warn, test_format("call %s nvrtc_like_driver", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_driver: 0"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "libcuda.so.1 wanted by"), "%s", run.output);
	const char *info[] = { standin_preload(), "NVINTERPOSE_LOG=info", log_setting(log), NULL };
	run = test_probe_without_cache(info, test_format("call %s nvrtc_like_driver", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: info: libcuda.so.1 wanted by %s (dlopen by bare name): not found; looked in ",
							    wheel.nvrtc)), "%s", run.output);
	char *miss = test_find_event(log, "miss", "name", "libcuda.so.1");
	ck_assert_msg(miss, "%s", test_read_file(log));
	ck_assert_str_eq(test_event_value(miss, "family"), "cuda");
	/* The runtime never supplies a driver library: only the loader's places are listed. */
	ck_assert_msg(!test_contains(test_event_value(miss, "looked"), "caller_folder"), "%s", miss);
}
END_TEST

/* The same for a DT_NEEDED: a library linked with -z nodefaultlib needs libcuda.so.1, which its
   search (no RUNPATH, no system folder, the probe started without the cache) finds nowhere on any
   machine, whatever driver the machine has: a miss, at info. */
START_TEST(test_driver_needed_by_a_library_that_reaches_none_is_a_miss_at_info)
{
	char *root = test_tmpdir();
	char *cusparse = cusparse_needing_what_is_gone(root, "libcuda.so.1", "driver_value", "-Wl,-z,nodefaultlib");
	char *log = test_format("%s/events.jsonl", root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=info", log_setting(log), NULL };
	struct test_run run = test_probe_without_cache(env, test_format("open %s", cusparse));
	ck_assert_msg(test_contains(run.output, "error: libcuda.so.1: cannot open shared object file"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: info: libcuda.so.1 wanted by %s (DT_NEEDED): not found; looked in ",
							    cusparse)), "%s", run.output);
	char *miss = test_find_event(log, "miss", "name", "libcuda.so.1");
	ck_assert_msg(miss, "%s", test_read_file(log));
	ck_assert_str_eq(test_event_value(miss, "family"), "cuda");
	ck_assert_str_eq(test_event_value(miss, "reason"), "DT_NEEDED");
}
END_TEST

/* The places of a miss that is said only at warn (a name the program asks for itself, which the
   table does not say it needs) are gathered (a second walk, and the loader asked for the name
   without loading) only when someone will read them: otherwise the loader searches for the name
   once, as without the runtime. LD_DEBUG=libs shows every search the loader makes. */
START_TEST(test_places_are_looked_up_only_when_someone_reads_them)
{
	const char *searches = "find library=libnvrtc-builtins.so.77.1";
	const char *plain_env[] = { "LD_DEBUG=libs", NULL };
	const char *quiet[] = { standin_preload(), "LD_DEBUG=libs", NULL };
	const char *warn[] = { standin_preload(), "LD_DEBUG=libs", "NVINTERPOSE_LOG=warn", NULL };
	const char *args = "open libnvrtc-builtins.so.77.1";
	struct test_run plain = test_probe(plain_env, args), run = test_probe(quiet, args), shown = test_probe(warn, args);
	ck_assert_uint_eq(test_count(plain.output, searches), 1);
	ck_assert_msg(test_count(run.output, searches) == 1, "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "nvinterpose:"), "%s", run.output);
	ck_assert_msg(test_count(shown.output, searches) == 2 && test_contains(shown.output, "not found; looked in"), "%s", shown.output);
}
END_TEST

/* ---- the exit report -------------------------------------------------------------------------- */

/* Runs shell text with the runtime preloaded and extra environment entries. */
static struct test_run shell(const char *const *env, const char *text)
{
	const char *argv[] = { "/bin/sh", "-c", text, NULL };
	return test_run(argv, env, 120);
}

static long report_pid_in(const char *output)
{
	const char *at = strstr(output, "nvinterpose: report: process ");
	return at ? atol(at + strlen("nvinterpose: report: process ")) : -1;
}

START_TEST(test_report_lists_what_the_process_did)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *log = test_format("%s/events.jsonl", wheel.root);
	const char *env[] = { standin_preload(), log_setting(log), NULL };
	struct test_run run = shell(env, test_format("NVINTERPOSE_REPORT=$$ exec '%s' call '%s' nvrtc_like_compile; echo not reached",
						      test_setting("NVI_PROBE"), wheel.nvrtc));
	ck_assert_msg(run.status == 0 && test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "nvinterpose: report: process ") &&
			      test_contains(run.output, ", policy fallback: 2 origins registered, 1 redirects, 0 misses, 0 mixed origins\n"),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: report: origin nvrtc: %s (libnvrtc.so.77)\n", wheel.lib)), "%s", run.output);
	/* The builtins the runtime loaded are registered as soon as they are loaded. */
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: report: origin nvrtc-builtins: %s (libnvrtc-builtins.so.77.1)\n", wheel.lib)),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: report: redirect libnvrtc-builtins.so.77.1 for %s: %s\n",
							    wheel.nvrtc, wheel.builtins)), "%s", run.output);
	ck_assert_uint_eq(test_count(run.output, "nvinterpose: report:"), 4);
	char *summary = test_find_event(log, "summary", NULL, NULL);
	ck_assert_msg(summary, "%s", test_read_file(log));
	ck_assert_int_eq(atol(test_event_value(summary, "report_pid")), report_pid_in(run.output));
	ck_assert_str_eq(test_event_value(summary, "pid"), test_event_value(summary, "report_pid"));
	ck_assert_str_eq(test_event_value(summary, "origins"), "2");
	ck_assert_str_eq(test_event_value(summary, "redirects"), "1");
	ck_assert_str_eq(test_event_value(summary, "misses"), "0");
}
END_TEST

START_TEST(test_report_counts_a_miss)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = shell(env, test_format("NVINTERPOSE_REPORT=$$ exec '%s' call '%s' nvrtc_like_compile",
						      test_setting("NVI_PROBE"), wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, ": 1 origins registered, 0 redirects, 1 misses, 0 mixed origins\n"), "%s", run.output);
	/* The report's line names the places, as the warning does. */
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: report: miss libnvrtc-builtins.so.77.1 wanted by %s (dlopen by bare name): looked in ",
							    wheel.nvrtc)) &&
		      test_contains(run.output, test_format("%s (caller_folder)\n", wheel.lib)), "%s", run.output);
}
END_TEST

/* NVRTC's builtins are a required dependent (the table's row): with no NVINTERPOSE_LOG, their miss
   is a warning on stderr that names the name, the asker and the places tried, once for each
   (name, asker folder) however often it is asked for. */
START_TEST(test_required_miss_is_a_warning_by_default)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile call %s nvrtc_like_compile", wheel.nvrtc, wheel.nvrtc));
	ck_assert_uint_eq(test_count(run.output, "call nvrtc_like_compile: -1"), 2);
	ck_assert_msg(test_count(run.output, "nvinterpose: ") == 1, "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: warning: libnvrtc-builtins.so.77.1 wanted by %s (dlopen by bare name): not found; looked in ",
							    wheel.nvrtc)) &&
		      test_contains(run.output, test_format("%s (caller_folder)", wheel.lib)), "%s", run.output);
	/* NVINTERPOSE_LOG=error asks for errors only, and a required miss is said all the same. */
	const char *errors[] = { standin_preload(), "NVINTERPOSE_LOG=error", NULL };
	run = test_probe(errors, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_count(run.output, "nvinterpose: warning: libnvrtc-builtins.so.77.1 wanted by ") == 1, "%s", run.output);
}
END_TEST

/* 500 identical misses (NVRTC-like asking for its builtins) and one of the program's own: one
   warning and one "miss" event for each (name, asker folder), and the report counts them all,
   the repeated one "(500 times)". */
START_TEST(test_repeated_misses_are_reported_once_and_counted)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *log = test_format("%s/events.jsonl", wheel.root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=warn", log_setting(log), NULL };
	char *calls = test_format("'%s' open libnvrtc-builtins.so.77.1", test_setting("NVI_PROBE"));
	for (int i = 0; i < 500; i++)
		calls = test_format("%s call '%s' nvrtc_like_compile", calls, wheel.nvrtc);
	struct test_run run = shell(env, test_format("NVINTERPOSE_REPORT=$$ exec %s", calls));
	ck_assert_uint_eq(test_count(run.output, "call nvrtc_like_compile: -1"), 500);
	ck_assert_msg(test_count(run.output, "nvinterpose: warning: libnvrtc-builtins.so.77.1 wanted by ") == 2, "%s", run.output);
	ck_assert_msg(test_count(run.output, test_format("nvinterpose: warning: libnvrtc-builtins.so.77.1 wanted by %s ", wheel.nvrtc)) == 1,
		      "%s", run.output);
	char **lines;
	size_t count = test_event_lines(log, &lines), misses = 0;
	for (size_t i = 0; i < count; i++)
		misses += strcmp(test_event_value(lines[i], "event"), "miss") == 0;
	ck_assert_msg(misses == 2, "%zu miss events:\n%s", misses, test_read_file(log));
	ck_assert_msg(test_contains(run.output, ": 1 origins registered, 0 redirects, 501 misses, 0 mixed origins\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose: report: miss libnvrtc-builtins.so.77.1 wanted by %s (dlopen by bare name): looked in ",
							    wheel.nvrtc)) &&
		      test_contains(run.output, test_format("%s (caller_folder) (500 times)\n", wheel.lib)), "%s", run.output);
	ck_assert_uint_eq(test_count(run.output, "(500 times)"), 1);
}
END_TEST

/* The children that inherit the setting print nothing: each that counted something appends its
   report to the run's file, which the process the setting names prints after its own (with how
   many processes reported) and removes; every process writes its own summary event, naming the
   process the report is for. (bash, which ends with exit(); dash ends with _exit, which runs no
   exit handler and so prints no report: nvinterpose-run --report prints the run's reports
   itself.) */
START_TEST(test_report_is_printed_once_for_the_process_it_names)
{
	if (access("/bin/bash", X_OK) != 0) {
		printf("skipped: test_report_is_printed_once_for_the_process_it_names needs /bin/bash\n");
		return;
	}
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *log = test_format("%s/events.jsonl", wheel.root), *tmp = test_tmpdir();
	const char *env[] = { standin_preload(), log_setting(log), test_format("TMPDIR=%s", tmp), NULL };
	char *probe = test_format("'%s' call '%s' nvrtc_like_compile", test_setting("NVI_PROBE"), wheel.nvrtc);
	struct test_run run = shell(env, test_format("NVINTERPOSE_REPORT=$$ exec /bin/bash -c \"%s; %s; true\"", probe, probe));
	ck_assert_uint_eq(test_count(run.output, "call nvrtc_like_compile: 42"), 2);
	ck_assert_msg(test_contains(run.output, "nvinterpose: report: 3 processes reported\n") &&
			      test_count(run.output, "nvinterpose: report: process ") == 3 &&
			      test_count(run.output, ": 2 origins registered, 1 redirects, 0 misses, 0 mixed origins\n") == 2,
		      "%s", run.output);
	long pid = report_pid_in(run.output);
	char **lines;
	size_t count = test_event_lines(log, &lines), summaries = 0, own = 0;
	for (size_t i = 0; i < count; i++) {
		if (strcmp(test_event_value(lines[i], "event"), "summary") != 0)
			continue;
		summaries++;
		ck_assert_int_eq(atol(test_event_value(lines[i], "report_pid")), pid);
		own += atol(test_event_value(lines[i], "pid")) == pid;
	}
	ck_assert_msg(summaries == 3 && own == 1, "the shell and its two children: %zu summaries:\n%s", summaries, test_read_file(log));
	char **left;
	ck_assert_msg(test_regular_files(tmp, "nvinterpose-report-*", &left) == 0, "the run's file is removed: %s", left[0]);
}
END_TEST

/* nvi_report hands out what the report knows as data: with NVINTERPOSE_REPORT=keep the lines are
   kept and no process prints them. A miss carries its places and how many times it happened. */
START_TEST(test_report_api_gives_each_line_as_data_and_keep_prints_nothing)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	const char *env[] = { standin_preload(), "NVINTERPOSE_REPORT=keep", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile call %s nvrtc_like_compile report", wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "report: 2 lines, kept 1, left out 0; 1 origins, 0 supplied, 2 misses, 0 mixed origins\n"), "%s",
		      run.output);
	ck_assert_msg(test_contains(run.output, test_format("report origin: name=libnvrtc.so.77 family=nvrtc event=register asker=(null) path=%s "
							    "reason=(null) own=(null) places=(null) count=0 times=1 warning=0\n",
							    wheel.lib)),
		      "%s", run.output);
	char *miss = test_format("report miss: name=libnvrtc-builtins.so.77.1 family=nvrtc-builtins event=miss asker=%s path=(null) "
				 "reason=dlopen by bare name own=(null) places=",
				 wheel.nvrtc);
	ck_assert_msg(test_contains(run.output, miss), "%s", run.output);
	const char *places = strstr(run.output, miss) + strlen(miss);
	ck_assert_msg(strncmp(places, test_format("%s (", wheel.lib), strlen(wheel.lib) + 2) == 0 || test_contains(places, test_format("|%s (", wheel.lib)),
		      "NVRTC's own folder is among the places: %s", run.output);
	int count = atoi(strstr(places, " count=") + strlen(" count="));
	ck_assert_msg(count > 0 && test_count(places, "|") >= (size_t)count - 1, "%s", run.output);
	ck_assert_msg(test_contains(places, " times=2 warning=1\n"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "nvinterpose: report:"), "keep prints no report: %s", run.output);
}
END_TEST

START_TEST(test_report_api_supplied_line_and_counts_without_a_report)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *keep[] = { standin_preload(), "NVINTERPOSE_REPORT=keep", NULL };
	struct test_run run = test_probe(keep, test_format("call %s nvrtc_like_compile report", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, test_format("report supplied: name=libnvrtc-builtins.so.77.1 family=nvrtc-builtins event=redirect asker=%s "
							    "path=%s reason=",
							    wheel.nvrtc, wheel.builtins)),
		      "%s", run.output);
	/* Not asked for: figures only (NVRTC and its builtins registered), as the summary event has them. */
	const char *plain[] = { standin_preload(), NULL };
	struct test_run counted = test_probe(plain, test_format("call %s nvrtc_like_compile report", wheel.nvrtc));
	ck_assert_msg(test_contains(counted.output, "report: 0 lines, kept 0, left out 0; 2 origins, 1 supplied, 0 misses, 0 mixed origins\n"), "%s",
		      counted.output);
}
END_TEST

START_TEST(test_report_setting_that_is_no_pid_is_refused)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), "NVINTERPOSE_REPORT=yes", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "nvinterpose: error: NVINTERPOSE_REPORT='yes' is not a process id nor keep; no report"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "report:"), "%s", run.output);
	(void)no_env;
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("report");
	TCase *tc = tcase_create("report");
	tcase_add_test(tc, test_bare_name_miss_is_a_warning_with_every_place_looked);
	tcase_add_test(tc, test_dt_needed_miss_names_the_library_that_needs_it);
	tcase_add_test(tc, test_probe_for_a_more_exact_version_is_info);
	tcase_add_test(tc, test_optional_dependent_miss_is_info);
	tcase_add_test(tc, test_name_the_loader_finds_in_its_cache_is_no_miss);
	tcase_add_test(tc, test_driver_library_miss_is_info_not_a_warning);
	tcase_add_test(tc, test_driver_needed_by_a_library_that_reaches_none_is_a_miss_at_info);
	tcase_add_test(tc, test_places_are_looked_up_only_when_someone_reads_them);
	tcase_add_test(tc, test_report_lists_what_the_process_did);
	tcase_add_test(tc, test_report_counts_a_miss);
	tcase_add_test(tc, test_required_miss_is_a_warning_by_default);
	tcase_add_test(tc, test_repeated_misses_are_reported_once_and_counted);
	tcase_add_test(tc, test_report_is_printed_once_for_the_process_it_names);
	tcase_add_test(tc, test_report_setting_that_is_no_pid_is_refused);
	tcase_add_test(tc, test_report_api_gives_each_line_as_data_and_keep_prints_nothing);
	tcase_add_test(tc, test_report_api_supplied_line_and_counts_without_a_report);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
