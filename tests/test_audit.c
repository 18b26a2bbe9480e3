/* The LD_AUDIT front: programs linked directly against wheel libraries start, because the runtime
   answers the loader's own searches; everywhere the loader would find a library itself, nothing
   changes. Stand-ins use sonames no real package ships (.so.77). */
#define _GNU_SOURCE
#include "common.h"
#include "standins.h"

#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

/* From glibc 2.34 the audit front answers the loader; before, it leaves every name to the loader
   (src/linux/start.h: libdl cannot be called from an audit namespace there). */
static bool audit_front_answers(void) { return test_glibc_at_least(2, 34); }

static const char *audit_env(void) { return test_format("LD_AUDIT=%s", test_setting("NVI_RUNTIME")); }

/* tests/fixtures/linked_main.c as ROOT/program, linked against library (needed_symbol), with the
   extra flags (its RPATH or RUNPATH). */
static char *build_program(const char *root, const char *library, const char *needed_symbol, const char *flags)
{
	return test_build_program("linked_main.c", root, test_format("-DNEEDED_SYMBOL=%s '%s' %s", needed_symbol, library, flags));
}

struct split {
	char *root, *cusparse, *nvjitlink, *program;
};

/* CUDA 12 style split wheels: cusparse (RUNPATH $ORIGIN, as the real one) in nvidia/cusparse/lib
   needs nvJitLink from nvidia/nvjitlink/lib; a program linked against cusparse by its folder. */
static struct split make_split(void)
{
	struct split s;
	s.root = test_tmpdir();
	char *cusparse_dir = test_format("%s/site-packages/nvidia/cusparse/lib", s.root);
	char *nvjitlink_dir = test_format("%s/site-packages/nvidia/nvjitlink/lib", s.root);
	s.nvjitlink = test_format("%s/libnvJitLink.so.77", test_mkdirs(nvjitlink_dir));
	test_build_library("value.c", s.nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=7");
	s.cusparse = test_format("%s/libcusparse.so.77", test_mkdirs(cusparse_dir));
	test_build_library("needer.c", s.cusparse, "libcusparse.so.77",
			   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=nvjitlink_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'",
				       s.nvjitlink));
	/* -rpath-link is for the link alone: it names no folder for the loader. */
	s.program = build_program(s.root, s.cusparse, "cusparse_value",
				  test_format("-Wl,-rpath-link,'%s' -Wl,--enable-new-dtags,-rpath,'%s'", nvjitlink_dir, cusparse_dir));
	return s;
}

START_TEST(test_program_linked_against_a_split_wheel_starts_under_the_audit_front)
{
	struct split s = make_split();
	const char *argv[] = { s.program, NULL };
	struct test_run plain = test_run(argv, no_env, 60);
	ck_assert_msg(plain.status == 127 && test_contains(plain.output, "libnvJitLink.so.77: cannot open shared object file"),
		      "%d: %s", plain.status, plain.output);
	const char *preload[] = { standin_preload(), NULL };
	struct test_run preloaded = test_run(argv, preload, 60);
	ck_assert_msg(preloaded.status == 127, "no preload hook runs before main: %d: %s", preloaded.status, preloaded.output);
	const char *env[] = { audit_env(), NULL };
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "started: 1007"), "%d: %s", run.status, run.output);
}
END_TEST

/* The audit front's events: its answer, and the registers of what the loader mapped, each naming
   the object whose search it was (the program for cusparse, cusparse for nvJitLink). */
START_TEST(test_audit_events_name_the_requester)
{
	struct split s = make_split();
	char *log = test_format("%s/events.jsonl", s.root);
	const char *argv[] = { s.program, NULL };
	const char *env[] = { audit_env(), test_format("NVINTERPOSE_LOG_FILE=%s", log), NULL };
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	char *answer = test_find_event(log, "audit-answer", "name", "libnvJitLink.so.77");
	ck_assert_msg(answer, "%s", test_read_file(log));
	ck_assert_str_eq(test_event_value(answer, "path"), s.nvjitlink);
	ck_assert_str_eq(test_event_value(answer, "caller"), s.cusparse);
	char *registered = test_find_event(log, "register", "name", "libnvJitLink.so.77");
	ck_assert_msg(registered, "%s", test_read_file(log));
	ck_assert_str_eq(test_event_value(registered, "caller"), s.cusparse);
	registered = test_find_event(log, "register", "name", "libcusparse.so.77");
	ck_assert_msg(registered, "%s", test_read_file(log));
	ck_assert_str_eq(test_event_value(registered, "caller"), s.program);
}
END_TEST

START_TEST(test_library_without_runpath_gets_its_folders_copy)
{
	/* The CUDA 13 wheels' libcusolverMg.so.12 has no RUNPATH: its nvJitLink beside it in
	   nvidia/cu13/lib is not found for it, even from a program whose RUNPATH names that folder. */
	char *root = test_tmpdir();
	char *lib = test_format("%s/site-packages/nvidia/cu13/lib", root);
	char *nvjitlink = test_format("%s/libnvJitLink.so.77", test_mkdirs(lib));
	test_build_library("value.c", nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=5");
	char *cusolvermg = test_format("%s/libcusolverMg.so.77", lib);
	test_build_library("needer.c", cusolvermg, "libcusolverMg.so.77",
			   test_format("-DNEEDER_SYMBOL=cusolvermg_value -DNEEDED_SYMBOL=nvjitlink_value '%s'", nvjitlink));
	char *program = build_program(root, cusolvermg, "cusolvermg_value", test_format("-Wl,--enable-new-dtags,-rpath,'%s'", lib));
	const char *argv[] = { program, NULL };
	struct test_run plain = test_run(argv, no_env, 60);
	ck_assert_msg(plain.status == 127, "%d: %s", plain.status, plain.output);
	const char *env[] = { audit_env(), NULL };
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "started: 1005"), "%d: %s", run.status, run.output);
}
END_TEST

START_TEST(test_the_loaders_own_answer_is_kept_wherever_it_finds_the_library)
{
	/* LD_LIBRARY_PATH holds another nvJitLink (value 3): the loader finds it, so the audit front
	   must not answer with the wheel sibling's. */
	struct split s = make_split();
	char *system = test_format("%s/system", s.root);
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", test_mkdirs(system)), "libnvJitLink.so.77",
			   "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=3");
	const char *argv[] = { s.program, NULL };
	const char *plain_env[] = { test_format("LD_LIBRARY_PATH=%s", system), NULL };
	const char *env[] = { plain_env[0], audit_env(), NULL };
	struct test_run plain = test_run(argv, plain_env, 60);
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(test_contains(plain.output, "started: 1003"), "%s", plain.output);
	ck_assert_msg(test_contains(run.output, "started: 1003"), "%s", run.output);
}
END_TEST

/* A copy cut short where the audit front would find it (an interrupted install): the front does
   not answer with it, under either policy, and the program gets the plain loader's answer, never
   a signal. NVRTC's builtins are asked for at run time, the split wheel's nvJitLink before main. */
START_TEST(test_cut_copies_are_never_the_audit_fronts_answer)
{
	for (int cut = 0; cut < STANDIN_CUTS; cut++)
		for (int coherent = 0; coherent < 2; coherent++) {
			char *label = test_format("%s, %s", standin_cut_name(cut), coherent ? "coherent" : "fallback");
			const char *env[] = { audit_env(), coherent ? "NVINTERPOSE_POLICY=coherent" : NULL, NULL };
			struct standin_wheel wheel = standin_nvrtc_wheel(0);
			standin_cut_builtins(wheel.builtins, cut);
			char *args = test_format("call %s nvrtc_like_compile", wheel.nvrtc);
			standin_check_like_plain(&(struct standin_runs){ .label = label, .plain_env = no_env, .plain_args = args, .env = env,
									 .args = args, .result = "call nvrtc_like_compile: " });

			struct split s = make_split();
			test_build_library("value.c", s.nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=7 " STANDIN_PADDING);
			standin_cut_library(s.nvjitlink, cut);
			const char *argv[] = { s.program, NULL };
			struct test_run plain = test_run(argv, no_env, 60);
			ck_assert_msg(plain.status == 127, "%s: without the runtime: %d: %s", label, plain.status, plain.output);
			struct test_run run = test_run(argv, env, 60);
			ck_assert_msg(run.status == 127, "%s: the plain run's exit 127, not %d: %s", label, run.status, run.output);
		}
}
END_TEST

START_TEST(test_ordinary_programs_start_the_same_under_the_audit_front)
{
	const char *env[] = { audit_env(), NULL };
	const char *programs[][3] = { { "/bin/true", NULL, NULL }, { "/bin/sh", "-c", "echo ok" }, { test_setting("NVI_PROBE"), "open", "libz.so.1" } };
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		const char *argv[] = { programs[i][0], programs[i][1], programs[i][2], NULL };
		struct test_run plain = test_run(argv, no_env, 60);
		struct test_run run = test_run(argv, env, 60);
		ck_assert_int_eq(run.status, plain.status);
		ck_assert_str_eq(run.output, plain.output);
	}
}
END_TEST

START_TEST(test_loader_semantics_check_under_ld_audit)
{
	/* The shared differential check, with the runtime given to LD_AUDIT where the check gives it
	   to LD_PRELOAD: every line the same as without it. */
	const char *checks = test_setting("NVI_SHARED_CHECKS");
	char *script = test_shared_check("loader-semantics.sh");
	ck_assert_ptr_nonnull(script);
	char *copy = test_format("%s/loader-semantics-audit.sh", test_tmpdir());
	char *command = test_format("sed -e 's/LD_PRELOAD=/LD_AUDIT=/' -e 's|here=.*|here=%s|' '%s' > '%s' && bash '%s' '%s'", checks, script,
				    copy, copy, test_setting("NVI_RUNTIME"));
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, no_env, 300);
	ck_assert_msg(run.status == 0, "%s", run.output);
	ck_assert_msg(test_contains(run.output, "loader-behaviour lines match"), "%s", run.output);
}
END_TEST

START_TEST(test_both_fronts_together_do_what_each_does)
{
	/* The program starts (the audit front), and NVRTC's builtins load later (the preload front). */
	struct split s = make_split();
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *env[] = { audit_env(), standin_preload(), NULL };
	const char *argv[] = { s.program, NULL };
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "started: 1007"), "%d: %s", run.status, run.output);
	struct test_run probe = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(probe.output, "call nvrtc_like_compile: 42"), "%s", probe.output);
}
END_TEST

START_TEST(test_static_tls_with_the_preload_and_the_auditor_together)
{
	/* Both copies of the runtime take initial-exec TLS; a library dlopen'ed late that needs room in
	   the static TLS block must load as it does without them. */
	char *root = test_tmpdir();
	char *tls = test_format("%s/libtls_heavy.so.77", root);
	test_build_library("tls_heavy.c", tls, "libtls_heavy.so.77", "");
	char *args = test_format("call %s tls_value", tls);
	struct test_run plain = test_probe(no_env, args);
	ck_assert_msg(test_contains(plain.output, "call tls_value: 42"), "%s", plain.output);
	const char *env[] = { audit_env(), standin_preload(), NULL };
	struct test_run run = test_probe(env, args);
	ck_assert_msg(test_contains(run.output, "call tls_value: 42"), "%s", run.output);
}
END_TEST

START_TEST(test_policy_off_and_disable_leave_the_loader_alone)
{
	struct split s = make_split();
	const char *argv[] = { s.program, NULL };
	const char *settings[] = { "NVINTERPOSE_POLICY=off", "NVINTERPOSE_DISABLE=1" };
	for (size_t i = 0; i < 2; i++) {
		const char *env[] = { audit_env(), settings[i], NULL };
		struct test_run run = test_run(argv, env, 60);
		ck_assert_msg(run.status == 127, "%s: %d: %s", settings[i], run.status, run.output);
	}
}
END_TEST

static struct test_run shell(const char *const *env, const char *command)
{
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	return test_run(argv, env, 60);
}

/* nvinterpose-run --audit (LD_AUDIT and LD_PRELOAD), --audit-only (LD_AUDIT alone) and
   --print-env --audit start the program the preload front alone cannot. */
START_TEST(test_launcher_audit_starts_the_split_wheel_program)
{
	struct split s = make_split();
	const char *run = test_setting("NVI_RUN");
	struct test_run preloaded = shell(no_env, test_format("'%s' -- '%s'", run, s.program));
	ck_assert_msg(preloaded.status == 127, "the preload front alone: %d: %s", preloaded.status, preloaded.output);
	const char *const modes[] = { "--audit", "--audit-only" };
	for (size_t i = 0; i < 2; i++) {
		struct test_run started = shell(no_env, test_format("'%s' %s -- '%s'", run, modes[i], s.program));
		ck_assert_msg(started.status == 0 && test_contains(started.output, "started: 1007"), "%s: %d: %s", modes[i], started.status,
			      started.output);
	}
	struct test_run fronts = shell(no_env, test_format("'%s' --audit-only -- sh -c 'echo \"fronts: [${LD_PRELOAD-}] [$LD_AUDIT]\"'", run));
	ck_assert_str_eq(fronts.output, test_format("fronts: [] [%s]\n", test_setting("NVI_RUNTIME")));
	fronts = shell(no_env, test_format("'%s' --audit -- sh -c 'echo \"fronts: [${LD_PRELOAD-}] [$LD_AUDIT]\"'", run));
	ck_assert_str_eq(fronts.output, test_format("fronts: [%s] [%s]\n", test_setting("NVI_RUNTIME"), test_setting("NVI_RUNTIME")));
	struct test_run evaluated = shell(no_env, test_format("eval \"$('%s' --print-env --audit)\" && '%s'", run, s.program));
	ck_assert_msg(evaluated.status == 0 && test_contains(evaluated.output, "started: 1007"), "%d: %s", evaluated.status, evaluated.output);
}
END_TEST

/* Each front accounts for what it did. Under --audit the preload copy supplies NVRTC's builtins,
   once: its load by name (the loader's own answer first) is not the audit copy's to answer, so
   the report says 1 redirect, as without --audit, and the log's redirect names the real asker and
   the step (never an audit-answer with the runtime for its caller). The audit copy's own answers
   are in its report ("(audit front)"): the builtins under --audit-only, nvJitLink for cusparse
   before main. */
START_TEST(test_both_fronts_account_for_what_they_did)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	const char *run = test_setting("NVI_RUN");
	char *redirect = test_format("nvinterpose: report: redirect libnvrtc-builtins.so.77.1 for %s: %s\n", wheel.nvrtc, wheel.builtins);
	const char *const modes[] = { "", "--audit" };
	for (size_t i = 0; i < 2; i++) {
		char *log = test_format("%s/events-%zu.jsonl", wheel.root, i);
		struct test_run report = shell(no_env, test_format("'%s' %s --report --log-file='%s' -- '%s' call '%s' nvrtc_like_compile", run,
								   modes[i], log, test_setting("NVI_PROBE"), wheel.nvrtc));
		ck_assert_msg(test_contains(report.output, "call nvrtc_like_compile: 42"), "%s", report.output);
		ck_assert_msg(test_contains(report.output, ", policy fallback: 2 origins registered, 1 redirects, ") &&
			      test_count(report.output, redirect) == 1, "'%s': %s", modes[i], report.output);
		char *event = test_find_event(log, "redirect", "name", "libnvrtc-builtins.so.77.1");
		ck_assert_msg(event, "'%s': %s", modes[i], test_read_file(log));
		ck_assert_str_eq(test_event_value(event, "caller"), wheel.nvrtc);
		ck_assert_str_eq(test_event_value(event, "reason"), "caller's folder");
		ck_assert_msg(!test_find_event(log, "audit-answer", NULL, NULL), "'%s': %s", modes[i], test_read_file(log));
	}
	struct test_run audit_only = shell(no_env, test_format("'%s' --audit-only --report -- '%s' call '%s' nvrtc_like_compile", run,
							       test_setting("NVI_PROBE"), wheel.nvrtc));
	ck_assert_msg(test_contains(audit_only.output, " (audit front), policy fallback: ") &&
		      test_contains(audit_only.output, " registered, 1 redirects, ") &&
		      test_contains(audit_only.output, test_format("nvinterpose: report: audit-answer libnvrtc-builtins.so.77.1 for %s: %s\n",
								   wheel.nvrtc, wheel.builtins)),
		      "%s", audit_only.output);
	struct split s = make_split();
	struct test_run started = shell(no_env, test_format("'%s' --audit --report -- '%s'", run, s.program));
	ck_assert_msg(started.status == 0 && test_contains(started.output, test_format("nvinterpose: report: audit-answer libnvJitLink.so.77 for %s: %s\n",
												s.cusparse, s.nvjitlink)),
		      "%d: %s", started.status, started.output);
}
END_TEST

/* Before glibc 2.34 the audit copy answers nothing, and neither crashes a program nor disturbs its
   thread keys (libdl's dlerror buffer would take one of the program's): the split-wheel program
   fails as without it, a Python that loads a missing NVIDIA name gets the loader's error, and the
   debug log says why. */
START_TEST(test_before_glibc_2_34_the_audit_front_leaves_names_to_the_loader)
{
	struct split s = make_split();
	const char *argv[] = { s.program, NULL };
	const char *env[] = { audit_env(), "NVINTERPOSE_LOG=debug", NULL };
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 127 && test_contains(run.output, "libnvJitLink.so.77: cannot open shared object file") &&
			      test_contains(run.output, "libnvJitLink.so.77: left to the loader (before glibc 2.34"),
		      "%d: %s", run.status, run.output);
	const char *python[] = { "python3", "-c",
				 "import ctypes\ntry: ctypes.CDLL('libnvrtc.so.77')\nexcept OSError as e: print('error:', e)", NULL };
	struct test_run plain = test_run(python, no_env, 60);
	struct test_run audited = test_run(python, env, 60);
	ck_assert_msg(plain.status == 0 && test_contains(plain.output, "error: libnvrtc.so.77: cannot open shared object file"), "%d: %s",
		      plain.status, plain.output);
	ck_assert_msg(audited.status == 0 && test_contains(audited.output, "error: libnvrtc.so.77: cannot open shared object file"),
		      "%d: %s", audited.status, audited.output);
}
END_TEST

/* On x86-64 the launcher refuses --audit before glibc 2.34, where it would change nothing (the
   glibc is what getconf says: a stand-in first on PATH plays 2.33 and 2.34). */
START_TEST(test_launcher_refuses_audit_before_glibc_2_34)
{
	const char *const versions[] = { "2.33", "2.34" };
	for (size_t v = 0; v < 2; v++) {
		const char *env[] = { test_system_path("x86_64", versions[v]), NULL };
		struct test_run run = shell(env, test_format("'%s' --audit-only -- true", test_setting("NVI_RUN")));
		if (v == 0) {
			ck_assert_msg(run.status == 2, "%d %s", run.status, run.output);
			ck_assert_msg(test_contains(run.output, "nvinterpose-run: --audit: refused with glibc 2.33 (2.34 or newer is needed)"),
				      "%s", run.output);
		} else {
			/* 2.34 is not refused; where the real glibc is older the runtime's probe may still
			   speak, but not this refusal. */
			ck_assert_msg(!test_contains(run.output, "refused with glibc"), "%d %s", run.status, run.output);
		}
	}
}
END_TEST

/* Before glibc 2.35, on aarch64, any auditor sends every PLT call through _dl_runtime_profile,
   which does not save x8 for version-1 auditors: the launcher refuses --audit there, with the
   reason. The machine and glibc are what uname and getconf say: stand-ins for both, first on PATH,
   play an aarch64 glibc 2.34 and 2.35. */
START_TEST(test_launcher_refuses_audit_on_aarch64_before_glibc_2_35)
{
	const char *const versions[] = { "2.34", "2.35" };
	for (size_t v = 0; v < 2; v++) {
		const char *env[] = { test_system_path("aarch64", versions[v]), NULL };
		const char *const modes[] = { "--audit -- true", "--audit-only -- true", "--print-env --audit" };
		for (size_t i = 0; i < 3; i++) {
			struct test_run run = shell(env, test_format("'%s' %s", test_setting("NVI_RUN"), modes[i]));
			if (v == 0) {
				ck_assert_msg(run.status == 2, "%s: %d %s", modes[i], run.status, run.output);
				ck_assert_str_eq(run.output, "nvinterpose-run: --audit: refused on aarch64 with glibc 2.34 (2.35 or newer is needed): there the "
							     "loader routes every PLT call of an audited process through _dl_runtime_profile, which does not "
							     "save x8 and can corrupt calls that return large structs; use the preload front alone (without "
							     "--audit)\n");
			} else {
				ck_assert_msg(run.status == 0, "glibc 2.35: %s: %d %s", modes[i], run.status, run.output);
			}
		}
		/* The preload front is not concerned. */
		struct test_run preload = shell(env, test_format("'%s' -- true", test_setting("NVI_RUN")));
		ck_assert_msg(preload.status == 0, "%s", preload.output);
	}
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("audit");
	TCase *tc = tcase_create("audit");
	if (audit_front_answers()) {
		tcase_add_test(tc, test_program_linked_against_a_split_wheel_starts_under_the_audit_front);
		tcase_add_test(tc, test_library_without_runpath_gets_its_folders_copy);
		tcase_add_test(tc, test_audit_events_name_the_requester);
		tcase_add_test(tc, test_both_fronts_together_do_what_each_does);
		tcase_add_test(tc, test_launcher_audit_starts_the_split_wheel_program);
		tcase_add_test(tc, test_cut_copies_are_never_the_audit_fronts_answer);
		tcase_add_test(tc, test_both_fronts_account_for_what_they_did);
	} else {
		printf("skipped: the audit front's answers (glibc %s; they need 2.34 or newer)\n", gnu_get_libc_version());
		tcase_add_test(tc, test_before_glibc_2_34_the_audit_front_leaves_names_to_the_loader);
	}
	tcase_add_test(tc, test_the_loaders_own_answer_is_kept_wherever_it_finds_the_library);
	tcase_add_test(tc, test_ordinary_programs_start_the_same_under_the_audit_front);
	/* Before 2.34 the loader itself fails the check under any audit library (on 2.31 one that
	   defines la_version alone crashes the check's program). */
	if (!audit_front_answers())
		printf("skipped: the loader-semantics check under LD_AUDIT (glibc %s: the loader fails it under any audit library)\n",
		       gnu_get_libc_version());
	else if (test_shared_check("loader-semantics.sh"))
		tcase_add_test(tc, test_loader_semantics_check_under_ld_audit);
	tcase_add_test(tc, test_static_tls_with_the_preload_and_the_auditor_together);
	tcase_add_test(tc, test_policy_off_and_disable_leave_the_loader_alone);
	tcase_add_test(tc, test_launcher_refuses_audit_on_aarch64_before_glibc_2_35);
	tcase_add_test(tc, test_launcher_refuses_audit_before_glibc_2_34);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
