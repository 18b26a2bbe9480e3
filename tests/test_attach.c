/* Attach at any time: the runtime dlopen'ed into a running process (probe "late") points the
   process's dlopen bindings at its hooks, so that every later load reaches it as if it had been
   preloaded. What it patches, what it leaves alone and what it cannot catch. Stand-ins use
   versions no real package ships (.so.77). */
#define _GNU_SOURCE
#include "common.h"
#include "standins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

static const char *runtime(void) { return test_setting("NVI_RUNTIME"); }

/* A folder holding the builtins stand-in (value), and the NVINTERPOSE_PATH entry naming it: a
   bare-name load that only the runtime can satisfy, for any caller. */
static char *builtins_only_on_nvinterpose_path(int value)
{
	char *folder = test_format("%s/extra", test_tmpdir());
	test_mkdirs(folder);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", folder), value, NULL);
	return test_format("NVINTERPOSE_PATH=%s", folder);
}

/* The line of one patch entry as the probe prints it (probe "patches"). */
static char *patch_line(const char *object, const char *symbol, const char *place, const char *state)
{
	return test_format("patch: %s %s %s %s ", object, symbol, place, state);
}

/* The line starting at line ends with suffix. */
static bool ends_line_with(const char *line, const char *suffix)
{
	size_t length = strcspn(line, "\n"), n = strlen(suffix);
	return length >= n && strncmp(line + length - n, suffix, n) == 0;
}

START_TEST(test_attach_before_nvrtc_compiles_with_no_rescan)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	struct test_run plain = test_probe(no_env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(plain.output, "call nvrtc_like_compile: -1"), "the set-up fails without: %s", plain.output);
	struct test_run run = test_probe(no_env, test_format("bound late %s bound patches call %s nvrtc_like_compile maps libnvrtc-builtins",
							    runtime(), wheel.nvrtc));
	/* Before the attach, the C library's dlopen: libc.so.6's, or libdl.so.2's before glibc 2.34. */
	const char *before = strstr(run.output, "bound: ");
	ck_assert_msg(before && (ends_line_with(before, "/libc.so.6") || ends_line_with(before, "/libdl.so.2")), "libc's before: %s",
		      run.output);
	ck_assert_msg(test_contains(run.output, test_format("bound: %s\n", runtime())), "the hook after: %s", run.output);
	ck_assert_msg(test_contains(run.output, patch_line("(main program)", "dlopen", "got", "patched")), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "dlopen dynsym patched"), "libc's symbols: %s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("maps: %s\n", wheel.builtins)), "%s", run.output);
}
END_TEST

/* Builtins cut short beside NVRTC: attached before NVRTC (its dlopen reaches the hook) or after it
   (the attach scan looks for its builtins), under either policy, the runtime skips the copy and
   the program gets the plain loader's answer, never a signal. */
START_TEST(test_cut_builtins_are_skipped_attached_before_or_after_nvrtc)
{
	for (int cut = 0; cut < STANDIN_CUTS; cut++)
		for (int coherent = 0; coherent < 2; coherent++) {
			struct standin_wheel wheel = standin_nvrtc_wheel(0);
			standin_cut_builtins(wheel.builtins, cut);
			const char *env[] = { coherent ? "NVINTERPOSE_POLICY=coherent" : NULL, NULL };
			char *call = test_format("call %s nvrtc_like_compile", wheel.nvrtc);
			char *label = test_format("%s, %s", standin_cut_name(cut), coherent ? "coherent" : "fallback");
			struct standin_runs runs = { .label = test_format("%s, attached before", label), .plain_env = no_env, .plain_args = call,
						     .env = env, .args = test_format("late %s %s", runtime(), call),
						     .result = "call nvrtc_like_compile: " };
			standin_check_like_plain(&runs);
			runs.label = test_format("%s, attached after", label);
			runs.args = test_format("open %s late %s %s", wheel.nvrtc, runtime(), call);
			standin_check_like_plain(&runs);
		}
}
END_TEST

START_TEST(test_lazy_binding_and_dlsym_after_attach_find_the_hook)
{
	/* Loaded lazily after the attach: NVRTC's first dlopen binds through libc's patched symbol. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	struct test_run run = test_probe(no_env, test_format("late %s dlsym dlopen dlsym dlmopen open:lazy %s call %s nvrtc_like_compile",
							    runtime(), wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, test_format("dlsym dlopen: %s\n", runtime())), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("dlsym dlmopen: %s\n", runtime())), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_slot_of_another_interposer_is_left_alone_and_reported)
{
	/* A dlopen wrapper preloaded before the runtime: the program binds to it. Its slot is left
	   alone (the wrapper keeps every call) and the list and the event log say so. */
	char *root = test_tmpdir();
	char *wrapper = test_format("%s/libwrap.so.77", root), *log = test_format("%s/events.jsonl", root);
	test_build_library("wrapper.c", wrapper, "libwrap.so.77", "");
	const char *env[] = { test_format("LD_PRELOAD=%s", wrapper), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	struct test_run run = test_probe(env, test_format("late %s bound patches call %s wrapper_calls", runtime(), wrapper));
	ck_assert_msg(test_contains(run.output, test_format("bound: %s\n", wrapper)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("%s1 %s\n", patch_line("(main program)", "dlopen", "got", "foreign"), wrapper)),
		      "%s", run.output);
	ck_assert_msg(!test_contains(run.output, patch_line("(main program)", "dlopen", "got", "patched")), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call wrapper_calls: 2"), "the wrapper still sees the calls: %s", run.output);
	char *events = test_read_file(log);
	ck_assert_msg(test_contains(events, "\"event\":\"patch-skipped\",\"name\":\"dlopen\",\"path\":\"(main program)\",\"policy\":"), "%s", events);
	ck_assert_msg(test_contains(events, test_format("another function, in %s", wrapper)), "the reason names the other interposer: %s", events);
}
END_TEST

START_TEST(test_second_copy_attached_defers_to_the_first)
{
	/* Two copies attached one after the other: the second patches nothing (the program's slot
	   stays the first copy's hook) and its API answers with the first copy's list. */
	struct test_run run = test_probe(no_env, test_format("late %s late %s bound dlsym dlopen patches", runtime(), test_setting("NVI_RUNTIME_O0")));
	ck_assert_msg(test_contains(run.output, test_format("bound: %s\n", runtime())), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("dlsym dlopen: %s\n", runtime())), "%s", run.output);
	ck_assert_msg(test_contains(run.output, patch_line("(main program)", "dlopen", "got", "patched")), "forwarded: %s", run.output);
	ck_assert_msg(test_count(run.output, patch_line("(main program)", "dlopen", "got", "patched")) == 1, "%s", run.output);
}
END_TEST

START_TEST(test_copy_attached_to_a_process_with_the_runtime_preloaded_uses_that_one)
{
	/* A folder registered through the second copy is the preloaded runtime's. */
	char *folder = test_tmpdir();
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = test_probe(env, test_format("late %s bound register nvrtc %s patches use %s origin nvrtc", test_setting("NVI_RUNTIME_O0"),
							 folder, runtime()));
	ck_assert_msg(test_contains(run.output, test_format("bound: %s\n", runtime())), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "patches: 0\n"), "nothing patched: %s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin nvrtc: %s\n", folder)), "%s", run.output);
}
END_TEST

/* A host library (tests/fixtures/host.c) asking for the builtins stand-in by bare name, full RELRO
   and BIND_NOW, with a RUNPATH when runpath is not NULL. */
static char *relro_host(const char *folder, const char *runpath)
{
	char *host = test_format("%s/libhost.so.77", folder);
	test_build_library("host.c", host, "libhost.so.77",
			   test_format("-Wl,-z,relro,-z,now%s%s", runpath ? ",--enable-new-dtags,-rpath," : "",
				       runpath ? runpath : ""));
	const char *argv[] = { "/bin/sh", "-c", test_format("readelf -dW '%s' | grep -E 'BIND_NOW|FLAGS.*NOW' && readelf -lW '%s' | grep GNU_RELRO", host, host), NULL };
	struct test_run check = test_run(argv, no_env, 60);
	ck_assert_msg(check.status == 0, "not full RELRO and BIND_NOW: %s", check.output);
	return host;
}

START_TEST(test_full_relro_bind_now_library_loaded_before_attach_keeps_its_runpath)
{
	/* Its plugin is only in its RUNPATH folder; another copy on NVINTERPOSE_PATH must not win. Its
	   read-only GOT is patched and read-only again afterwards. */
	char *root = test_tmpdir();
	test_mkdirs(test_format("%s/sub", root));
	standin_builtins(test_format("%s/sub/libnvrtc-builtins.so.77.1", root), 5, NULL);
	char *host = relro_host(root, "'$ORIGIN/sub'");
	const char *env[] = { builtins_only_on_nvinterpose_path(42), NULL };
	struct test_run run = test_probe(env, test_format("open %s mapsperm libhost late %s mapsperm libhost patches call %s host_load_plugin", host,
							 runtime(), host));
	ck_assert_msg(test_contains(run.output, test_format("%s1\n", patch_line(host, "dlopen", "got", "patched"))), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call host_load_plugin: 5"), "%s", run.output);
	/* The same protections before and after. */
	const char *before = strstr(run.output, "mapsperm: "), *attached = strstr(run.output, "late: attached\n");
	ck_assert_ptr_nonnull(before);
	ck_assert_ptr_nonnull(attached);
	const char *after = attached + strlen("late: attached\n");
	size_t length = (size_t)(attached - before);
	ck_assert_msg(length > 0 && strncmp(before, after, length) == 0, "protections changed:\n%s", run.output);
	ck_assert_msg(test_count(run.output, "mapsperm: r--p") >= 4, "a read-only RELRO page each time: %s", run.output);
}
END_TEST

/* library's symbol asks by bare name for the builtins that only NVINTERPOSE_PATH holds: -1 without
   the runtime; 42 with it attached between the probe commands before and after. */
static void check_only_the_hook_finds_it(const char *library, const char *symbol, const char *before, const char *after)
{
	const char *env[] = { builtins_only_on_nvinterpose_path(42), NULL };
	struct test_run plain = test_probe(env, test_format("call %s %s", library, symbol));
	ck_assert_msg(test_contains(plain.output, test_format("call %s: -1", symbol)), "the set-up fails without: %s", plain.output);
	struct test_run run = test_probe(env, test_format("%s late %s %s call %s %s", before, runtime(), after, library, symbol));
	ck_assert_msg(test_contains(run.output, test_format("call %s: 42", symbol)), "%s", run.output);
}

START_TEST(test_full_relro_bind_now_library_loaded_before_attach_reaches_the_hook)
{
	char *host = relro_host(test_tmpdir(), NULL);
	check_only_the_hook_finds_it(host, "host_load_plugin", test_format("open %s", host), "");
}
END_TEST

/* tests/fixtures/ctor_loader.c as libctor.so.77 in folder, with a RUNPATH when runpath is set. */
static char *ctor_library(const char *folder, const char *runpath)
{
	char *library = test_format("%s/libctor.so.77", folder);
	test_build_library("ctor_loader.c", library, "libctor.so.77", runpath ? test_format("-Wl,--enable-new-dtags,-rpath,%s", runpath) : "");
	return library;
}

START_TEST(test_constructor_of_a_library_loaded_after_attach_keeps_its_runpath)
{
	/* Its constructor's bare-name dlopen reaches the hook and leaves with the constructor's frame:
	   the RUNPATH copy (7), not the one on NVINTERPOSE_PATH the runtime would supply (42). */
	char *root = test_tmpdir();
	test_mkdirs(test_format("%s/sub", root));
	standin_builtins(test_format("%s/sub/libnvrtc-builtins.so.77.1", root), 7, NULL);
	char *library = ctor_library(root, "'$ORIGIN/sub'");
	const char *env[] = { builtins_only_on_nvinterpose_path(42), NULL };
	struct test_run run = test_probe(env, test_format("late %s open:lazy %s call %s ctor_value", runtime(), library, library));
	ck_assert_msg(test_contains(run.output, "call ctor_value: 7"), "%s", run.output);
}
END_TEST

START_TEST(test_constructor_of_a_library_loaded_after_attach_reaches_the_hook)
{
	/* Loaded lazily (its dlopen bound at its first call) and with RTLD_NOW (bound at relocation). */
	char *library = ctor_library(test_tmpdir(), NULL);
	check_only_the_hook_finds_it(library, "ctor_value", "", test_format("open:lazy %s", library));
	check_only_the_hook_finds_it(library, "ctor_value", "", "");
}
END_TEST

START_TEST(test_pointer_copied_before_attach_is_the_documented_miss)
{
	/* A library that copied dlopen's address before the attach calls libc through the copy: the
	   runtime never sees that call. Its own binding, patched, reaches the hook. */
	char *library = test_format("%s/libearly.so.77", test_tmpdir());
	test_build_library("early_pointer.c", library, "libearly.so.77", "");
	const char *env[] = { builtins_only_on_nvinterpose_path(42), NULL };
	struct test_run run = test_probe(env, test_format("call %s early_copy late %s call %s early_load_through_copy call %s early_load_through_binding",
							 library, runtime(), library, library));
	ck_assert_msg(test_contains(run.output, "call early_load_through_copy: -1"), "missed, as documented: %s", run.output);
	ck_assert_msg(test_contains(run.output, "call early_load_through_binding: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_eight_threads_calling_dlopen_during_the_attach)
{
	/* Eight threads load by bare name a library only the runtime finds, and load and unload fresh
	   libraries by path (loads in flight), while the main thread attaches and rescans: no crash,
	   no hang, and every call begun after the attach finds it. */
	char *fresh = test_format("%s/fresh", test_tmpdir());
	test_mkdirs(fresh);
	for (int i = 0; i < 16; i++)
		test_build_library("value.c", test_format("%s/libfresh-%d.so.77", fresh, i), test_format("libfresh-%d.so.77", i),
				   test_format("-DVALUE=%d", i));
	const char *env[] = { builtins_only_on_nvinterpose_path(42), NULL };
	const char *argv[] = { test_setting("NVI_ATTACH_THREADS"), runtime(), "libnvrtc-builtins.so.77.1", fresh, "16", NULL };
	struct test_run run = test_run(argv, env, 120);
	ck_assert_msg(run.status == 0, "status %d:\n%s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "after attach: missed 0\n") && test_contains(run.output, "errors: 0\n"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "after attach: found 0\n"), "%s", run.output);
}
END_TEST

START_TEST(test_fork_after_attach_keeps_the_hooks_in_the_child)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	struct test_run run = test_probe(no_env, test_format("late %s forkcall %s nvrtc_like_compile", runtime(), wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "forkcall nvrtc_like_compile: 42"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "forkcall: child exited"), "%s", run.output);
}
END_TEST

START_TEST(test_refused_mprotect_skips_that_patch_keeps_the_others_and_says_so)
{
	/* mprotect may not grant write permission (as a security policy can refuse it): libc's
	   symbols and the program's read-only GOT stay as they were and are reported; a host's
	   writable lazy slot, bound before the attach, is patched all the same. */
	char *root = test_tmpdir();
	char *host = test_format("%s/libhost.so.77", root), *log = test_format("%s/events.jsonl", root);
	test_build_library("host.c", host, "libhost.so.77", "");
	const char *env[] = { builtins_only_on_nvinterpose_path(42), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	struct test_run run = test_probe(env, test_format("deny-mprotect-write call %s host_load_plugin late %s patches call %s host_load_plugin", host,
							 runtime(), host));
	ck_assert_msg(test_contains(run.output, "deny-mprotect-write: on"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call host_load_plugin: -1"), "before: %s", run.output);
	ck_assert_msg(test_contains(run.output, "dlopen dynsym refused") && test_contains(run.output, "Permission denied"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("%s1\n", patch_line(host, "dlopen", "got", "patched"))), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "call host_load_plugin: 42"), "after: %s", run.output);
	char *events = test_read_file(log);
	ck_assert_msg(test_contains(events, "\"event\":\"patch-skipped\",\"name\":\"dlopen\"") &&
		      test_contains(events, "not patched: mprotect refused (Permission denied)"), "%s", events);
}
END_TEST

START_TEST(test_patching_off_leaves_the_bindings_to_libc)
{
	const char *env[] = { "NVINTERPOSE_PATCH=0", NULL };
	struct test_run run = test_probe(env, test_format("late %s bound dlsym dlopen patches", runtime()));
	ck_assert_msg(!test_contains(run.output, test_format("bound: %s\n", runtime())), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, test_format("dlsym dlopen: %s\n", runtime())), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "patches: 0\n"), "%s", run.output);
}
END_TEST

/* The events of a run, without their time and pid, and without the attach's own. */
static char *events_without_patches(const char *log)
{
	char *events = test_read_file(log);
	char *kept = test_format("%s", "");
	for (char *line = strtok(events ? events : "", "\n"); line; line = strtok(NULL, "\n")) {
		const char *event = strstr(line, "\"event\":");
		if (event && !strstr(line, "\"event\":\"patch"))
			kept = test_format("%s%s\n", kept, event);
	}
	return kept;
}

START_TEST(test_events_after_attach_are_those_under_preload)
{
	/* Registration, a redirect and DT_NEEDED help from a sibling wheel, under both policies that
	   act: the same events, preloaded or attached first. */
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	char *cusparse = test_format("%s/site-packages/nvidia/cusparse/lib", wheel.root);
	char *nvjitlink = test_format("%s/site-packages/nvidia/nvjitlink/lib", wheel.root);
	test_mkdirs(cusparse);
	test_mkdirs(nvjitlink);
	char *nvjitlink_lib = test_format("%s/libnvJitLink.so.77", nvjitlink), *cusparse_lib = test_format("%s/libcusparse.so.77", cusparse);
	test_build_library("value.c", nvjitlink_lib, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=7");
	test_build_library("needer.c", cusparse_lib, "libcusparse.so.77",
			   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=nvjitlink_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'",
				       nvjitlink_lib));
	char *args = test_format("call %s nvrtc_like_compile call %s cusparse_value", wheel.nvrtc, cusparse_lib);
	const char *policies[] = { "fallback", "coherent" };
	for (size_t p = 0; p < 2; p++) {
		char *preloaded_log = test_format("%s/preloaded-%zu.jsonl", wheel.root, p), *attached_log = test_format("%s/attached-%zu.jsonl", wheel.root, p);
		char *policy = test_format("NVINTERPOSE_POLICY=%s", policies[p]);
		const char *preloaded_env[] = { standin_preload(), policy, test_format("NVINTERPOSE_LOG_FILE=%s", preloaded_log), NULL };
		const char *attached_env[] = { policy, test_format("NVINTERPOSE_LOG_FILE=%s", attached_log), NULL };
		struct test_run preloaded = test_probe(preloaded_env, args);
		struct test_run attached = test_probe(attached_env, test_format("late %s %s", runtime(), args));
		ck_assert_msg(test_contains(preloaded.output, "call nvrtc_like_compile: 42") && test_contains(preloaded.output, "call cusparse_value: 1007"),
			      "%s", preloaded.output);
		ck_assert_msg(test_contains(attached.output, "call nvrtc_like_compile: 42") && test_contains(attached.output, "call cusparse_value: 1007"),
			      "%s", attached.output);
		char *expected = events_without_patches(preloaded_log), *got = events_without_patches(attached_log);
		ck_assert_msg(test_contains(expected, p == 0 ? "\"event\":\"redirect\"" : "\"event\":\"coherent\"") &&
			      test_contains(expected, "\"event\":\"needed\""), "%s", expected);
		ck_assert_msg(strcmp(expected, got) == 0, "%s: preloaded:\n%s\nattached:\n%s", policies[p], expected, got);
	}
}
END_TEST

START_TEST(test_shared_loader_semantics_check_with_the_runtime_attached)
{
	/* The shared check preloads what it is given: a shim whose constructor dlopens the runtime, so
	   that the runtime arrives as a late attach, into a process bound to libc's dlopen. */
	char *script = test_shared_check("loader-semantics.sh");
	ck_assert_ptr_nonnull(script);
	char *shim = test_format("%s/libattach-shim.so.77", test_tmpdir());
	test_build_library("attach_shim.c", shim, "libattach-shim.so.77", test_format("-DRUNTIME='\"%s\"'", runtime()));
	const char *env[] = { test_format("LD_PRELOAD=%s", shim), NULL };
	struct test_run attached = test_probe(env, "bound patches");
	ck_assert_msg(test_contains(attached.output, test_format("bound: %s\n", runtime())), "the shim attaches: %s", attached.output);
	const char *argv[] = { "bash", script, shim, NULL };
	struct test_run run = test_run(argv, no_env, 120);
	ck_assert_msg(run.status == 0, "%s", run.output);
	ck_assert_msg(test_contains(run.output, "loader-behaviour lines match"), "%s", run.output);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("attach");
	TCase *tc = tcase_create("attach");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_attach_before_nvrtc_compiles_with_no_rescan);
	tcase_add_test(tc, test_cut_builtins_are_skipped_attached_before_or_after_nvrtc);
	tcase_add_test(tc, test_lazy_binding_and_dlsym_after_attach_find_the_hook);
	tcase_add_test(tc, test_slot_of_another_interposer_is_left_alone_and_reported);
	tcase_add_test(tc, test_second_copy_attached_defers_to_the_first);
	tcase_add_test(tc, test_copy_attached_to_a_process_with_the_runtime_preloaded_uses_that_one);
	tcase_add_test(tc, test_full_relro_bind_now_library_loaded_before_attach_keeps_its_runpath);
	tcase_add_test(tc, test_full_relro_bind_now_library_loaded_before_attach_reaches_the_hook);
	tcase_add_test(tc, test_constructor_of_a_library_loaded_after_attach_keeps_its_runpath);
	tcase_add_test(tc, test_constructor_of_a_library_loaded_after_attach_reaches_the_hook);
	tcase_add_test(tc, test_pointer_copied_before_attach_is_the_documented_miss);
	tcase_add_test(tc, test_eight_threads_calling_dlopen_during_the_attach);
	tcase_add_test(tc, test_fork_after_attach_keeps_the_hooks_in_the_child);
	tcase_add_test(tc, test_refused_mprotect_skips_that_patch_keeps_the_others_and_says_so);
	tcase_add_test(tc, test_patching_off_leaves_the_bindings_to_libc);
	tcase_add_test(tc, test_events_after_attach_are_those_under_preload);
	if (test_shared_check("loader-semantics.sh"))
		tcase_add_test(tc, test_shared_loader_semantics_check_with_the_runtime_attached);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
