/* The preload front with stand-in libraries: the NVRTC failure reproduced without the runtime and
   fixed with it (preloaded and attached late), registration, policies, the event log, and what the
   runtime must leave alone. */
#include "common.h"
#include "standins.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

START_TEST(test_nvrtc_like_fails_without_runtime)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	struct test_run run = test_probe(no_env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "failed to open libnvrtc-builtins.so.77.1"), "%s", run.output);
}
END_TEST

START_TEST(test_preloaded_runtime_finds_builtins_beside_nvrtc)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile maps libnvrtc-builtins", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
	ck_assert_msg(test_count(run.output, "maps: ") == 1, "one builtins mapped: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)), "%s", run.output);
	ck_assert_int_eq(run.status, 0);
}
END_TEST

START_TEST(test_late_attach_loads_builtins_for_loaded_nvrtc)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	struct test_run run = test_probe(no_env, test_format("open %s late %s maps libnvrtc-builtins call %s nvrtc_like_compile",
							    wheel.nvrtc, test_setting("NVI_RUNTIME"), wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "late: attached"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_late_attach_before_nvrtc_without_patching_needs_rescan)
{
	/* Attached (not preloaded) before NVRTC with NVINTERPOSE_PATCH=0: nothing binds to the hooks,
	   so NVRTC's load is unseen until nvi_rescan() repeats the attach scan. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { "NVINTERPOSE_PATCH=0", NULL };
	struct test_run run = test_probe(env, test_format("late %s open %s call %s nvrtc_like_compile rescan call %s nvrtc_like_compile patches",
							 test_setting("NVI_RUNTIME"), wheel.nvrtc, wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "patches: 0\n"), "nothing patched: %s", run.output);
	const char *first = strstr(run.output, "call nvrtc_like_compile: ");
	ck_assert_msg(first && strncmp(first, "call nvrtc_like_compile: -1", 27) == 0, "%s", run.output);
	ck_assert_msg(test_contains(run.output, "rescan: 1"), "%s", run.output);
	ck_assert_msg(test_contains(first + 1, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

/* A copy of the builtins cut short beside NVRTC (an interrupted install): under either policy the
   runtime skips it, and the program gets the plain loader's answer, never a signal. */
START_TEST(test_cut_builtins_beside_nvrtc_are_skipped_never_a_signal)
{
	for (int cut = 0; cut < STANDIN_CUTS; cut++)
		for (int coherent = 0; coherent < 2; coherent++) {
			struct standin_wheel wheel = standin_nvrtc_wheel(0);
			standin_cut_builtins(wheel.builtins, cut);
			const char *env[] = { standin_preload(), coherent ? "NVINTERPOSE_POLICY=coherent" : NULL, NULL };
			char *args = test_format("call %s nvrtc_like_compile", wheel.nvrtc);
			standin_check_like_plain(&(struct standin_runs){
				.label = test_format("%s, %s", standin_cut_name(cut), coherent ? "coherent" : "fallback"),
				.plain_env = no_env, .plain_args = args, .env = env, .args = args, .result = "call nvrtc_like_compile: " });
		}
}
END_TEST

/* NVRTC loaded with RTLD_DEEPBIND (cuda.pathfinder loads cuFFTMp so) looks its own dlopen up in
   its own scope first, where libc defines it, before the preloaded hooks. Its builtins are still
   found, registered and logged, bound now or lazily; libc's dynamic-symbol entries are what lead
   to the hooks, no GOT slot is written (another interposer's would stay its own). Without the
   patching (NVINTERPOSE_PATCH=0) the loads bypass the runtime, as a warning says. */
START_TEST(test_deep_bound_nvrtc_still_reaches_the_hooks)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *modes[] = { "now,deepbind", "lazy,deepbind" };
	for (size_t i = 0; i < 2; i++) {
		char *args = test_format("open:%s %s call %s nvrtc_like_compile patches", modes[i], wheel.nvrtc, wheel.nvrtc);
		struct test_run plain = test_probe(no_env, args);
		ck_assert_msg(test_contains(plain.output, "call nvrtc_like_compile: -1"), "%s", plain.output);
		char *log = test_format("%s/events-%zu.jsonl", wheel.root, i);
		const char *env[] = { standin_preload(), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
		struct test_run run = test_probe(env, args);
		ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s: %s", modes[i], run.output);
		char *redirect = test_find_event(log, "redirect", "name", "libnvrtc-builtins.so.77.1");
		ck_assert_msg(redirect && strcmp(test_event_value(redirect, "caller"), wheel.nvrtc) == 0, "%s", test_read_file(log));
		char *registered = test_find_event(log, "register", "path", wheel.nvrtc);
		ck_assert_msg(registered && strcmp(test_event_value(registered, "reason"), "loaded by path") == 0, "the request was seen: %s",
			      test_read_file(log));
		ck_assert_msg(test_contains(run.output, "dlopen dynsym patched") && !test_contains(run.output, " got "), "%s", run.output);
	}
	const char *off[] = { standin_preload(), "NVINTERPOSE_PATCH=0", "NVINTERPOSE_LOG=warn", NULL };
	struct test_run run = test_probe(off, test_format("open:now,deepbind %s call %s nvrtc_like_compile", wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("%s is loaded with RTLD_DEEPBIND and libc is left alone (NVINTERPOSE_PATCH=0)", wheel.nvrtc)),
		      "%s", run.output);
}
END_TEST

/* NVRTC's builtins in two wheel siblings, nvidia/Zeta/lib and nvidia/alpha/lib: the runtime takes
   the first in byte order (Zeta), also in a program that calls setlocale(LC_ALL, "") under a locale
   that collates "alpha" first. The inspector predicts the same (tests/../inspect/tests). */
START_TEST(test_wheel_sibling_choice_does_not_follow_the_locale)
{
	char *locales = standin_collating_locales();
	if (!locales)
		return;
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *nvidia = test_format("%s/site-packages/nvidia", wheel.root);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", test_mkdirs(test_format("%s/Zeta/lib", nvidia))), 1, NULL);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", test_mkdirs(test_format("%s/alpha/lib", nvidia))), 2, NULL);
	const char *languages[] = { "C", "en_US.UTF-8" };
	for (size_t i = 0; i < 2; i++) {
		const char *env[] = { standin_preload(), test_format("LOCPATH=%s", locales), test_format("LC_ALL=%s", languages[i]), NULL };
		struct test_run run = test_probe(env, test_format("setlocale call %s nvrtc_like_compile", wheel.nvrtc));
		ck_assert_msg(test_contains(run.output, test_format("setlocale: %s\n", languages[i])), "%s", run.output);
		ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 1\n"), "%s: Zeta's: %s", languages[i], run.output);
	}
}
END_TEST

START_TEST(test_load_by_path_registers_its_folder)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("origin nvrtc open %s origin nvrtc origins", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "origin nvrtc: No such file or directory"), "before the load: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin nvrtc: %s\n", wheel.lib)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origins: nvrtc %s\n", wheel.lib)), "%s", run.output);
}
END_TEST

START_TEST(test_origin_is_the_loaded_path_not_realpath)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *link = test_format("%s/linked", wheel.root);
	ck_assert_int_eq(symlink(wheel.lib, link), 0);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open %s/libnvrtc.so.77 origin nvrtc", link));
	ck_assert_msg(test_contains(run.output, test_format("origin nvrtc: %s\n", link)), "%s", run.output);
}
END_TEST

/* NVRTC loaded by a relative name, then the working folder changes. glibc fixed the object's
   $ORIGIN against the working folder of its load; the runtime must register that folder (it sees the
   load) or, attached only after it, none at all (and say why): never one made from the new one. */
START_TEST(test_origin_of_a_relative_name_is_fixed_at_its_load)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *above = test_format("%s/site-packages/nvidia/cuda_nvrtc", wheel.root);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("cd %s open lib/libnvrtc.so.77 cd / origins", above));
	ck_assert_msg(test_contains(run.output, test_format("origins: nvrtc %s/lib\n", above)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "origins: nvrtc /lib\n"), "%s", run.output);
	const char *late_env[] = { "NVINTERPOSE_LOG=warn", NULL };
	run = test_probe(late_env, test_format("cd %s open lib/libnvrtc.so.77 cd / late %s origins", above, test_setting("NVI_RUNTIME")));
	ck_assert_msg(test_contains(run.output, "late: attached"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "origins: nvrtc"), "no folder is known: %s", run.output);
	ck_assert_msg(test_contains(run.output, "loaded as lib/libnvrtc.so.77 (a relative name) before the runtime saw it"), "%s", run.output);
}
END_TEST

/* The same load with RTLD_DEEPBIND: the runtime registers the folder before the loader has the call,
   so no later scan says the runtime never saw it. */
START_TEST(test_deep_bound_relative_name_is_seen_at_its_load)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *above = test_format("%s/site-packages/nvidia/cuda_nvrtc", wheel.root);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=warn", NULL };
	struct test_run run = test_probe(env, test_format("cd %s open:deepbind lib/libnvrtc.so.77 cd / open %s origins", above, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, test_format("origins: nvrtc %s/lib\n", above)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "(a relative name) before the runtime saw it"), "%s", run.output);
}
END_TEST

START_TEST(test_library_past_the_readers_bounds_is_still_registered)
{
	/* A 17 KB RPATH is past the runtime's reader of dynamic sections; the library loads, and its
	   folder is registered at the load all the same (the header is enough for that). */
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *rpath = test_format("%s", "/nonexistent");
	while (strlen(rpath) < 17000)
		rpath = test_format("%s:/nonexistent/%zu", rpath, strlen(rpath));
	char *cublas = test_format("%s/libcublas.so.77", wheel.lib);
	test_build_library("value.c", cublas, "libcublas.so.77", test_format("-DVALUE_SYMBOL=cublas_value -Wl,--disable-new-dtags,-rpath,'%s'", rpath));
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open %s close %s origin cublas", cublas, cublas));
	ck_assert_msg(test_contains(run.output, test_format("open %s: %s\n", cublas, cublas)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin cublas: %s\n", wheel.lib)), "%s", run.output);
}
END_TEST

START_TEST(test_registered_origin_survives_dlclose)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open %s close %s maps libnvrtc.so origin nvrtc", wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "close"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "maps: "), "unloaded: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin nvrtc: %s\n", wheel.lib)), "%s", run.output);
}
END_TEST

START_TEST(test_event_log_has_one_json_line_per_event)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *log = test_format("%s/events.jsonl", wheel.root);
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
	char *events = test_read_file(log);
	ck_assert_ptr_nonnull(events);
	/* register: the library's file and the folder registered, the program that loaded it */
	ck_assert_msg(test_contains(events, test_format("\"event\":\"register\",\"name\":\"libnvrtc.so.77\",\"path\":\"%s\",\"folder\":\"%s\",\"caller\":\"%s\",\"family\":\"nvrtc\",\"policy\":\"fallback\",\"reason\":\"loaded by path\"}",
							wheel.nvrtc, wheel.lib, test_setting("NVI_PROBE"))), "%s", events);
	ck_assert_msg(test_contains(events, test_format("\"event\":\"redirect\",\"name\":\"libnvrtc-builtins.so.77.1\",\"path\":\"%s\",\"caller\":\"%s\",\"family\":\"nvrtc-builtins\",\"policy\":\"fallback\",\"reason\":\"caller's folder\"}",
							wheel.builtins, wheel.nvrtc)), "%s", events);
	/* The builtins the runtime loaded are registered right after, naming NVRTC, for which it loaded
	   them, and saying so: caller is null only where the request was not seen (docs/event-log.md). */
	ck_assert_msg(test_contains(events, test_format("\"event\":\"register\",\"name\":\"libnvrtc-builtins.so.77.1\",\"path\":\"%s\",\"folder\":\"%s\",\"caller\":\"%s\",\"family\":\"nvrtc-builtins\",\"policy\":\"fallback\",\"reason\":\"loaded by the runtime for its caller\"}",
							wheel.builtins, wheel.lib, wheel.nvrtc)), "%s", events);
	char **lines;
	ck_assert_uint_ge(test_event_lines(log, &lines), 2); /* every line against the log room's table */
}
END_TEST

/* The settings are those the process started with, whenever the runtime first needs them: a
   program that changes its environment before its first NVIDIA load changes nothing. */
START_TEST(test_settings_are_those_of_the_process_start)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("setenv NVINTERPOSE_DISABLE=1 call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
	const char *off[] = { standin_preload(), "NVINTERPOSE_POLICY=off", NULL };
	run = test_probe(off, test_format("setenv NVINTERPOSE_POLICY= call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
}
END_TEST

/* A relative NVINTERPOSE_LOG_FILE names a file in the folder the process started in, also when it
   changes folder before its first NVIDIA load. */
START_TEST(test_relative_log_file_is_in_the_start_folder)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *start = test_format("%s/start", wheel.root), *later = test_format("%s/later", wheel.root);
	test_mkdirs(start);
	test_mkdirs(later);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG_FILE=events.jsonl", NULL };
	const char *argv[] = { "/bin/sh", "-c", test_format("cd '%s' && exec '%s' cd '%s' open '%s'", start, test_setting("NVI_PROBE"), later, wheel.nvrtc), NULL };
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "cd "), "%s", run.output);
	char *events = test_read_file(test_format("%s/events.jsonl", start));
	ck_assert_msg(events && test_contains(events, "\"event\":\"register\""), "no event in the start folder: %s", run.output);
	ck_assert_int_ne(access(test_format("%s/events.jsonl", later), F_OK), 0);
}
END_TEST

/* Preloaded into a process that loads no NVIDIA library by dlopen and calls no API, the runtime
   starts nothing: an NVIDIA library it has from start-up is registered only when something needs
   the registry (here the API), or at exit when a report or an event log is asked for. */
START_TEST(test_runtime_starts_at_the_first_need)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *preload = test_format("LD_PRELOAD=%s:%s", test_setting("NVI_RUNTIME"), wheel.nvrtc);
	const char *env[] = { preload, "NVINTERPOSE_LOG=info", NULL };
	struct test_run run = test_probe(env, "dlerror");
	ck_assert_msg(!test_contains(run.output, "nvrtc loaded from"), "started with nothing asked: %s", run.output);
	run = test_probe(env, "dlerror origin nvrtc");
	ck_assert_msg(test_contains(run.output, test_format("nvrtc loaded from %s: registered", wheel.lib)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin nvrtc: %s", wheel.lib)), "%s", run.output);
	char *log = test_format("%s/events.jsonl", wheel.root);
	const char *logged[] = { preload, test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	run = test_probe(logged, "dlerror");
	char *events = test_read_file(log);
	ck_assert_msg(events && test_contains(events, test_format("\"path\":\"%s\"", wheel.nvrtc)), "registered at exit: %s", run.output);
}
END_TEST

/* The runtime needs no libdl.so.2 of its own. Before glibc 2.34 the loader's functions are libdl's,
   which may arrive late and outside the global scope (here with a gconv module libc loads for
   iconv_open, in a program that never needed libdl): the hooks find them there, and the NVIDIA
   library the module loads finds its builtins. */
START_TEST(test_libdl_that_arrives_late_is_found)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *modules = test_format("%s/gconv", wheel.root);
	test_mkdirs(modules);
	test_write_file(test_format("%s/gconv-modules", modules),
			"module\tINTERNAL\tNVILATE//\tlate_libdl_module\t1\nmodule\tNVILATE//\tINTERNAL\tlate_libdl_module\t1\n");
	test_build_library("late_libdl_module.c", test_format("%s/late_libdl_module.so", modules), "", "");
	char *program = test_build_program("late_libdl_program.c", wheel.root, "");
	const char *argv[] = { "/bin/sh", "-c", test_format("readelf -d '%s' | grep -c 'libdl.so' ; exec '%s'", program, program), NULL };
	const char *gconv = test_format("GCONV_PATH=%s", modules), *nvrtc = test_format("NVI_LATE_NVRTC=%s", wheel.nvrtc);
	const char *plain[] = { gconv, nvrtc, NULL };
	struct test_run run = test_run(argv, plain, 60);
	ck_assert_msg(strncmp(run.output, "0\n", 2) == 0 && test_contains(run.output, "iconv_open: ok"),
		      "the program needs no libdl and opens the conversion: %s", run.output);
	ck_assert_msg(test_contains(run.output, "late module: nvrtc_like_compile: -1"), "%s", run.output);
	const char *preloaded[] = { standin_preload(), gconv, nvrtc, NULL };
	run = test_run(argv, preloaded, 60);
	ck_assert_msg(test_contains(run.output, "late module: nvrtc_like_compile: 42"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "iconv_open: ok") && run.status == 0, "%s", run.output);
}
END_TEST

START_TEST(test_policy_off_records_but_does_not_redirect)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), "NVINTERPOSE_POLICY=off", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile origin nvrtc", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin nvrtc: %s\n", wheel.lib)), "%s", run.output);
}
END_TEST

START_TEST(test_disable_leaves_everything_to_the_loader)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { standin_preload(), "NVINTERPOSE_DISABLE=1", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile origin nvrtc", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "origin nvrtc: No such file or directory"), "%s", run.output);
}
END_TEST

START_TEST(test_driver_library_is_never_redirected)
{
	standin_check_driver_is_left_to_the_loader(NULL);
}
END_TEST

START_TEST(test_cudnn_like_runpath_is_left_to_the_loader)
{
	char *root = test_tmpdir();
	char *lib = test_format("%s/site-packages/nvidia/cudnn/lib", root);
	test_mkdirs(lib);
	char *parent = test_format("%s/libcudnn.so.77", lib);
	test_build_library("cudnn_like.c", parent, "libcudnn.so.77", "-Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
	test_build_library("value.c", test_format("%s/libcudnn_ops.so.77", lib), "libcudnn_ops.so.77", "-DVALUE_SYMBOL=ops_value -DVALUE=9");
	char *log = test_format("%s/events.jsonl", root);
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	struct test_run plain = test_probe(no_env, test_format("call %s cudnn_like_load", parent));
	struct test_run run = test_probe(env, test_format("call %s cudnn_like_load origin cudnn_ops", parent));
	ck_assert_msg(test_contains(plain.output, "call cudnn_like_load: 9"), "%s", plain.output);
	ck_assert_msg(test_contains(run.output, "call cudnn_like_load: 9"), "%s", run.output);
	/* The loader loaded the sub-library itself: it is registered at the runtime's next contact. */
	ck_assert_msg(test_contains(run.output, test_format("origin cudnn_ops: %s\n", lib)), "%s", run.output);
	char *events = test_read_file(log);
	ck_assert_msg(!test_contains(events, "\"redirect\""), "the loader found it through RUNPATH: %s", events);
	/* Registered at the next sync, with the library that asked for it as its caller. */
	char *ops = test_find_event(log, "register", "family", "cudnn_ops");
	ck_assert_msg(ops, "the sub-library is registered: %s", events);
	ck_assert_str_eq(test_event_value(ops, "caller"), parent);
	ck_assert_str_eq(test_event_value(ops, "path"), test_format("%s/libcudnn_ops.so.77", lib));
	ck_assert_str_eq(test_event_value(ops, "folder"), lib);
}
END_TEST

START_TEST(test_hash_renamed_builtins_are_registered)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *renamed = test_format("%s/libnvrtc-builtins-2dc4bf68.so.77.1", wheel.lib);
	standin_builtins(renamed, 42, NULL);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open %s origin nvrtc-builtins", renamed));
	ck_assert_msg(test_contains(run.output, test_format("origin nvrtc-builtins: %s\n", wheel.lib)), "%s", run.output);
}
END_TEST

START_TEST(test_wheel_sibling_supplies_the_dependent)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *sibling = test_format("%s/site-packages/nvidia/cuda_nvrtc_builtins/lib", wheel.root);
	test_mkdirs(sibling);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", sibling), 43, NULL);
	const char *env[] = { standin_preload(), NULL };
	struct test_run plain = test_probe(no_env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(plain.output, "call nvrtc_like_compile: -1"), "%s", plain.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 43"), "%s", run.output);
}
END_TEST

START_TEST(test_nvinterpose_path_supplies_the_dependent)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *extra = test_format("%s/extra", wheel.root);
	test_mkdirs(extra);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", extra), 44, NULL);
	const char *env[] = { standin_preload(), test_format("NVINTERPOSE_PATH=%s", extra), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 44"), "%s", run.output);
}
END_TEST

START_TEST(test_loader_own_search_wins_over_origins)
{
	/* fallback: LD_LIBRARY_PATH holds a builtins, the origin another: the loader's choice stands. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *system = test_format("%s/system", wheel.root);
	test_mkdirs(system);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", system), 7, NULL);
	const char *plain_env[] = { test_format("LD_LIBRARY_PATH=%s", system), NULL };
	const char *env[] = { standin_preload(), plain_env[0], NULL };
	struct test_run plain = test_probe(plain_env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(plain.output, "call nvrtc_like_compile: 7"), "%s", plain.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 7"), "%s", run.output);
}
END_TEST

START_TEST(test_callers_runpath_wins_over_its_own_folder)
{
	/* fallback: NVRTC's RUNPATH names a folder with a builtins (7), its own folder holds another
	   (42). Only the loader's search for the caller knows the RUNPATH's copy: the runtime must ask
	   it first, and leave the call to the loader. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *system = test_format("%s/system", wheel.root);
	test_mkdirs(system);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", system), 7, NULL);
	test_build_library("nvrtc_like.c", wheel.nvrtc, "libnvrtc.so.77", test_format("-ldl -Wl,--enable-new-dtags,-rpath,'%s'", system));
	const char *env[] = { standin_preload(), NULL };
	struct test_run plain = test_probe(no_env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(plain.output, "call nvrtc_like_compile: 7"), "%s", plain.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 7"), "%s", run.output);
}
END_TEST

START_TEST(test_already_loaded_builtins_are_reused)
{
	/* First loaded wins: a builtins loaded by path from elsewhere is the one NVRTC gets. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *elsewhere = test_format("%s/elsewhere", wheel.root);
	test_mkdirs(elsewhere);
	char *other = test_format("%s/libnvrtc-builtins.so.77.1", elsewhere);
	standin_builtins(other, 8, NULL);
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("open %s call %s nvrtc_like_compile maps libnvrtc-builtins", other, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 8"), "%s", run.output);
	ck_assert_msg(test_count(run.output, "maps: ") == 1, "%s", run.output);
}
END_TEST

START_TEST(test_a_dependent_unloaded_and_asked_for_again_is_found_again)
{
	/* The builtins come from the origin, are unloaded, and asked for again: the index must not go on
	   believing them loaded (and leave the call to a loader that cannot find them). */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *other = test_format("%s/libcublas.so.77", wheel.root);
	test_build_library("value.c", other, "libcublas.so.77", "-DVALUE_SYMBOL=cublas_value");
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile open %s call %s nvrtc_like_release maps libnvrtc-builtins call %s nvrtc_like_compile",
							 wheel.nvrtc, other, wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_release: 0"), "%s", run.output);
	const char *first = strstr(run.output, "call nvrtc_like_compile: 42");
	ck_assert_msg(first && !strstr(run.output, "maps: "), "the builtins were unloaded: %s", run.output);
	ck_assert_msg(strstr(first + 1, "call nvrtc_like_compile: 42"), "found again: %s", run.output);
}
END_TEST

START_TEST(test_long_ld_library_path_still_gets_help)
{
	/* 400 folders on LD_LIBRARY_PATH: the caller's search list is long, not a reason to give up. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *path = test_format("%s", "");
	for (int i = 0; i < 400; i++)
		path = test_format("%s%s%s/missing-folder-%03d", path, i ? ":" : "", wheel.root, i);
	const char *env[] = { standin_preload(), test_format("LD_LIBRARY_PATH=%s", path), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_api_client_linked_directly_gets_the_hooks)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *argv[] = { test_setting("NVI_API_CLIENT"), wheel.nvrtc, NULL };
	struct test_run run = test_run(argv, no_env, 60);
	ck_assert_msg(test_contains(run.output, "compile: 42"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin: %s\n", wheel.lib)), "%s", run.output);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("preload");
	TCase *tc = tcase_create("preload");
	tcase_add_test(tc, test_nvrtc_like_fails_without_runtime);
	tcase_add_test(tc, test_preloaded_runtime_finds_builtins_beside_nvrtc);
	tcase_add_test(tc, test_late_attach_loads_builtins_for_loaded_nvrtc);
	tcase_add_test(tc, test_late_attach_before_nvrtc_without_patching_needs_rescan);
	tcase_add_test(tc, test_cut_builtins_beside_nvrtc_are_skipped_never_a_signal);
	tcase_add_test(tc, test_deep_bound_nvrtc_still_reaches_the_hooks);
	tcase_add_test(tc, test_wheel_sibling_choice_does_not_follow_the_locale);
	tcase_add_test(tc, test_load_by_path_registers_its_folder);
	tcase_add_test(tc, test_origin_is_the_loaded_path_not_realpath);
	tcase_add_test(tc, test_origin_of_a_relative_name_is_fixed_at_its_load);
	tcase_add_test(tc, test_deep_bound_relative_name_is_seen_at_its_load);
	tcase_add_test(tc, test_library_past_the_readers_bounds_is_still_registered);
	tcase_add_test(tc, test_registered_origin_survives_dlclose);
	tcase_add_test(tc, test_event_log_has_one_json_line_per_event);
	tcase_add_test(tc, test_settings_are_those_of_the_process_start);
	tcase_add_test(tc, test_relative_log_file_is_in_the_start_folder);
	tcase_add_test(tc, test_runtime_starts_at_the_first_need);
	tcase_add_test(tc, test_libdl_that_arrives_late_is_found);
	tcase_add_test(tc, test_policy_off_records_but_does_not_redirect);
	tcase_add_test(tc, test_disable_leaves_everything_to_the_loader);
	tcase_add_test(tc, test_driver_library_is_never_redirected);
	tcase_add_test(tc, test_cudnn_like_runpath_is_left_to_the_loader);
	tcase_add_test(tc, test_hash_renamed_builtins_are_registered);
	tcase_add_test(tc, test_wheel_sibling_supplies_the_dependent);
	tcase_add_test(tc, test_nvinterpose_path_supplies_the_dependent);
	tcase_add_test(tc, test_loader_own_search_wins_over_origins);
	tcase_add_test(tc, test_callers_runpath_wins_over_its_own_folder);
	tcase_add_test(tc, test_already_loaded_builtins_are_reused);
	tcase_add_test(tc, test_a_dependent_unloaded_and_asked_for_again_is_found_again);
	tcase_add_test(tc, test_long_ld_library_path_still_gets_help);
	tcase_add_test(tc, test_api_client_linked_directly_gets_the_hooks);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
