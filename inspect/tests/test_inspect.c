/* nvinterpose-inspect over stand-in trees built at test time: each loader rule it models, checked
   against what it prints and against the real loader (`ld.so --list`, the oracle), the output
   formats, exit statuses, hostile files (as the file inspected and on the search path), the what-if
   and the mixed-origin warning. Stand-ins use names no ld.so.cache holds. */
#define _GNU_SOURCE
#include "common.h"
#include "elf_corpus.h"
#include "standins.h"

#include "elf/elf_reader.h"

#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------------------------- */

/* Runs the inspector with the shell words in args under env; output and status as test_run. */
static struct test_run inspect(const char *const *env, const char *format, ...) __attribute__((format(printf, 2, 3)));

static struct test_run inspect(const char *const *env, const char *format, ...)
{
	va_list list;
	char *args = NULL;
	va_start(list, format);
	ck_assert_int_ge(vasprintf(&args, format, list), 0);
	va_end(list);
	/* As the test's kind of CPU (tests/common.h), its loader probe too. */
	const char *emulated[16] = { 0 };
	size_t n = 0;
	for (; env && env[n] && n < 14; n++)
		emulated[n] = env[n];
	emulated[n] = test_cpu_spawn_setting();
	char *command = test_format("exec %s'%s' %s", test_cpu_prefix(), test_setting("NVI_INSPECT"), args);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, emulated, 60);
	free(command);
	free(args);
	return run;
}

/* The loader this test runs under: the real loader the inspector is held against. */
static const char *own_loader(void)
{
	static char *interpreter;
	if (!interpreter) {
		struct elf_facts facts;
		char message[256];
		ck_assert_msg(elf_read_facts("/proc/self/exe", &facts, message, sizeof(message)) == ELF_READER_OK, "%s", message);
		ck_assert_ptr_nonnull(facts.interp);
		interpreter = strdup(facts.interp);
		elf_facts_free(&facts);
	}
	return interpreter;
}

/* Every library the real loader lists for file under env ("name => path", "name => not found",
   "name" alone for a file found by its name, relative, and the interpreter's own line) appears in the inspector's JSON for it with the same file. The loader
   is run as ldd runs it (LD_TRACE_LOADED_OBJECTS=1): `ld.so --list` gives up, printing nothing, at
   a missing dependency of a dependency. */
static void assert_loader_agrees(const char *file, const char *const *env, const char *json)
{
	const char *argv[] = { own_loader(), file, NULL };
	const char *traced[8] = { "LD_TRACE_LOADED_OBJECTS=1" };
	for (size_t i = 0; env && env[i] && i < 6; i++)
		traced[i + 1] = env[i];
	struct test_run run = test_run(test_cpu_argv(argv), traced, 60);
	size_t checked = 0;
	for (char *line = strtok(run.output, "\n"); line; line = strtok(NULL, "\n")) {
		while (isspace((unsigned char)*line))
			line++;
		char *arrow = strstr(line, " => ");
		char *expected = NULL;
		if (arrow) {
			*arrow = '\0';
			char *path = arrow + 4;
			if (strncmp(path, "not found", 9) == 0) {
				expected = test_format("{\"name\":\"%s\",\"path\":null", line);
			} else {
				*strstr(path, " (0x") = '\0';
				expected = test_format("{\"name\":\"%s\",\"path\":\"%s\"", line, path);
			}
		} else if (line[0] == '/' && strstr(line, " (0x")) {
			*strstr(line, " (0x") = '\0';
			expected = test_format("\"path\":\"%s\"", line);
		} else if (strstr(line, " (0x") && strncmp(line, "linux-vdso.so.", 14) != 0) {
			/* Found under the name itself: through an empty element, relative. */
			*strstr(line, " (0x") = '\0';
			expected = test_format("{\"name\":\"%s\",\"path\":\"%s\"", line, line);
		}
		if (!expected)
			continue;
		ck_assert_msg(test_contains(json, expected), "the loader has %s for %s; the inspector says:\n%s", expected, file, json);
		checked++;
	}
	ck_assert_msg(checked > 0, "ld.so --list %s printed nothing to compare:\n%s", file, run.output);
	free(run.output);
}

/* Writes value at offset of path (a header field to lie about). */
static void patch(const char *path, long offset, const void *value, size_t size)
{
	int fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, value, size, offset), (ssize_t)size);
	close(fd);
}

/* A leaf stand-in named libleaf.so.1 in folder returning value. */
static char *leaf_in(const char *folder, int value)
{
	char *path = test_format("%s/libleaf.so.1", test_mkdirs(folder));
	test_build_library("value.c", path, "libleaf.so.1", test_format("-DVALUE=%d", value));
	return path;
}

/* ---- the search order --------------------------------------------------------------------------- */

/* ROOT/root.so needs libleaf.so.1, found both in ROOT/a (named by the root's search path, RPATH or
   RUNPATH) and in ROOT/b (on LD_LIBRARY_PATH). */
struct two_copies {
	char *root, *file, *in_a, *in_b;
	const char *env[3];
};

static struct two_copies make_two_copies(const char *dtags)
{
	struct two_copies t;
	t.root = test_tmpdir();
	t.in_a = leaf_in(test_format("%s/a", t.root), 1);
	t.in_b = leaf_in(test_format("%s/b", t.root), 2);
	t.file = test_format("%s/root.so", t.root);
	test_build_library("needer.c", t.file, "libroot.so", test_format("'%s' -Wl,%s,-rpath,%s/a", t.in_a, dtags, t.root));
	t.env[0] = test_format("LD_LIBRARY_PATH=%s/b", t.root);
	t.env[1] = "LD_PRELOAD=";
	t.env[2] = NULL;
	return t;
}

START_TEST(test_rpath_comes_before_ld_library_path)
{
	struct two_copies t = make_two_copies("--disable-new-dtags");
	struct test_run run = inspect(t.env, "--json '%s'", t.file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libleaf.so.1\",\"path\":\"%s\",\"how\":\"rpath\"", t.in_a)), "%s", run.output);
	assert_loader_agrees(t.file, t.env, run.output);
}
END_TEST

START_TEST(test_runpath_comes_after_ld_library_path)
{
	struct two_copies t = make_two_copies("--enable-new-dtags");
	struct test_run run = inspect(t.env, "--json '%s'", t.file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libleaf.so.1\",\"path\":\"%s\",\"how\":\"ld_library_path\"", t.in_b)),
		      "%s", run.output);
	assert_loader_agrees(t.file, t.env, run.output);
	/* Without LD_LIBRARY_PATH the RUNPATH serves. */
	const char *plain[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	run = inspect(plain, "--json '%s'", t.file);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libleaf.so.1\",\"path\":\"%s\",\"how\":\"runpath\"", t.in_a)), "%s", run.output);
	assert_loader_agrees(t.file, plain, run.output);
}
END_TEST

START_TEST(test_empty_element_is_the_working_folder_and_its_files_keep_relative_names)
{
	/* RUNPATH "/nonexistent-a::ROOT/b" (and LD_LIBRARY_PATH ":" alike): the empty element is the
	   working folder, searched before b/; the loader names what it finds there by the name alone,
	   relative. */
	char *root = test_tmpdir();
	char *work = test_format("%s/work", root);
	leaf_in(work, 1);
	leaf_in(test_format("%s/b", root), 2);
	char *file = test_format("%s/root.so", root);
	test_build_library("needer.c", file, "libroot.so",
			   test_format("'%s/b/libleaf.so.1' -Wl,--enable-new-dtags,-rpath,/nonexistent-a::%s/b", root, root));
	ck_assert_int_eq(chdir(work), 0);
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "{\"name\":\"libleaf.so.1\",\"path\":\"libleaf.so.1\",\"how\":\"runpath\""), "%s", run.output);
	assert_loader_agrees(file, env, run.output);
	const char *library_path[] = { "LD_LIBRARY_PATH=:/nonexistent-c", "LD_PRELOAD=", NULL };
	run = inspect(library_path, "--json '%s'", file);
	ck_assert_msg(test_contains(run.output, "{\"name\":\"libleaf.so.1\",\"path\":\"libleaf.so.1\",\"how\":\"ld_library_path\""), "%s", run.output);
	assert_loader_agrees(file, library_path, run.output);
}
END_TEST

/* ROOT/root.so (RPATH ROOT/a) needs libmid.so.1 in ROOT/a, which needs libleaf.so.1, also only in
   ROOT/a; libmid has no search path of its own, or (with mid_runpath) a RUNPATH of ROOT/c. */
static char *make_chain(const char *root, bool mid_runpath)
{
	char *leaf = leaf_in(test_format("%s/a", root), 1);
	test_mkdirs(test_format("%s/c", root));
	char *mid = test_format("%s/a/libmid.so.1", root);
	test_build_library("needer.c", mid, "libmid.so.1",
			   test_format("'%s'%s", leaf, mid_runpath ? test_format(" -Wl,--enable-new-dtags,-rpath,%s/c", root) : ""));
	char *file = test_format("%s/root.so", root);
	test_build_library("needer.c", file, "libroot.so",
			   test_format("-DNEEDED_SYMBOL=needer_value -DNEEDER_SYMBOL=root_value '%s' -Wl,--disable-new-dtags,-rpath,%s/a", mid, root));
	return file;
}

START_TEST(test_rpath_of_the_loaders_serves_an_object_without_runpath)
{
	char *root = test_tmpdir();
	char *file = make_chain(root, false);
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libleaf.so.1\",\"path\":\"%s/a/libleaf.so.1\",\"how\":\"rpath\"", root)),
		      "%s", run.output);
	assert_loader_agrees(file, env, run.output);
}
END_TEST

START_TEST(test_runpath_of_the_asker_stops_the_rpath_chain)
{
	char *root = test_tmpdir();
	char *file = make_chain(root, true);
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 1, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "{\"name\":\"libleaf.so.1\",\"path\":null,\"how\":\"not_found\""), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"path\":\"%s/c/libleaf.so.1\",\"how\":\"runpath\",\"result\":\"absent\"}", root)),
		      "%s", run.output);
	ck_assert_msg(!test_contains(run.output, test_format("\"path\":\"%s/a/libleaf.so.1\",\"how\":\"rpath\"", root)), "%s", run.output);
	assert_loader_agrees(file, env, run.output);
}
END_TEST

START_TEST(test_origin_is_the_folder_of_the_path_as_given)
{
	/* ROOT/real/bin/root.so with RUNPATH $ORIGIN/../lib, inspected through the link ROOT/alias: the
	   loader names the leaf through the alias, unnormalized. */
	char *root = test_tmpdir();
	leaf_in(test_format("%s/real/lib", root), 1);
	test_mkdirs(test_format("%s/real/bin", root));
	char *file = test_format("%s/real/bin/root.so", root);
	test_build_library("needer.c", file, "libroot.so",
			   test_format("'%s/real/lib/libleaf.so.1' -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib'", root));
	ck_assert_int_eq(symlink(test_format("%s/real", root), test_format("%s/alias", root)), 0);
	char *through_alias = test_format("%s/alias/bin/root.so", root);
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", through_alias);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libleaf.so.1\",\"path\":\"%s/alias/bin/../lib/libleaf.so.1\",\"how\":\"runpath\"", root)),
		      "%s", run.output);
	assert_loader_agrees(through_alias, env, run.output);
}
END_TEST

START_TEST(test_nodeflib_skips_the_cache_and_the_default_folders)
{
	char *root = test_tmpdir();
	char *file = test_format("%s/root.so", root);
	test_build_library("value.c", file, "libroot.so", "-Wl,--no-as-needed -Wl,-z,nodefaultlib");
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 1, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "\"nodeflib\":true"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "{\"name\":\"libc.so.6\",\"path\":null,\"how\":\"not_found\""), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "\"how\":\"cache\",\"result\":\"passed over: the asker has NODEFLIB"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "\"how\":\"default\",\"result\":\"not searched: the asker has NODEFLIB\""), "%s", run.output);
	assert_loader_agrees(file, env, run.output);
	/* The same library without the flag finds libc in the cache. */
	test_build_library("value.c", file, "libroot.so", "-Wl,--no-as-needed");
	run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "\"name\":\"libc.so.6\",\"path\":\"") &&
		      test_contains(run.output, "\"how\":\"cache\",\"family\":null"), "%s", run.output);
}
END_TEST

START_TEST(test_missing_library_lists_every_place_looked)
{
	char *root = test_tmpdir();
	char *absent = test_format("%s/libabsent.so.1", test_mkdirs(test_format("%s/r", root)));
	test_build_library("value.c", absent, "libabsent.so.1", "");
	test_mkdirs(test_format("%s/l", root));
	char *file = test_format("%s/root.so", root);
	test_build_library("needer.c", file, "libroot.so",
			   test_format("'%s' -Wl,--enable-new-dtags,-rpath,%s/r:%s/none", absent, root, root));
	ck_assert_int_eq(unlink(absent), 0);
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s/l", root), "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 1, "%d: %s", run.status, run.output);
	const char *expected[] = {
		test_format("{\"path\":\"%s/l/libabsent.so.1\",\"how\":\"ld_library_path\",\"result\":\"absent\"}", root),
		test_format("{\"path\":\"%s/r/libabsent.so.1\",\"how\":\"runpath\",\"result\":\"absent\"}", root),
		test_format("{\"path\":\"%s/none/libabsent.so.1\",\"how\":\"runpath\",\"result\":\"no such folder\"}", root),
		"{\"path\":\"/etc/ld.so.cache\",\"how\":\"cache\",\"result\":\"no entry\"}",
	};
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		ck_assert_msg(test_contains(run.output, expected[i]), "no %s in\n%s", expected[i], run.output);
	/* And every default folder, in the loader's own order (its search list for this test). */
	ck_assert_msg(test_count(run.output, "\"how\":\"default\",\"result\":") >= 2, "%s", run.output);
	ck_assert_msg(test_contains(run.output, "libabsent.so.1\",\"how\":\"default\""), "%s", run.output);
	assert_loader_agrees(file, env, run.output);
	/* The tree for a person says it too. */
	run = inspect(env, "'%s'", file);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "libabsent.so.1 not found") &&
		      test_contains(run.output, test_format("looked: %s/r/libabsent.so.1 (runpath): absent", root)) &&
		      test_contains(run.output, "1 dependency not found"), "%s", run.output);
}
END_TEST

START_TEST(test_first_loaded_wins)
{
	/* root needs liba and libb; each has a RUNPATH to its own libleaf.so.1. Breadth first, liba's
	   leaf is loaded first, and libb gets it too. */
	char *root = test_tmpdir();
	char *leaf_a = leaf_in(test_format("%s/la", root), 1);
	char *leaf_b = leaf_in(test_format("%s/lb", root), 2);
	char *a = test_format("%s/liba.so.1", test_mkdirs(test_format("%s/libs", root)));
	char *b = test_format("%s/libs/libb.so.1", root);
	test_build_library("needer.c", a, "liba.so.1", test_format("-DNEEDER_SYMBOL=a_value '%s' -Wl,--enable-new-dtags,-rpath,%s/la", leaf_a, root));
	test_build_library("needer.c", b, "libb.so.1", test_format("-DNEEDER_SYMBOL=b_value '%s' -Wl,--enable-new-dtags,-rpath,%s/lb", leaf_b, root));
	char *file = test_format("%s/root.so", root);
	test_build_library("value.c", file, "libroot.so", test_format("-Wl,--no-as-needed '%s' '%s' -Wl,--enable-new-dtags,-rpath,%s/libs", a, b, root));
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libleaf.so.1\",\"path\":\"%s\",\"how\":\"runpath\"", leaf_a)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libleaf.so.1\",\"path\":\"%s\",\"how\":\"already_loaded\"", leaf_a)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, leaf_b), "%s", run.output);
	assert_loader_agrees(file, env, run.output);
}
END_TEST

/* LD_LIBRARY_PATH names ROOT/bad first, whose libleaf.so.1 is of another kind, then ROOT/good. */
static void assert_other_kind_is_skipped(long offset, const void *value, size_t size, const char *reason)
{
	struct two_copies t = make_two_copies("--enable-new-dtags");
	char *bad = leaf_in(test_format("%s/bad", t.root), 3);
	patch(bad, offset, value, size);
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s/bad:%s/b", t.root, t.root), "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", t.file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libleaf.so.1\",\"path\":\"%s\",\"how\":\"ld_library_path\"", t.in_b)),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("\"passed_over\":[{\"path\":\"%s\",\"how\":\"ld_library_path\",\"result\":\"skipped: %s",
							  bad, reason)), "%s", run.output);
	assert_loader_agrees(t.file, env, run.output);
	/* Inspected itself, it is refused: the inspector resolves for the loader of its own kind. */
	run = inspect(env, "'%s'", bad);
	ck_assert_msg(run.status == 2 && test_contains(run.output, "this inspector resolves for the loader of its own kind"), "%d: %s",
		      run.status, run.output);
}

START_TEST(test_library_of_another_machine_is_skipped)
{
#if defined(__aarch64__)
	uint16_t machine = EM_X86_64;
	assert_other_kind_is_skipped(18, &machine, sizeof(machine), "another machine: x86-64");
#else
	uint16_t machine = EM_AARCH64;
	assert_other_kind_is_skipped(18, &machine, sizeof(machine), "another machine: AArch64");
#endif
}
END_TEST

START_TEST(test_library_of_another_class_is_skipped)
{
	unsigned char elf_class = ELFCLASS32;
	assert_other_kind_is_skipped(EI_CLASS, &elf_class, 1, "wrong ELF class: ELF32");
}
END_TEST

START_TEST(test_without_cache_the_default_folders_serve)
{
	char *root = test_tmpdir();
	char *file = test_format("%s/root.so", root);
	test_build_library("value.c", file, "libroot.so", "-Wl,--no-as-needed");
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json --cache none '%s'", file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "\"name\":\"libc.so.6\",\"path\":\"/") && test_contains(run.output, "\"how\":\"default\",\"family\":null"),
		      "%s", run.output);
}
END_TEST

START_TEST(test_glibc_hwcaps_subfolders_come_before_their_folder)
{
	/* A copy in each x86-64 level's subfolder and one in the folder: the loader takes the best
	   level this machine supports (on another architecture, the folder's own copy). */
	char *root = test_tmpdir();
	char *plain = leaf_in(test_format("%s/a", root), 0);
	const char *levels[] = { "x86-64-v2", "x86-64-v3", "x86-64-v4" };
	for (int i = 0; i < 3; i++)
		leaf_in(test_format("%s/a/glibc-hwcaps/%s", root, levels[i]), i + 2);
	char *file = test_format("%s/root.so", root);
	test_build_library("needer.c", file, "libroot.so", test_format("'%s' -Wl,--enable-new-dtags,-rpath,%s/a", plain, root));
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	assert_loader_agrees(file, env, run.output);
	if (!test_contains(run.output, test_format("\"path\":\"%s\"", plain)))
		ck_assert_msg(test_contains(run.output, "/glibc-hwcaps/x86-64-v") && test_contains(run.output, "\"hwcaps\":\"x86-64-v"),
			      "%s", run.output);
}
END_TEST

START_TEST(test_lib_and_platform_tokens_expand_as_the_loader_does)
{
	/* RUNPATH ROOT/l/$LIB:ROOT/p/$PLATFORM, with a copy under every value either could have: the
	   real loader says which it meant. On both kinds of CPU (tests/common.h). */
	if (!test_cpu_kind(_i))
		return;
	char *root = test_tmpdir();
	const char *libs[] = { "lib", "lib64", "lib32", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "lib/i386-linux-gnu" };
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		leaf_in(test_format("%s/l/%s", root, libs[i]), (int)i);
	const char *platforms[] = { "x86_64", "haswell", "xeon_phi", "aarch64", "i686" };
	for (size_t i = 0; i < sizeof(platforms) / sizeof(platforms[0]); i++)
		leaf_in(test_format("%s/p/%s", root, platforms[i]), 10 + (int)i);
	char *file = test_format("%s/root.so", root);
	test_build_library("needer.c", file, "libroot.so",
			   test_format("'%s/l/lib/libleaf.so.1' -Wl,--enable-new-dtags,-rpath,'%s/l/$LIB:%s/p/$PLATFORM'", root, root, root));
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	assert_loader_agrees(file, env, run.output);
	/* $PLATFORM alone, the $LIB folder left out. */
	test_build_library("needer.c", file, "libroot.so",
			   test_format("'%s/l/lib/libleaf.so.1' -Wl,--enable-new-dtags,-rpath,'%s/p/${PLATFORM}'", root, root));
	run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("\"path\":\"%s/p/", root)), "%d: %s", run.status, run.output);
	assert_loader_agrees(file, env, run.output);
}
END_TEST

/* A RUNPATH folder whose only copy lies in one of the subfolders the loader may try there before
   the folder itself: the legacy hwcap folders of glibc before 2.37 (the platform's, "tls", the
   hwcap names, two levels deep), which the loader names itself ($PLATFORM is dl_platform). Each
   layout alone; the inspector's answer must be the real loader's, found or not. On both kinds of
   CPU (tests/common.h). */
START_TEST(test_legacy_hwcap_subfolders_are_searched_as_the_loader_does)
{
	if (!test_cpu_kind(_i))
		return;
	const char *subdirs[] = { "tls", "x86_64", "haswell", "xeon_phi", "avx512_1", "aarch64", "tls/x86_64",
				  "x86_64/x86_64", "tls/haswell/x86_64", "haswell/x86_64", "platform", "tls/platform" };
	char *platform = test_loader_expansion("/$PLATFORM");
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		char *root = test_tmpdir();
		char *subdir = strcmp(subdirs[i], "platform") == 0 ? platform + 1
			       : strcmp(subdirs[i], "tls/platform") == 0 ? test_format("tls/%s", platform + 1) : (char *)subdirs[i];
		char *leaf = leaf_in(test_format("%s/q/%s", root, subdir), (int)i);
		char *file = test_format("%s/root.so", root);
		test_build_library("needer.c", file, "libroot.so", test_format("'%s' -Wl,--enable-new-dtags,-rpath,%s/q", leaf, root));
		struct test_run run = inspect(env, "--json '%s'", file);
		assert_loader_agrees(file, env, run.output);
	}
}
END_TEST

START_TEST(test_dependency_cycles_end)
{
	/* liba needs libb, which needs liba; the root needs liba and itself. */
	char *root = test_tmpdir();
	char *a = test_format("%s/liba.so.1", root), *b = test_format("%s/libb.so.1", root);
	test_build_library("value.c", b, "libb.so.1", "-DVALUE_SYMBOL=b_value");
	test_build_library("needer.c", a, "liba.so.1",
			   test_format("-DNEEDER_SYMBOL=a_value -DNEEDED_SYMBOL=b_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", b));
	test_build_library("needer.c", b, "libb.so.1",
			   test_format("-DNEEDER_SYMBOL=b_value -DNEEDED_SYMBOL=a_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", a));
	char *file = test_format("%s/root.so", root);
	test_build_library("needer.c", file, "libroot.so",
			   test_format("-DNEEDED_SYMBOL=a_value -Wl,--no-as-needed '%s' -Wl,--enable-new-dtags,-rpath,%s", a, root));
	/* and itself, by name: relinked against its own first build */
	char *self = test_format("%s/self.so", root);
	test_copy_file(file, self);
	test_build_library("needer.c", file, "libroot.so",
			   test_format("-DNEEDED_SYMBOL=a_value -Wl,--no-as-needed '%s' '%s' -Wl,--enable-new-dtags,-rpath,%s", a, self, root));
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"liba.so.1\",\"path\":\"%s\",\"how\":\"already_loaded\"", a)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libroot.so\",\"path\":\"%s\",\"how\":\"already_loaded\"", file)), "%s", run.output);
	assert_loader_agrees(file, env, run.output);
}
END_TEST

START_TEST(test_needed_with_a_slash_is_opened_as_that_path)
{
	/* A library without a SONAME, linked by its path: DT_NEEDED is that path. */
	char *root = test_tmpdir();
	char *plain = test_format("%s/nosoname.so", root);
	test_build_library("value.c", plain, "", "");
	char *file = test_format("%s/root.so", root);
	test_build_library("needer.c", file, "libroot.so", test_format("'%s'", plain));
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"%s\",\"path\":\"%s\",\"how\":\"path\"", plain, plain)), "%s", run.output);
	assert_loader_agrees(file, env, run.output);
	unlink(plain);
	run = inspect(env, "--json '%s'", file);
	ck_assert_msg(run.status == 1 && test_contains(run.output, test_format("{\"name\":\"%s\",\"path\":null,\"how\":\"not_found\"", plain)),
		      "%d: %s", run.status, run.output);
}
END_TEST

/* ---- output ------------------------------------------------------------------------------------ */

START_TEST(test_json_is_one_document_with_every_dependency_an_object)
{
	struct two_copies t = make_two_copies("--enable-new-dtags");
	char *absent_root = test_tmpdir();
	char *absent = test_format("%s/libgone.so.1", absent_root);
	test_build_library("value.c", absent, "libgone.so.1", "");
	char *missing = test_format("%s/needs-gone.so", absent_root);
	test_build_library("needer.c", missing, "libneedsgone.so", test_format("'%s'", absent));
	unlink(absent);
	struct test_run run = inspect(t.env, "--json '%s' '%s' '%s/nothing-here'", t.file, missing, absent_root);
	ck_assert_msg(run.status == 2, "%d: %s", run.status, run.output);
	/* stderr names the unreadable file; the rest is the document. */
	char *document = strchr(run.output, '{');
	char *message = strstr(run.output, "nvinterpose-inspect: ");
	ck_assert_ptr_nonnull(document);
	ck_assert_ptr_nonnull(message);
	if (message > document) {
		*message = '\0';
	} else {
		document = strchr(message, '\n');
		ck_assert_ptr_nonnull(document);
	}
	ck_assert_msg(test_json_document(document), "not one JSON document:\n%s", document);
	ck_assert_int_eq(test_count(document, "{\"file\":"), 3);
	ck_assert_msg(test_contains(document, "{\"name\":\"libleaf.so.1\",\"path\":\""), "%s", document);
	ck_assert_msg(test_contains(document, "{\"name\":\"libgone.so.1\",\"path\":null,\"how\":\"not_found\",\"family\":null,\"object\":null,\"looked\":["),
		      "%s", document);
	ck_assert_msg(test_contains(document, "\"error\":\""), "%s", document);
	ck_assert_msg(test_contains(document, "\"status\":2}"), "%s", document);
	/* Flat: each file's objects in one list, each with its id, its DT_NEEDED entries and its run-time
	   ones; an entry names its object by id, and no entry holds another. */
	ck_assert_msg(test_contains(document, "\"root\":0,\"objects\":[{\"id\":0,"), "%s", document);
	ck_assert_uint_eq(test_count(document, "{\"id\":"), test_count(document, "\"needed\":["));
	ck_assert_uint_eq(test_count(document, "{\"id\":"), test_count(document, "\"runtime\":["));
	ck_assert_uint_eq(test_count(document, "{\"name\":"), test_count(document, "\"object\":"));
}
END_TEST

START_TEST(test_dot_is_a_graph_of_the_tree)
{
	struct two_copies t = make_two_copies("--enable-new-dtags");
	struct test_run run = inspect(t.env, "--dot '%s'", t.file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(strncmp(run.output, "digraph ", 8) == 0, "%s", run.output);
	ck_assert_msg(test_contains(run.output, "f0_o0 [label=\"libroot.so\\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, " -> f0_o") && test_contains(run.output, "[label=\"ld_library_path\"]"), "%s", run.output);
	size_t length = strlen(run.output);
	ck_assert_msg(length > 2 && strcmp(run.output + length - 2, "}\n") == 0, "%s", run.output);
	ck_assert_uint_eq(test_count(run.output, "\"") % 2, 0);
}
END_TEST

START_TEST(test_text_has_no_colour_off_a_terminal)
{
	struct two_copies t = make_two_copies("--enable-new-dtags");
	struct test_run run = inspect(t.env, "'%s'", t.file);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("libleaf.so.1 => %s [ld_library_path]", t.in_b)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "\033["), "%s", run.output);
}
END_TEST

START_TEST(test_text_has_colour_on_a_terminal_unless_no_color)
{
	/* script(1) gives the inspector a terminal. */
	const char *which[] = { "/bin/sh", "-c", "command -v script", NULL };
	struct test_run found = test_run(which, NULL, 30);
	if (found.status != 0)
		return; /* no script(1) here: util-linux's */
	struct two_copies t = make_two_copies("--enable-new-dtags");
	char *command = test_format("'%s' '%s'", test_setting("NVI_INSPECT"), t.file);
	const char *argv[] = { "script", "-qec", command, "/dev/null", NULL };
	const char *color_env[] = { t.env[0], "LD_PRELOAD=", "NO_COLOR=", NULL };
	struct test_run run = test_run(argv, color_env, 60);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "\033["), "%d: %s", run.status, run.output);
	const char *plain_env[] = { t.env[0], "LD_PRELOAD=", "NO_COLOR=1", NULL };
	run = test_run(argv, plain_env, 60);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "libleaf.so.1 => ") && !test_contains(run.output, "\033["), "%d: %s",
		      run.status, run.output);
}
END_TEST

START_TEST(test_exit_status)
{
	const char *env[] = { "LD_PRELOAD=", NULL };
	struct { const char *args; int status; const char *says; } rows[] = {
		{ "", 2, "no FILE" },
		{ "--no-such-option /bin/sh", 2, "unknown option" },
		{ "--policy sometimes /bin/sh", 2, "not one of fallback, coherent, off" },
		{ "--json --dot /bin/sh", 2, "go alone" },
		{ "--pid zero /bin/sh", 2, "not a process id" },
		{ "--origin relative/folder /bin/sh", 2, "absolute" },
		{ "--policy", 2, "needs a value" },
		{ "/nonexistent/file", 2, "/nonexistent/file: No such file or directory" },
		{ "--help", 0, "Usage: nvinterpose-inspect" },
		{ "--version", 0, "nvinterpose-inspect 0." },
		{ "--families", 0, "nvJitLink" },
		{ "--families --json", 0, "{\"family\":\"cusparse\",\"linux_stem\":\"libcusparse\"" },
		{ "--all /bin/sh", 0, "libc.so.6 => " },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct test_run run = inspect(env, "%s", rows[i].args);
		ck_assert_msg(run.status == rows[i].status && test_contains(run.output, rows[i].says), "'%s': status %d, expected %d and '%s':\n%s",
			      rows[i].args, run.status, rows[i].status, rows[i].says, run.output);
	}
}
END_TEST

/* ---- hostile files ----------------------------------------------------------------------------- */

/* Files that are not libraries, made here: (name, how to make it). */
static void make_hostile_files(const char *folder, char ***paths, size_t *count)
{
	static const char *names[] = { "empty", "text", "folder", "loop", "dangling", "fifo", "zero" };
	*count = sizeof(names) / sizeof(names[0]);
	*paths = calloc(*count, sizeof(char *));
	for (size_t i = 0; i < *count; i++)
		(*paths)[i] = test_format("%s/%s", folder, names[i]);
	test_write_file((*paths)[0], "");
	test_write_file((*paths)[1], "/* GNU ld script */\nGROUP ( libc.so.6 )\n");
	test_mkdirs((*paths)[2]);
	ck_assert_int_eq(symlink((*paths)[3], (*paths)[3]), 0);
	ck_assert_int_eq(symlink(test_format("%s/nowhere", folder), (*paths)[4]), 0);
	ck_assert_int_eq(mkfifo((*paths)[5], 0600), 0);
	ck_assert_int_eq(symlink("/dev/zero", (*paths)[6]), 0);
}

START_TEST(test_hostile_files_inspected_end_with_a_message)
{
	char *folder = test_tmpdir();
	char **paths;
	size_t count;
	make_hostile_files(folder, &paths, &count);
	const char *env[] = { "LD_PRELOAD=", NULL };
	for (size_t i = 0; i < count; i++) {
		struct test_run run = inspect(env, "'%s'", paths[i]);
		ck_assert_msg(run.status == 2 && test_contains(run.output, test_format("nvinterpose-inspect: %s: ", paths[i])),
			      "%s: status %d (137: it blocked):\n%s", paths[i], run.status, run.output);
	}
	struct test_run run = inspect(env, "/dev/zero");
	ck_assert_msg(run.status == 2 && test_contains(run.output, "/dev/zero: "), "%d: %s", run.status, run.output);
}
END_TEST

/* Every file of the broken-ELF corpus made from a stand-in, inspected: an answer or a message,
   promptly, never a signal. */
START_TEST(test_broken_elf_files_never_crash_the_inspector)
{
	char *folder = test_tmpdir();
	char *source = test_format("%s/source.so", folder);
	test_build_library("needer.c", source, "libsource.so.1",
			   test_format("'%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'", leaf_in(test_format("%s/lib", folder), 1)));
	char *corpus = test_mkdirs(test_format("%s/corpus", folder)) ? test_format("%s/corpus", folder) : NULL;
	struct elf_corpus_file *files;
	size_t count = elf_corpus_write(source, corpus, &files);
	ck_assert_uint_gt(count, 20);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", NULL };
	for (size_t i = 0; i < count; i++) {
		struct test_run run = inspect(env, "--json '%s'", files[i].path);
		ck_assert_msg(run.status <= 2 && run.output[0], "%s (%s): status %d:\n%s", files[i].path, files[i].name, run.status, run.output);
		free(run.output);
	}
	elf_corpus_free(files, count);
}
END_TEST

/* The same files where the loader searches for a dependency: the inspector says what the loader would
   do there (take it, pass over it, or stop) and never blocks on the FIFO. */
START_TEST(test_hostile_files_on_the_search_path_never_block)
{
	char *folder = test_tmpdir();
	char *victim = test_format("%s/libvictim.so.1", test_mkdirs(test_format("%s/v", folder)));
	test_build_library("value.c", victim, "libvictim.so.1", "");
	char *file = test_format("%s/root.so", folder);
	test_build_library("needer.c", file, "libroot.so", test_format("'%s' -Wl,--enable-new-dtags,-rpath,%s/v", victim, folder));
	char **paths;
	size_t count;
	make_hostile_files(test_mkdirs(test_format("%s/h", folder)), &paths, &count);
	struct elf_corpus_file *corpus;
	size_t corpus_count = elf_corpus_write(victim, test_mkdirs(test_format("%s/corpus", folder)), &corpus);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", NULL };
	for (size_t i = 0; i < count + corpus_count; i++) {
		const char *candidate = i < count ? paths[i] : corpus[i - count].path;
		unlink(victim);
		rmdir(victim);
		ck_assert_int_eq(rename(candidate, victim), 0);
		struct test_run run = inspect(env, "--json '%s'", file);
		ck_assert_msg(run.status == 0 || run.status == 1, "%s: status %d (137: it blocked):\n%s", candidate, run.status, run.output);
		ck_assert_msg(test_contains(run.output, "{\"name\":\"libvictim.so.1\","), "%s:\n%s", candidate, run.output);
		if (i == 5) /* the FIFO */
			ck_assert_msg(test_contains(run.output, "\"how\":\"error\"") && test_contains(run.output, "a FIFO"), "%s", run.output);
		if (i == 2) /* the folder */
			ck_assert_msg(test_contains(run.output, "Is a directory"), "%s", run.output);
		free(run.output);
	}
	elf_corpus_free(corpus, corpus_count);
}
END_TEST

START_TEST(test_hostile_cache_files_are_read_or_refused)
{
	char *folder = test_tmpdir();
	char *file = test_format("%s/root.so", folder);
	test_build_library("value.c", file, "libroot.so", "");
	char *real = test_read_file("/etc/ld.so.cache");
	if (!real)
		return; /* no cache to damage here */
	struct stat st;
	ck_assert_int_eq(stat("/etc/ld.so.cache", &st), 0);
	size_t size = (size_t)st.st_size;
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", NULL };
	char *cache = test_format("%s/ld.so.cache", folder);
	unsigned long long state = 7;
	for (int round = 0; round < 48; round++) {
		FILE *f = fopen(cache, "w");
		size_t keep = round < 16 ? size * (size_t)round / 16 : size;
		fwrite(real, 1, keep, f);
		fclose(f);
		for (int flips = 0; round >= 16 && flips < 8; flips++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			/* the header and the first entries hold the counts and offsets worth lying about */
			long offset = (long)((state >> 33) % (round < 32 ? 256 : size));
			unsigned char byte = (unsigned char)(state >> 17);
			patch(cache, offset, &byte, 1);
		}
		struct test_run run = inspect(env, "--json --cache '%s' '%s'", cache, file);
		ck_assert_msg(run.status == 0 || run.status == 1, "round %d: status %d:\n%s", round, run.status, run.output);
		free(run.output);
	}
}
END_TEST

/* ---- the what-if and mixed origins --------------------------------------------------------------- */

/* A cusparse-like library in a CUDA 12 wheel layout that needs libnvJitLink.so.77, which lies in the
   sibling package folder (and, with system, also in ROOT/system). */
struct wheel {
	char *root, *cusparse_folder, *cusparse, *nvjitlink, *system_nvjitlink;
};

static struct wheel make_wheel(bool system)
{
	struct wheel w;
	w.root = test_tmpdir();
	w.cusparse_folder = test_format("%s/site-packages/nvidia/cusparse/lib", w.root);
	test_mkdirs(w.cusparse_folder);
	w.nvjitlink = test_format("%s/libnvJitLink.so.77", test_mkdirs(test_format("%s/site-packages/nvidia/nvjitlink/lib", w.root)));
	test_build_library("value.c", w.nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value");
	w.system_nvjitlink = test_format("%s/libnvJitLink.so.77", test_mkdirs(test_format("%s/system", w.root)));
	if (system)
		test_build_library("value.c", w.system_nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value");
	w.cusparse = test_format("%s/libcusparse.so.77", w.cusparse_folder);
	test_build_library("needer.c", w.cusparse, "libcusparse.so.77",
			   test_format("-DNEEDED_SYMBOL=nvjitlink_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", w.nvjitlink));
	return w;
}

/* A program linked against the wheel's cuSPARSE, whose nvJitLink lies in the sibling wheel folder:
   the preloaded runtime helps no DT_NEEDED of a program, so the what-if is that of
   nvinterpose-run --audit, whose audit front gives the loader the sibling's copy; the launcher
   with --audit starts the program, as the what-if says. */
START_TEST(test_what_if_of_a_program_is_the_audit_fronts)
{
	struct wheel w = make_wheel(false);
	char *program = test_build_program("linked_main.c", w.root,
					   test_format("-DNEEDED_SYMBOL=needer_value '%s' -Wl,-rpath-link,'%s/site-packages/nvidia/nvjitlink/lib' "
						       "-Wl,--enable-new-dtags,-rpath,'%s'", w.cusparse, w.root, w.cusparse_folder));
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--policy=fallback '%s'", program);
	if (!test_glibc_at_least(2, 34)) {
		ck_assert_msg(test_contains(run.output, "answers nothing before glibc 2.34") &&
				      test_contains(run.output, "the runtime would change nothing here"), "%s", run.output);
		return;
	}
	ck_assert_msg(run.status == 0 && test_contains(run.output, "what-if, policy fallback, audit front (nvinterpose-run --audit): the runtime would\n") &&
			      test_contains(run.output, test_format("  give the loader %s (wheel_sibling) for %s\n", w.nvjitlink, w.cusparse)) &&
			      test_contains(run.output, "<- the audit front gives the loader it"),
		      "%d: %s", run.status, run.output);
	run = inspect(env, "--json --policy=fallback '%s'", program);
	ck_assert_msg(test_contains(run.output, test_format("\"action\":\"audit-answer\",\"path\":\"%s\"", w.nvjitlink)), "%s", run.output);
	/* Without the what-if the program is missing its nvJitLink, as the real loader finds. */
	run = inspect(env, "'%s'", program);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "libnvJitLink.so.77 not found"), "%d: %s", run.status, run.output);
	/* The launcher with --audit starts it, as the what-if says; not in an AddressSanitizer build,
	   whose runtime cannot be preloaded or audited (its sanitizer must come first in a process). */
	if (getenv("NVI_SANITIZE") && strstr(getenv("NVI_SANITIZE"), "address")) {
		printf("the launcher's run in test_what_if_of_a_program_is_the_audit_fronts is left out: an AddressSanitizer build\n");
		return;
	}
	const char *argv[] = { "/bin/sh", "-c", test_format("exec '%s' --audit -- '%s'", test_setting("NVI_RUN"), program), NULL };
	struct test_run real = test_run(argv, (const char *const[]){ NULL }, 60);
	ck_assert_msg(real.status == 0 && test_contains(real.output, "started: "), "%d: %s", real.status, real.output);
}
END_TEST

START_TEST(test_what_if_the_runtime_supplies_the_wheel_sibling)
{
	struct wheel w = make_wheel(false);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json '%s'", w.cusparse);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "{\"name\":\"libnvJitLink.so.77\",\"path\":null,\"how\":\"not_found\",\"family\":\"nvJitLink\""),
		      "%d: %s", run.status, run.output);
	run = inspect(env, "--json --policy fallback --origin '%s' '%s'", w.cusparse_folder, w.cusparse);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"wheel_sibling\",\"family\":\"nvJitLink\",\"object\":2,\"action\":\"preload\",\"instead_of\":null}",
							 w.nvjitlink)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "\"actions\":[{\"name\":\"libnvJitLink.so.77\",\"needed_by\":0,\"action\":\"preload\""), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "\"what_if\":{\"policy\":\"fallback\",\"origins\":["), "%s", run.output);
	/* A registered origin elsewhere serves too; the text says what the runtime would do. */
	const char *elsewhere = test_mkdirs(test_format("%s/elsewhere", w.root));
	ck_assert_int_eq(rename(w.nvjitlink, test_format("%s/libnvJitLink.so.77", elsewhere)), 0);
	run = inspect(env, "--origin '%s' '%s'", elsewhere, w.cusparse);
	ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("libnvJitLink.so.77 => %s/libnvJitLink.so.77 [registered_origin]", elsewhere)) &&
		      test_contains(run.output, "what-if, policy fallback") && test_contains(run.output, "the runtime would"),
		      "%d: %s", run.status, run.output);
	/* So does NVINTERPOSE_PATH (--path, or the environment's). */
	run = inspect(env, "--json --policy fallback --path '%s' '%s'", elsewhere, w.cusparse);
	ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s/libnvJitLink.so.77\",\"how\":\"nvinterpose_path\"", elsewhere)),
		      "%d: %s", run.status, run.output);
	const char *with_path[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", test_format("NVINTERPOSE_PATH=%s", elsewhere), NULL };
	run = inspect(with_path, "--json --policy fallback '%s'", w.cusparse);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "\"how\":\"nvinterpose_path\""), "%d: %s", run.status, run.output);
	/* Under policy off, nothing changes. */
	run = inspect(env, "--policy off --origin '%s' '%s'", elsewhere, w.cusparse);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "the runtime would change nothing here"), "%d: %s", run.status, run.output);
}
END_TEST

/* The sibling's nvJitLink cut short inside its last load segment (an interrupted install): every
   header still reads, but the runtime skips a copy the loader would map past its end, so the
   what-if supplies nothing under fallback, and under coherent keeps the loader's good copy. */
START_TEST(test_what_if_skips_a_copy_cut_short_as_the_runtime_does)
{
	for (int system = 0; system < 2; system++) {
		struct wheel w = make_wheel(system);
		test_build_library("value.c", w.nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value " STANDIN_PADDING);
		standin_cut_library(w.nvjitlink, STANDIN_CUT_DATA);
		const char *env[] = { "LD_PRELOAD=", test_format("LD_LIBRARY_PATH=%s", system ? test_format("%s/system", w.root) : ""),
				      "NVINTERPOSE_PATH=", NULL };
		struct test_run run = inspect(env, "--policy %s --origin '%s' '%s'", system ? "coherent" : "fallback", w.cusparse_folder,
					      w.cusparse);
		ck_assert_msg(test_contains(run.output, "the runtime would change nothing here") && !test_contains(run.output, w.nvjitlink),
			      "%s: %d: %s", system ? "coherent" : "fallback", run.status, run.output);
		ck_assert_msg(run.status == (system ? 0 : 1), "%d: %s", run.status, run.output);
	}
}
END_TEST

/* NVRTC's builtins in two wheel siblings: the what-if names Zeta's, the first in byte order, as
   the runtime takes it whatever the locale (tests/test_preload.c). */
START_TEST(test_what_if_takes_wheel_siblings_in_byte_order)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *nvidia = test_format("%s/site-packages/nvidia", wheel.root);
	char *zeta = test_format("%s/libnvrtc-builtins.so.77.1", test_mkdirs(test_format("%s/Zeta/lib", nvidia)));
	standin_builtins(zeta, 1, NULL);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", test_mkdirs(test_format("%s/alpha/lib", nvidia))), 2, NULL);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--policy fallback --origin '%s' '%s'", wheel.lib, wheel.nvrtc);
	ck_assert_msg(test_contains(run.output, test_format("libnvrtc-builtins.so.77.1 => %s [wheel_sibling]", zeta)), "%d: %s", run.status,
		      run.output);
}
END_TEST

START_TEST(test_mixed_origins_get_a_warning_and_coherent_fixes_them)
{
	struct wheel w = make_wheel(true);
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s/system", w.root), "LD_PRELOAD=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "'%s'", w.cusparse);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("warning: mixed origins: %s (cusparse) gets libnvJitLink.so.77 from %s (ld_library_path); its own installation holds %s",
							 w.cusparse, w.system_nvjitlink, w.nvjitlink)), "%s", run.output);
	run = inspect(env, "--json --policy coherent '%s'", w.cusparse);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"wheel_sibling\",\"family\":\"nvJitLink\",\"object\":2,\"action\":\"coherent\",\"instead_of\":\"%s\"}",
							 w.nvjitlink, w.system_nvjitlink)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "mixed origins"), "%s", run.output);
	/* fallback keeps the loader's choice, and the warning. */
	run = inspect(env, "--json --policy fallback '%s'", w.cusparse);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"ld_library_path\"", w.system_nvjitlink)) &&
		      test_contains(run.output, "mixed origins"), "%s", run.output);
}
END_TEST

/* A child that loads each of paths by path, in order, and waits to be killed; returns once it has
   loaded them all. */
static pid_t start_loading_process(const char *folder, const char *const *paths, size_t count)
{
	char *ready = test_format("%s/ready", folder);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		bool loaded = true;
		for (size_t i = 0; i < count; i++)
			loaded = loaded && dlopen(paths[i], RTLD_NOW);
		if (loaded)
			test_write_file(ready, "");
		pause();
		_exit(0);
	}
	for (int i = 0; i < 3000 && access(ready, F_OK) != 0; i++)
		usleep(10000);
	if (access(ready, F_OK) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ck_abort_msg("the loading process did not start");
	}
	unlink(ready);
	return pid;
}

START_TEST(test_what_if_reads_the_origins_of_a_running_process)
{
	/* A process that has the wheel's nvJitLink mapped (loaded by path), waiting: its folder is an
	   origin, and its nvJitLink counts as loaded. */
	struct wheel w = make_wheel(false);
	const char *paths[] = { w.nvjitlink };
	pid_t pid = start_loading_process(w.root, paths, 1);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json --pid %d '%s'", (int)pid, w.cusparse);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"already_loaded\"", w.nvjitlink)),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("\"pid\":%d", (int)pid)), "%s", run.output);
}
END_TEST

/* A process that has another installation's nvJitLink loaded: the wheel's cuSPARSE would get it
   (first loaded wins). Each policy's what-if says what that policy does: none takes the wheel's own
   copy, so none is said to. */
START_TEST(test_pid_what_if_says_first_loaded_wins_under_every_policy)
{
	struct wheel w = make_wheel(true);
	const char *paths[] = { w.system_nvjitlink };
	pid_t pid = start_loading_process(w.root, paths, 1);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	const char *policies[] = { "fallback", "coherent" };
	struct test_run runs[2];
	for (int i = 0; i < 2; i++)
		runs[i] = inspect(env, "--policy=%s --pid %d '%s'", policies[i], (int)pid, w.cusparse);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(test_contains(runs[i].output, test_format("gets libnvJitLink.so.77 from %s", w.system_nvjitlink)) &&
				      test_contains(runs[i].output, "first loaded wins under every policy, coherent too") &&
				      !test_contains(runs[i].output, "policy would take it") &&
				      test_contains(runs[i].output, "the runtime would change nothing here"),
			      "%s: %s", policies[i], runs[i].output);
	}
}
END_TEST

START_TEST(test_what_if_takes_a_processs_origins_in_the_order_it_loaded_them)
{
	/* Loaded in the order z, a, m: later mappings sit lower in the address space, so the order of
	   /proc/PID/maps is not the order of loading. */
	char *root = test_tmpdir();
	const char *folders[] = { "z", "a", "m" }, *names[] = { "libnvJitLink.so.77", "libcufft.so.77", "libcurand.so.77" };
	char *paths[3];
	for (int i = 0; i < 3; i++) {
		paths[i] = test_format("%s/%s", test_mkdirs(test_format("%s/%s", root, folders[i])), names[i]);
		test_build_library("value.c", paths[i], names[i], test_format("-DVALUE_SYMBOL=value_%d", i));
	}
	pid_t pid = start_loading_process(root, (const char *const *)paths, 3);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json --pid=%d /bin/true", (int)pid);
	struct test_run text = inspect(env, "--pid=%d /bin/true", (int)pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_msg(test_contains(run.output, test_format("\"origins\":[\"%s/z\",\"%s/a\",\"%s/m\"]", root, root, root)) &&
		      test_contains(run.output, "\"origin_order\":\"load\",\"origin_order_problem\":null"), "%.3000s", run.output);
	ck_assert_msg(test_contains(text.output, test_format("origins %s/z, %s/a, %s/m (from process %d, in the order it loaded them)", root, root, root, (int)pid)),
		      "%.3000s", text.output);
}
END_TEST

/* text written to path, by a process that may call no Check function. */
static bool write_quietly(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	bool written = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	if (fd >= 0)
		close(fd);
	return written;
}

/* A copy of file at path, by a process that may call no Check function. */
static bool copy_quietly(const char *file, const char *path)
{
	char buffer[65536];
	int in = open(file, O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n = 0;
	while (in >= 0 && out >= 0 && (n = read(in, buffer, sizeof(buffer))) > 0)
		if (write(out, buffer, (size_t)n) != n)
			n = -1;
	bool copied = in >= 0 && out >= 0 && n == 0;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return copied;
}

/* The forked child of a container: in a mount namespace of its own (and, for another user than
   root, a user namespace whose root it is), a tmpfs on hidden that holds a copy of library, which
   it loads from there. Writes one byte to ready once loaded, or the reason it could not, and waits. */
static void run_container(const char *hidden, const char *library, int ready)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char *copy = test_format("%s/%s", hidden, strrchr(library, '/') + 1);
	const char *failed = NULL;
	if (uid != 0 && unshare(CLONE_NEWUSER) != 0)
		failed = "no user namespace may be made here";
	/* Its group too: the tmpfs of the namespace takes files only from users and groups it maps. */
	else if (uid != 0 && (!write_quietly("/proc/self/uid_map", test_format("0 %u 1\n", (unsigned)uid)) ||
			      !write_quietly("/proc/self/setgroups", "deny") || !write_quietly("/proc/self/gid_map", test_format("0 %u 1\n", (unsigned)gid))))
		failed = "this user cannot be mapped to root in a user namespace";
	else if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		failed = "no mount namespace may be made here";
	else if (mount("tmpfs", hidden, "tmpfs", 0, "mode=0755") != 0)
		failed = "no tmpfs may be mounted in it";
	else if (!copy_quietly(library, copy) || !dlopen(copy, RTLD_NOW))
		failed = "the library could not be loaded from the tmpfs";
	(void)!write(ready, failed ? failed : "", failed ? strlen(failed) : 1);
	close(ready);
	if (!failed)
		pause();
	_exit(0);
}

/* --pid of a process in another mount namespace (a container): the files its mappings name are
   that namespace's, which the inspector reads through /proc/PID/root, and says so; the same path
   in the inspector's namespace holds nothing. */
START_TEST(test_what_if_reads_a_process_of_another_mount_namespace_through_its_root)
{
	struct wheel w = make_wheel(false);
	char *hidden = (char *)test_mkdirs(test_format("%s/hidden", w.root));
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(ready[0]);
		run_container(hidden, w.nvjitlink, ready[1]);
	}
	close(ready[1]);
	char said[256] = "";
	ssize_t n = read(ready[0], said, sizeof(said) - 1);
	close(ready[0]);
	said[n > 0 ? (size_t)n : 0] = '\0';
	if (n != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		printf("skipped: test_what_if_reads_a_process_of_another_mount_namespace_through_its_root: %s\n", said);
		return;
	}
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json --pid %d '%s'", (int)pid, w.cusparse);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	char *root = test_format("/proc/%d/root", (int)pid);
	ck_assert_msg(access(test_format("%s/libnvJitLink.so.77", hidden), F_OK) != 0, "the tmpfs is seen here");
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s%s/libnvJitLink.so.77\",\"how\":\"already_loaded\"",
							 root, hidden)),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("\"root\":\"%s\"", root)) &&
			      test_contains(run.output, test_format("\"origins\":[\"%s%s\"]", root, hidden)),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("nvinterpose-inspect: warning: process %d lives in another mount namespace (a container): "
							 "its files are read through %s", (int)pid, root)),
		      "%s", run.output);
}
END_TEST

/* The state of process pid (its State: letter), or 0 once it is gone. */
static char state_of(pid_t pid)
{
	char *status = test_read_file(test_format("/proc/%d/status", (int)pid));
	char *state = status ? strstr(status, "\nState:\t") : NULL;
	return state ? state[8] : 0;
}

/* --pid of a process that has exited (a zombie: its pid stays until its parent waits) or of none
   at all: said, in text and in --json (a document whose "error" says it), exit 2. */
START_TEST(test_pid_of_an_exited_process_is_refused)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	for (int i = 0; i < 500 && state_of(pid) != 'Z'; i++)
		usleep(10000);
	ck_assert_int_eq(state_of(pid), 'Z');
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	char *message = test_format("--pid %d: the process has exited (a zombie, not yet waited for by its parent): nothing is loaded in it",
				    (int)pid);
	struct test_run text = inspect(env, "--pid %d /bin/true", (int)pid);
	struct test_run json = inspect(env, "--json --pid %d /bin/true 2>/dev/null", (int)pid);
	waitpid(pid, NULL, 0);
	ck_assert_msg(text.status == 2 && strcmp(text.output, test_format("nvinterpose-inspect: %s\n", message)) == 0, "%d: %s", text.status,
		      text.output);
	ck_assert_msg(json.status == 2 && test_json_document(json.output) &&
			      test_contains(json.output, test_format("\"files\":[],\"glibc_hwcaps\":null,\"missing\":0,\"cut\":false,\"error\":\"%s\",\"status\":2}",
								     message)),
		      "%d: %s", json.status, json.output);
	/* Reaped, it is no process at all. */
	text = inspect(env, "--pid %d /bin/true", (int)pid);
	ck_assert_msg(text.status == 2 && strcmp(text.output, test_format("nvinterpose-inspect: --pid %d: no such process\n", (int)pid)) == 0,
		      "%d: %s", text.status, text.output);
}
END_TEST

/* --json writes a document for every error of the run, not only for files it cannot read: a --pid
   whose mappings the user may not read (a root process, seen by nobody), an --origin that is no
   folder. */
START_TEST(test_json_run_errors_are_documents)
{
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json --origin /nonexistent/folder /bin/true 2>/dev/null");
	ck_assert_msg(run.status == 2 && test_json_document(run.output) &&
			      test_contains(run.output, "\"error\":\"--origin /nonexistent/folder: No such file or directory\",\"status\":2}"),
		      "%d: %s", run.status, run.output);
	/* A process of root's, asked by another user. */
	struct stat init;
	bool root = geteuid() == 0, setpriv = access("/usr/bin/setpriv", X_OK) == 0;
	if ((root && !setpriv) || (!root && (stat("/proc/1", &init) != 0 || init.st_uid != 0))) {
		printf("skipped: test_json_run_errors_are_documents, for a process the user may not read: %s\n",
		       root ? "no setpriv to be nobody with" : "no process of root's to ask for");
		return;
	}
	int pid = root ? (int)getpid() : 1;
	char *command = test_format("exec %s'%s' --json --pid %d /bin/true 2>/dev/null", root ? "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " : "",
				    test_setting("NVI_INSPECT"), pid);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 2 && test_json_document(run.output) &&
			      test_contains(run.output, test_format("\"error\":\"--pid %d: cannot read /proc/%d/maps\",\"status\":2}", pid, pid)),
		      "%d: %s", run.status, run.output);
}
END_TEST

/* The inspector's own messages quote values from the command line: control characters as \xNN. */
START_TEST(test_messages_show_control_characters_escaped)
{
	const char *env[] = { NULL };
	struct test_run run = inspect(env, "--pid \"$(printf 'x\\033[2J\\ny')\" /bin/true");
	ck_assert_int_eq(run.status, 2);
	ck_assert_str_eq(run.output, "nvinterpose-inspect: --pid 'x\\x1b[2J\\x0ay': not a process id\n"
				     "Try 'nvinterpose-inspect --help' for more information.\n");
}
END_TEST

static bool have_python3(void)
{
	const char *which[] = { "/bin/sh", "-c", "command -v python3", NULL };
	return test_run(which, NULL, 30).status == 0;
}

/* ---- run-time dependents ------------------------------------------------------------------------ */

/* An NVRTC-like libnvrtc.so.77 (no RUNPATH) in the CUDA 13 wheel layout, site-packages/nvidia/cu13/lib,
   that asks for libnvrtc-builtins.so.77.0 by bare name when it compiles. No real package ships
   those names, so no ld.so.cache can answer. */
struct cu13_wheel {
	char *root, *lib, *nvrtc;
};

static struct cu13_wheel make_cu13_wheel(void)
{
	struct cu13_wheel w;
	w.root = test_tmpdir();
	w.lib = test_format("%s/site-packages/nvidia/cu13/lib", w.root);
	test_mkdirs(w.lib);
	w.nvrtc = test_format("%s/libnvrtc.so.77", w.lib);
	test_build_library("nvrtc_like.c", w.nvrtc, "libnvrtc.so.77", "-DBUILTINS='\"libnvrtc-builtins.so.77.0\"'");
	return w;
}

static char *builtins_in(const char *folder, int value)
{
	char *path = test_format("%s/libnvrtc-builtins.so.77.0", test_mkdirs(folder));
	test_build_library("value.c", path, "libnvrtc-builtins.so.77.0", test_format("-DVALUE=%d", value));
	return path;
}

/* What the real loader does when the NVRTC-like library compiles (its dlopen of the builtins). */
static struct test_run compile_with(const char *const *env, const char *nvrtc)
{
	return test_probe(env, test_format("call '%s' nvrtc_like_compile", nvrtc));
}

START_TEST(test_a_missing_required_run_time_dependent_is_a_miss)
{
	struct cu13_wheel w = make_cu13_wheel();
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	/* Nowhere: named as the file names it, every folder its dlopen would search listed. */
	struct test_run run = inspect(env, "--json '%s'", w.nvrtc);
	ck_assert_msg(run.status == 1, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "\"runtime\":[{\"name\":\"libnvrtc-builtins.so.77.0\",\"path\":null,\"how\":\"not_found\",\"family\":\"nvrtc-builtins\",\"object\":null,\"required\":true,\"looked\":["),
		      "%.3000s", run.output);
	ck_assert_msg(test_contains(run.output, "\"how\":\"default\",\"result\":\"absent\""), "%.3000s", run.output);
	ck_assert_msg(test_json_document(run.output), "%.3000s", run.output);
	ck_assert_msg(test_contains(run.output, "\"would_supply\":[],"), "nothing the runtime could supply: %.3000s", run.output);
	run = inspect(env, "'%s'", w.nvrtc);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "libnvrtc-builtins.so.77.0 not found (nvrtc-builtins; run time, required)") &&
		      test_contains(run.output, "1 dependency not found"), "%d: %.3000s", run.status, run.output);
	/* Beside NVRTC it is still not found: NVRTC has no RUNPATH, and its dlopen does not search its
	   own folder. The real loader agrees: the compile fails. */
	builtins_in(w.lib, 42);
	run = inspect(env, "--json '%s'", w.nvrtc);
	ck_assert_msg(run.status == 1, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "{\"name\":\"libnvrtc-builtins.so.77.0\",\"path\":null,\"how\":\"not_found\",\"family\":\"nvrtc-builtins\",\"object\":null,\"required\":true,\"looked\":["),
		      "%.3000s", run.output);
	struct test_run real = compile_with(env, w.nvrtc);
	ck_assert_msg(test_contains(real.output, "failed to open libnvrtc-builtins.so.77.0"), "%s", real.output);
	/* The loader's view says what the default policy would supply, and keeps the loader's status. */
	ck_assert_msg(test_contains(run.output, test_format("\"would_supply\":[{\"name\":\"libnvrtc-builtins.so.77.0\",\"for\":\"%s\",\"path\":\"%s/libnvrtc-builtins.so.77.0\","
							    "\"how\":\"registered_origin\",\"run_time\":true}]",
							    w.nvrtc, w.lib)), "%.3000s", run.output);
	run = inspect(env, "'%s'", w.nvrtc);
	ck_assert_msg(run.status == 1 && test_contains(run.output, test_format("note: under the default policy the runtime would supply libnvrtc-builtins.so.77.0 for %s "
									    "from %s/libnvrtc-builtins.so.77.0 (registered_origin); --policy=fallback shows it\n",
									    w.nvrtc, w.lib)), "%d: %.3000s", run.status, run.output);
	/* The what-if: the runtime supplies it from NVRTC's folder, and with the runtime the compile works. */
	run = inspect(env, "--policy=fallback '%s'", w.nvrtc);
	ck_assert_msg(run.status == 0, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("libnvrtc-builtins.so.77.0 => %s/libnvrtc-builtins.so.77.0 [registered_origin] nvrtc-builtins (run time, required) <- the runtime loads it first",
							 w.lib)), "%.3000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("  supply %s/libnvrtc-builtins.so.77.0 (registered_origin) for %s's dlopen of libnvrtc-builtins.so.77.0",
							 w.lib, w.nvrtc)), "%.3000s", run.output);
	/* Not in an AddressSanitizer build: there ASan's runtime must come first in a process, before
	   any preload (HACKING.md, Sanitizers). */
	const char *sanitize = getenv("NVI_SANITIZE");
	if (sanitize && strstr(sanitize, "address")) {
		printf("the preloaded compile of test_a_missing_required_run_time_dependent_is_a_miss is left out: an AddressSanitizer build\n");
		return;
	}
	const char *preloaded[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", standin_preload(), NULL };
	real = compile_with(preloaded, w.nvrtc);
	ck_assert_msg(test_contains(real.output, "42"), "%s", real.output);
}
END_TEST

/* The loader's view names what the runtime would supply from NVINTERPOSE_PATH, with the what-if's
   trust rule: a folder others can write is skipped, and nothing is named. */
START_TEST(test_default_view_names_what_nvinterpose_path_would_supply_when_trusted)
{
	struct cu13_wheel w = make_cu13_wheel();
	char *extra = test_format("%s/extra", w.root);
	char *builtins = builtins_in(extra, 42);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", test_format("NVINTERPOSE_PATH=%s", extra), NULL };
	struct test_run run = inspect(env, "'%s'", w.nvrtc);
	ck_assert_msg(run.status == 1 && test_contains(run.output, test_format("note: under the default policy the runtime would supply libnvrtc-builtins.so.77.0 for %s "
									    "from %s (nvinterpose_path); --policy=fallback shows it\n",
									    w.nvrtc, builtins)), "%d: %.3000s", run.status, run.output);
	ck_assert_int_eq(chmod(extra, 0777), 0);
	run = inspect(env, "'%s'", w.nvrtc);
	ck_assert_msg(run.status == 1 && !test_contains(run.output, "would supply"), "%d: %.3000s", run.status, run.output);
}
END_TEST

START_TEST(test_a_run_time_dependent_found_elsewhere_is_a_mixed_origin)
{
	/* The builtins only in another installation on LD_LIBRARY_PATH: found there, as the real loader
	   finds them, and named as a mix under the default policy too. */
	struct cu13_wheel w = make_cu13_wheel();
	char *other = builtins_in(test_format("%s/toolkit/lib64", w.root), 7);
	builtins_in(w.lib, 42);
	const char *env[] = { "LD_PRELOAD=", test_format("LD_LIBRARY_PATH=%s/toolkit/lib64", w.root), "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json '%s'", w.nvrtc);
	ck_assert_msg(run.status == 0, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvrtc-builtins.so.77.0\",\"path\":\"%s\",\"how\":\"ld_library_path\",\"family\":\"nvrtc-builtins\",\"object\":",
							 other)), "%.3000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"kind\":\"mixed-origin\",\"library\":\"%s\",\"dependency\":\"libnvrtc-builtins.so.77.0\",\"got\":\"%s\",\"own\":\"%s/libnvrtc-builtins.so.77.0\",\"how\":\"ld_library_path\",\"run_time\":true,\"text\":\"mixed origins: ",
							 w.nvrtc, other, w.lib)), "%.3000s", run.output);
	struct test_run real = compile_with(env, w.nvrtc);
	ck_assert_msg(test_contains(real.output, "= 7") || test_contains(real.output, " 7\n"), "%s", real.output);
	run = inspect(env, "'%s'", w.nvrtc);
	ck_assert_msg(test_contains(run.output, "warning: mixed origins: ") && test_contains(run.output, "at run time from") &&
		      test_contains(run.output, "the runtime's default policy, fallback, keeps the loader's choice; the coherent policy would take it"),
		      "%.3000s", run.output);
	/* The coherent what-if takes the wheel's own copy. */
	run = inspect(env, "--json --policy=coherent '%s'", w.nvrtc);
	ck_assert_msg(test_contains(run.output, test_format("\"path\":\"%s/libnvrtc-builtins.so.77.0\",\"how\":\"registered_origin\",\"family\":\"nvrtc-builtins\",\"object\":", w.lib)) &&
		      test_contains(run.output, test_format("\"action\":\"coherent\",\"instead_of\":\"%s\"", other)), "%.3000s", run.output);
}
END_TEST

START_TEST(test_a_missing_optional_run_time_dependent_is_shown_and_not_a_miss)
{
	/* A cuDNN-like libcudnn.so.77 (RUNPATH $ORIGIN) that names its sub-libraries by their bases, as
	   cuDNN 9 does, whose graph library is beside it; the ops, cnn and adv libraries, which it loads
	   only when they are used, are not. */
	char *root = test_tmpdir();
	char *lib = test_format("%s/site-packages/nvidia/cudnn/lib", root);
	test_mkdirs(lib);
	char *cudnn = test_format("%s/libcudnn.so.77", lib);
	test_build_library("value.c", cudnn, "libcudnn.so.77",
			   "-Wl,--enable-new-dtags,-rpath,'$ORIGIN' "
			   "-DCARRIES='\"libcudnn_graph.so\",\"libcudnn_ops.so\",\"libcudnn_cnn.so\",\"libcudnn_adv.so\"'");
	char *graph = test_format("%s/libcudnn_graph.so.77", lib);
	test_build_library("value.c", graph, "libcudnn_graph.so.77", "");
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json '%s'", cudnn);
	ck_assert_msg(run.status == 0, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libcudnn_graph.so.77\",\"path\":\"%s\",\"how\":\"runpath\",\"family\":\"cudnn_graph\",\"object\":", graph)) &&
		      test_contains(run.output, "\"required\":true}"), "%.3000s", run.output);
	ck_assert_msg(test_contains(run.output, "{\"name\":\"libcudnn_ops.so*\",\"path\":null,\"how\":\"not_found\",\"family\":\"cudnn_ops\",\"object\":null,\"required\":false,"),
		      "%.3000s", run.output);
	/* (and the graph library's own optional ones, but NVRTC, which this host may hold) */
	ck_assert_msg(test_contains(run.output, "\"missing\":0,\"optional_missing\":"), "%.3000s", run.output);
	run = inspect(env, "'%s'", cudnn);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "libcudnn_adv.so* not found (cudnn_adv; run time, optional)") &&
		      test_contains(run.output, "optional run-time dependents not found") && !test_contains(run.output, "dependency not found"),
		      "%d: %.3000s", run.status, run.output);
	/* The graph library is required. */
	unlink(graph);
	run = inspect(env, "'%s'", cudnn);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "libcudnn_graph.so* not found (cudnn_graph; run time, required)"), "%d: %s",
		      run.status, run.output);
}
END_TEST

/* A library's run-time dependents are those its own file names (its strings, as strings(1) shows
   them), by the name it carries: a cuFFT-like library that names neither nvJitLink nor NVRTC has
   none, whatever lies beside it (Debian's cuFFT 10 beside CUDA 13's libraries); one that names
   libnvJitLink.so.77 asks for that, not for the .so.78 beside it; a cuBLASLt-like one that names
   the unversioned libnvrtc.so (cuBLASLt 11) is shown asking for that. */
START_TEST(test_run_time_dependents_are_those_the_file_names)
{
	char *lib = test_format("%s/site-packages/nvidia/cu13/lib", test_tmpdir());
	test_mkdirs(lib);
	char *cufft = test_format("%s/libcufft.so.77", lib), *cublaslt = test_format("%s/libcublasLt.so.77", lib);
	test_build_library("value.c", test_format("%s/libnvJitLink.so.78", lib), "libnvJitLink.so.78", "-DVALUE_SYMBOL=nvjitlink_value");
	test_build_library("value.c", test_format("%s/libnvrtc.so.77", lib), "libnvrtc.so.77", "-DVALUE_SYMBOL=nvrtc_value");
	test_build_library("value.c", cufft, "libcufft.so.77", "-Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--cache=none '%s'", cufft);
	ck_assert_msg(run.status == 0 && !test_contains(run.output, "run time") && !test_contains(run.output, "mixed origins"), "%d: %s",
		      run.status, run.output);
	run = inspect(env, "--json --cache=none '%s'", cufft);
	ck_assert_msg(test_contains(run.output, "\"runtime\":[]"), "%s", run.output);
	test_build_library("value.c", cufft, "libcufft.so.77", "-Wl,--enable-new-dtags,-rpath,'$ORIGIN' -DCARRIES='\"libnvJitLink.so.77\"'");
	run = inspect(env, "--cache=none '%s'", cufft);
	ck_assert_msg(test_contains(run.output, "libnvJitLink.so.77 not found (nvJitLink; run time, optional)") &&
		      !test_contains(run.output, "libnvJitLink.so.78") && !test_contains(run.output, "libnvrtc"), "%s", run.output);
	test_build_library("value.c", cublaslt, "libcublasLt.so.77", "-Wl,--enable-new-dtags,-rpath,'$ORIGIN' -DCARRIES='\"libnvrtc.so\"'");
	run = inspect(env, "--cache=none '%s'", cublaslt);
	ck_assert_msg(test_contains(run.output, "libnvrtc.so not found (nvrtc; run time, optional)") && !test_contains(run.output, "libnvrtc.so.77"),
		      "%s", run.output);
}
END_TEST

/* Debian's cuFFT 10 (CUDA 11.8), where it is installed: it names neither NVRTC nor nvJitLink, so
   the inspector lists no run-time dependent for it, and no CUDA 13 library (this machine's toolkit,
   in ld.so.cache) mixes with it. */
START_TEST(test_debian_cufft_10_has_no_run_time_dependent)
{
	const char *cufft = access("/usr/lib/x86_64-linux-gnu/libcufft.so.10", R_OK) == 0 ? "/usr/lib/x86_64-linux-gnu/libcufft.so.10"
			    : access("/usr/lib/aarch64-linux-gnu/libcufft.so.10", R_OK) == 0 ? "/usr/lib/aarch64-linux-gnu/libcufft.so.10"
											       : NULL;
	if (!cufft) {
		printf("skipped: Debian's libcufft10 (libcufft.so.10) is not installed\n");
		return;
	}
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "'%s'", cufft);
	ck_assert_msg(!test_contains(run.output, "run time") && !test_contains(run.output, "mixed origins") && !test_contains(run.output, ".so.13"),
		      "%d: %s", run.status, run.output);
}
END_TEST

/* ---- what the text shows ------------------------------------------------------------------------- */

START_TEST(test_system_libraries_are_folded_unless_all)
{
	struct two_copies t = make_two_copies("--enable-new-dtags");
	test_build_library("needer.c", t.file, "libroot.so", test_format("-Wl,--no-as-needed '%s' -Wl,--enable-new-dtags,-rpath,%s/a", t.in_a, t.root));
	struct test_run run = inspect(t.env, "'%s'", t.file);
	ck_assert_msg(run.status == 0, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "libleaf.so.1 => ") && !test_contains(run.output, "libc.so.6 => ") &&
		      test_contains(run.output, "system libraries folded (") && test_contains(run.output, "libc.so.6") &&
		      test_contains(run.output, "--all shows them"), "%.3000s", run.output);
	run = inspect(t.env, "--all '%s'", t.file);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "libc.so.6 => ") && !test_contains(run.output, "folded"), "%.3000s", run.output);
	/* JSON holds every object, each marked. */
	run = inspect(t.env, "--json '%s'", t.file);
	ck_assert_msg(test_contains(run.output, "\"soname\":\"libc.so.6\",\"family\":null,") && test_contains(run.output, "\"system\":true"),
		      "%.3000s", run.output);
	/* A missing system library is never folded. */
	char *root = test_tmpdir();
	char *file = test_format("%s/root.so", root);
	test_build_library("value.c", file, "libroot.so", "-Wl,--no-as-needed -Wl,-z,nodefaultlib");
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	run = inspect(env, "'%s'", file);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "libc.so.6 not found"), "%d: %.3000s", run.status, run.output);
}
END_TEST

START_TEST(test_max_depth_limits_the_tree_shown_not_the_answer)
{
	/* root -> libmid.so.1 -> libleaf.so.1 (RPATH chain); libmid also needs a library that is gone. */
	char *root = test_tmpdir();
	char *leaf = leaf_in(test_format("%s/a", root), 1);
	char *gone = test_format("%s/a/libgone.so.1", root);
	test_build_library("value.c", gone, "libgone.so.1", "-DVALUE_SYMBOL=gone_value");
	char *mid = test_format("%s/a/libmid.so.1", root);
	test_build_library("needer.c", mid, "libmid.so.1", test_format("-Wl,--no-as-needed '%s' '%s'", leaf, gone));
	char *file = test_format("%s/root.so", root);
	test_build_library("needer.c", file, "libroot.so",
			   test_format("-DNEEDED_SYMBOL=needer_value -DNEEDER_SYMBOL=root_value '%s' -Wl,--disable-new-dtags,-rpath,%s/a", mid, root));
	unlink(gone);
	const char *env[] = { "LD_LIBRARY_PATH=", "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--max-depth=1 '%s'", file);
	ck_assert_msg(run.status == 1, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "libmid.so.1 => ") && test_contains(run.output, "(2 more below --max-depth)") &&
		      !test_contains(run.output, "libleaf.so.1 => "), "%.3000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("below --max-depth 1: libgone.so.1 not found, needed by %s", mid)) &&
		      test_contains(run.output, "1 dependency not found"), "%.3000s", run.output);
	run = inspect(env, "--max-depth=2 '%s'", file);
	ck_assert_msg(test_contains(run.output, "libleaf.so.1 => ") && !test_contains(run.output, "below --max-depth"), "%.3000s", run.output);
}
END_TEST

START_TEST(test_usage_errors_have_one_shape)
{
	const char *env[] = { "LD_PRELOAD=", NULL };
	struct { const char *args; const char *says; } rows[] = {
		{ "--families extra", "unexpected argument 'extra': --families takes no FILE" },
		{ "--scan /bin/sh", "unexpected argument '/bin/sh': --scan takes no FILE" },
		{ "--families --dot", "--families writes text or --json, not --dot" },
		{ "--families --policy=off", "--families takes only --json" },
		{ "--python=python3 /bin/sh", "--python goes with --scan" },
		{ "--max-depth=0 /bin/sh", "--max-depth '0': not a number of levels" },
		{ "--max-depth=two /bin/sh", "--max-depth 'two': not a number of levels" },
		{ "--max-objects=-1 /bin/sh", "--max-objects '-1': not a number of objects" },
		{ "--json=yes /bin/sh", "option '--json' takes no value" },
		{ "-x /bin/sh", "unknown option '-x'" },
		{ "--bogus /bin/sh", "unknown option '--bogus'" },
		{ "--cache", "option '--cache' needs a value" },
		{ "--policy=Sometimes /bin/sh", "--policy 'Sometimes': not one of fallback, coherent, off" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct test_run run = inspect(env, "%s", rows[i].args);
		ck_assert_msg(run.status == 2, "'%s': status %d:\n%s", rows[i].args, run.status, run.output);
		ck_assert_msg(strncmp(run.output, "nvinterpose-inspect: ", 21) == 0 && test_contains(run.output, rows[i].says) &&
			      test_contains(run.output, "\nTry 'nvinterpose-inspect --help' for more information.\n") &&
			      test_count(run.output, "\n") == 2, "'%s':\n%s", rows[i].args, run.output);
	}
	/* GNU rules: --opt=value and --opt value alike, options after the files, -- ends them, -V and -h. */
	struct test_run run = inspect(env, "--all /bin/sh --policy=Coherent --max-depth 1");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "what-if, policy coherent"), "%d: %.3000s", run.status, run.output);
	run = inspect(env, "-V");
	ck_assert_msg(run.status == 0 && strncmp(run.output, "nvinterpose-inspect ", 20) == 0, "%.3000s", run.output);
	run = inspect(env, "-h");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "Exit status: 0 ") && test_contains(run.output, " 3 when a tree was cut"),
		      "%.3000s", run.output);
	run = inspect(env, "-- --json");
	ck_assert_msg(run.status == 2 && test_contains(run.output, "nvinterpose-inspect: --json: "), "%d: %.3000s", run.status, run.output);
}
END_TEST

START_TEST(test_families_show_both_wheel_layouts)
{
	const char *env[] = { "LD_PRELOAD=", NULL };
	struct test_run run = inspect(env, "--families");
	ck_assert_int_eq(run.status, 0);
	char *nvrtc = strstr(run.output, "\nnvrtc ");
	ck_assert_ptr_nonnull(nvrtc);
	*strchr(nvrtc + 1, '\n') = '\0';
	ck_assert_msg(test_contains(nvrtc, "nvidia/cuda_nvrtc/lib") && test_contains(nvrtc, "nvidia/cu13/lib") &&
		      test_contains(nvrtc, "loads nvrtc-builtins"), "%s", nvrtc);
	run = inspect(env, "--families");
	char *cudnn = strstr(run.output, "\ncudnn ");
	*strchr(cudnn + 1, '\n') = '\0';
	ck_assert_msg(test_count(cudnn, "nvidia/cudnn/lib") == 2 && test_contains(cudnn, "loads cudnn_graph, and when used cudnn_ops"),
		      "%s", cudnn);
	run = inspect(env, "--families --json");
	ck_assert_msg(test_contains(run.output, "{\"family\":\"nvrtc\",\"linux_stem\":\"libnvrtc\",\"windows_prefix\":\"nvrtc64_\",\"wheel_folder\":\"nvidia/cuda_nvrtc/lib\",\"cu13_wheel_folder\":\"nvidia/cu13/lib\",\"needed\":\"\",\"runtime\":[{\"family\":\"nvrtc-builtins\",\"required\":true}]"),
		      "%.3000s", run.output);
	ck_assert_msg(test_contains(run.output, "\"family\":\"cusolverMg\"") &&
		      test_contains(run.output, "\"cu13_wheel_folder\":\"nvidia/cu13/lib\",\"needed\":\"nvJitLink cublas cublasLt\""), "%.3000s", run.output);
	ck_assert_msg(test_json_document(run.output), "%.3000s", run.output);
}
END_TEST

START_TEST(test_a_cache_that_cannot_be_read_is_said_in_text_mode)
{
	struct two_copies t = make_two_copies("--enable-new-dtags");
	struct test_run run = inspect(t.env, "--cache=/nonexistent/ld.so.cache '%s'", t.file);
	ck_assert_msg(run.status == 0, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "nvinterpose-inspect: warning: --cache: /nonexistent/ld.so.cache: No such file or directory; the loader's cache step is left out"),
		      "%.3000s", run.output);
	run = inspect(t.env, "--cache=none '%s'", t.file);
	ck_assert_msg(run.status == 0 && !test_contains(run.output, "warning"), "%.3000s", run.output);
}
END_TEST

/* The fields of every part of the document are those docs/inspector.md lists, and every id names
   an object of the same file: checked by Python's json over a run with a what-if, a miss, run-time
   entries and a mixed origin. */
static const char schema_check[] =
	"import json, sys\n"
	"d = json.load(sys.stdin)\n"
	"def same(what, keys, expected):\n"
	"    if set(keys) != set(expected):\n"
	"        sys.exit('%s: %s, not %s' % (what, sorted(keys), sorted(expected)))\n"
	"same('document', d, ['inspector', 'version', 'schema', 'loader', 'what_if', 'files', 'glibc_hwcaps', 'missing', 'cut', 'error', 'status'])\n"
	"same('loader', d['loader'], ['interpreter', 'default_folders', 'ld_library_path', 'cache', 'cache_problem', 'lib', 'platform'])\n"
	"same('what_if', d['what_if'], ['policy', 'origins', 'pid', 'origin_order', 'origin_order_problem', 'root', 'nvinterpose_path'])\n"
	"entry_always = {'name', 'path', 'how', 'family', 'object'}\n"
	"entry_maybe = {'required', 'hwcaps', 'error', 'looked', 'passed_over', 'action', 'instead_of', 'not_followed'}\n"
	"kinds = set()\n"
	"for f in d['files']:\n"
	"    same('file', f, ['file', 'error', 'elf', 'family', 'origin', 'root', 'objects', 'missing', "
	"          'optional_missing', 'cut', 'actions', 'would_supply', 'warnings', 'notes'])\n"
	"    objects = f['objects']\n"
	"    for i, o in enumerate(objects):\n"
	"        same('object', o, ['id', 'path', 'soname', 'family', 'origin', 'kind', 'loaded_by', 'depth', 'system', 'needed', 'runtime'])\n"
	"        assert o['id'] == i, o\n"
	"        assert o['loaded_by'] is None or 0 <= o['loaded_by'] < len(objects), o\n"
	"        kinds.add(o['kind'])\n"
	"        for e in o['needed'] + o['runtime']:\n"
	"            if not entry_always <= set(e) or not set(e) <= entry_always | entry_maybe:\n"
	"                sys.exit('entry: %s' % sorted(e))\n"
	"            assert ('required' in e) == (e in o['runtime']), e\n"
	"            assert e['object'] is None or objects[e['object']]['path'] == e['path'], e\n"
	"            assert (e['path'] is None) == (e['object'] is None and not e.get('not_followed')), e\n"
	"    for a in f['actions']:\n"
	"        same('action', a, ['name', 'needed_by', 'action', 'path', 'how', 'instead_of', 'run_time'])\n"
	"        assert 0 <= a['needed_by'] < len(objects), a\n"
	"    for s in f['would_supply']:\n"
	"        same('would_supply', s, ['name', 'for', 'path', 'how', 'run_time'])\n"
	"    for w in f['warnings']:\n"
	"        same('warning', w, ['kind', 'library', 'dependency', 'got', 'own', 'how', 'run_time', 'text'])\n"
	"        kinds.add('warning ' + w['kind'])\n"
	"print(' '.join(sorted(kinds)))\n";

START_TEST(test_json_fields_are_the_documented_ones)
{
	if (!have_python3())
		return; /* Debian's python3 reads the document */
	struct cu13_wheel w = make_cu13_wheel();
	char *other = builtins_in(test_format("%s/toolkit/lib64", w.root), 7);
	builtins_in(w.lib, 42);
	struct wheel cusparse = make_wheel(false);
	char *gone = test_format("%s/libgone.so.1", w.root);
	test_build_library("value.c", gone, "libgone.so.1", "");
	char *missing = test_format("%s/needs-gone.so", w.root);
	test_build_library("needer.c", missing, "libneedsgone.so", test_format("'%s'", gone));
	unlink(gone);
	char *script = test_format("%s/check.py", w.root);
	test_write_file(script, schema_check);
	char *command = test_format("'%s' --json --policy=fallback --origin='%s' '%s' '%s' '%s' | python3 '%s'", test_setting("NVI_INSPECT"),
				    cusparse.cusparse_folder, w.nvrtc, cusparse.cusparse, missing, script);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	const char *env[] = { "LD_PRELOAD=", test_format("LD_LIBRARY_PATH=%s", test_format("%s/toolkit/lib64", w.root)), "NVINTERPOSE_PATH=", NULL };
	struct test_run run = test_run(argv, env, 60);
	ck_assert_msg(run.status == 0, "%d: %.3000s", run.status, run.output);
	/* and the run held every kind worth checking */
	ck_assert_msg(test_contains(run.output, "interpreter needed root run_time") && test_contains(run.output, "warning mixed-origin"), "%s (%s)", run.output,
		      other);
}
END_TEST

/* ---- the environment scan ----------------------------------------------------------------------- */

/* Two installations of stand-ins (names no real package ships): a CUDA 13 wheel layout in
   ROOT/venv/site-packages/nvidia/cu13/lib (NVRTC-like libnvrtc.so.77 without its builtins, a
   cusparse-like libcusparse.so.77 with RUNPATH $ORIGIN, libnvJitLink.so.77; a RECORD naming NVRTC's
   wheel version) and a toolkit in ROOT/toolkit/lib64 (the builtins, another nvJitLink, NVRTC as
   libnvrtc.so.77.0.5 with its SONAME link). */
struct environment {
	char *root, *venv, *wheel, *toolkit;
};

static struct environment make_environment(void)
{
	struct environment e;
	e.root = test_tmpdir();
	e.venv = test_format("%s/venv/site-packages", e.root);
	e.wheel = test_format("%s/nvidia/cu13/lib", e.venv);
	e.toolkit = test_format("%s/toolkit/lib64", e.root);
	test_mkdirs(e.wheel);
	test_mkdirs(e.toolkit);
	test_build_library("nvrtc_like.c", test_format("%s/libnvrtc.so.77", e.wheel), "libnvrtc.so.77", "-DBUILTINS='\"libnvrtc-builtins.so.77.0\"'");
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", e.wheel), "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value");
	test_build_library("needer.c", test_format("%s/libcusparse.so.77", e.wheel), "libcusparse.so.77",
			   test_format("-DNEEDED_SYMBOL=nvjitlink_value '%s/libnvJitLink.so.77' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", e.wheel));
	test_mkdirs(test_format("%s/nvidia_cuda_nvrtc-77.0.1.dist-info", e.venv));
	test_write_file(test_format("%s/nvidia_cuda_nvrtc-77.0.1.dist-info/RECORD", e.venv),
			"nvidia/cu13/lib/libnvrtc.so.77,sha256=x,1\nnvidia_cuda_nvrtc-77.0.1.dist-info/RECORD,,\n");
	builtins_in(e.toolkit, 13);
	test_build_library("value.c", test_format("%s/libnvJitLink.so.77", e.toolkit), "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value -DVALUE=2");
	test_build_library("nvrtc_like.c", test_format("%s/libnvrtc.so.77.0.5", e.toolkit), "libnvrtc.so.77", "-DBUILTINS='\"libnvrtc-builtins.so.77.0\"'");
	ck_assert_int_eq(symlink("libnvrtc.so.77.0.5", test_format("%s/libnvrtc.so.77", e.toolkit)), 0);
	return e;
}

START_TEST(test_scan_groups_every_copy_and_names_the_mixes)
{
	if (!have_python3())
		return; /* the site-packages come from a python: Debian's python3 */
	struct environment e = make_environment();
	const char *env[] = { "LD_PRELOAD=", test_format("LD_LIBRARY_PATH=%s", e.toolkit), test_format("PYTHONPATH=%s", e.venv),
			      test_format("CUDA_HOME=%s/toolkit", e.root), "CUDA_PATH=", "CONDA_PREFIX=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--scan --json --cache=none");
	ck_assert_msg(run.status == 1, "%d: %.4000s", run.status, run.output);
	ck_assert_msg(test_json_document(run.output), "%.4000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"kind\":\"site-packages\",\"folder\":\"%s\",\"note\":null,\"copies\":3}", e.venv)) &&
		      test_contains(run.output, test_format("{\"kind\":\"CUDA_HOME\",\"folder\":\"%s\",\"note\":null,\"copies\":3}", e.toolkit)) &&
		      test_contains(run.output, "{\"kind\":\"CONDA_PREFIX\",\"folder\":null,\"note\":\"not set\",\"copies\":0}"), "%.4000s", run.output);
	/* Grouped by the name the loader asks for, each copy once however it is reached, with versions. */
	ck_assert_msg(test_contains(run.output, "{\"name\":\"libnvJitLink.so.77\",\"family\":\"nvJitLink\",\"installations\":2,\"duplicate\":true,\"copies\":["),
		      "%.4000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"path\":\"%s/libnvJitLink.so.77\",\"real_path\":\"%s/libnvJitLink.so.77\",\"version\":null,\"version_from\":null,\"installation\":\"%s/nvidia\",\"found_in\":[\"site-packages\"]",
							 e.wheel, e.wheel, e.venv)), "%.4000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("\"found_in\":[\"CUDA_HOME\",\"LD_LIBRARY_PATH\"],\"names\":[\"%s/libnvJitLink.so.77\"]", e.toolkit)),
		      "%.4000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"path\":\"%s/libnvrtc.so.77\",\"real_path\":\"%s/libnvrtc.so.77\",\"version\":\"77.0.1\",\"version_from\":\"nvidia_cuda_nvrtc RECORD\"",
							 e.wheel, e.wheel)) &&
		      test_contains(run.output, test_format("{\"path\":\"%s/libnvrtc.so.77\",\"real_path\":\"%s/libnvrtc.so.77.0.5\",\"version\":\"77.0.5\",\"version_from\":\"file name\"",
							 e.toolkit, e.toolkit)), "%.4000s", run.output);
	/* The mixes, as the real loader makes them: the wheel's cusparse takes the toolkit's nvJitLink
	   through LD_LIBRARY_PATH, and the wheel's NVRTC the toolkit's builtins. */
	ck_assert_msg(test_contains(run.output, test_format("{\"kind\":\"mixed-origin\",\"library\":\"%s/libcusparse.so.77\",\"dependency\":\"libnvJitLink.so.77\",\"got\":\"%s/libnvJitLink.so.77\",\"own\":\"%s/libnvJitLink.so.77\",\"how\":\"ld_library_path\",\"run_time\":false,\"required\":true,",
							 e.wheel, e.toolkit, e.wheel)) &&
		      test_contains(run.output, test_format("\"hint\":\"LD_LIBRARY_PATH names %s before the library's own folder", e.toolkit)),
		      "%.4000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"kind\":\"mixed-origin\",\"library\":\"%s/libnvrtc.so.77\",\"dependency\":\"libnvrtc-builtins.so.77.0\",\"got\":\"%s/libnvrtc-builtins.so.77.0\",\"own\":null,\"how\":\"ld_library_path\",\"run_time\":true,",
							 e.wheel, e.toolkit)) &&
		      test_contains(run.output, "\"hint\":\"its own installation holds no libnvrtc-builtins.so.77.0: install the matching component beside it"),
		      "%.4000s", run.output);
	struct test_run real = test_probe(env, test_format("open '%s/libcusparse.so.77' maps libnvJitLink", e.wheel));
	ck_assert_msg(test_contains(real.output, test_format("maps: %s/libnvJitLink.so.77", e.toolkit)), "%s", real.output);
	/* For a person: one block a library, the duplicates flagged, a hint under each finding. */
	run = inspect(env, "--scan --cache=none");
	ck_assert_msg(run.status == 1 && test_contains(run.output, "libnvJitLink.so.77 (nvJitLink): 2 copies in 2 installations") &&
		      test_contains(run.output, test_format("  77.0.5       %s/libnvrtc.so.77 [CUDA_HOME, LD_LIBRARY_PATH] -> %s/libnvrtc.so.77.0.5", e.toolkit, e.toolkit)) &&
		      test_contains(run.output, "    hint: ") && test_contains(run.output, "2 findings"), "%d: %.4000s", run.status, run.output);
}
END_TEST

START_TEST(test_scan_hints_where_a_missing_dependency_lies)
{
	if (!have_python3())
		return;
	struct environment e = make_environment();
	/* Without LD_LIBRARY_PATH nothing mixes, but the wheel's NVRTC finds no builtins: the toolkit has
	   a copy, which NVINTERPOSE_PATH would reach. */
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", test_format("PYTHONPATH=%s", e.venv), test_format("CUDA_HOME=%s/toolkit", e.root),
			      "CUDA_PATH=", "CONDA_PREFIX=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--scan --json --cache=none");
	ck_assert_msg(run.status == 1, "%d: %.4000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"kind\":\"missing\",\"library\":\"%s/libnvrtc.so.77\",\"dependency\":\"libnvrtc-builtins.so.77.0\",\"got\":null,\"own\":null,\"how\":\"not_found\",\"run_time\":true,\"required\":true,",
							 e.wheel)) &&
		      test_contains(run.output, test_format("\"hint\":\"a copy of nvrtc-builtins lies in %s: run under nvinterpose with NVINTERPOSE_PATH=%s", e.toolkit, e.toolkit)) &&
		      !test_contains(run.output, "mixed-origin"), "%.4000s", run.output);
	/* The toolkit's own NVRTC finds nothing either (no RUNPATH): the runtime would find it beside it. */
	ck_assert_msg(test_contains(run.output, test_format("\"library\":\"%s/libnvrtc.so.77\",\"dependency\":\"libnvrtc-builtins.so.77.0\"", e.toolkit)) &&
		      test_contains(run.output, test_format("\"hint\":\"run under nvinterpose (nvinterpose-run): it finds %s/libnvrtc-builtins.so.77.0", e.toolkit)),
		      "%.4000s", run.output);
	/* A python that cannot run is said, and the rest is scanned. */
	run = inspect(env, "--scan --json --cache=none --python=/nonexistent/python3");
	ck_assert_msg(test_contains(run.output, "\"python_problem\":\"/nonexistent/python3: No such file or directory\"") &&
		      test_contains(run.output, test_format("{\"kind\":\"CUDA_HOME\",\"folder\":\"%s\"", e.toolkit)), "%.4000s", run.output);
}
END_TEST

/* A hint never pairs libraries of different majors: a cuFFT-like library of the wheel asks for
   libnvJitLink.so.79, of which no copy lies anywhere, while .so.77 copies do. */
START_TEST(test_scan_hint_never_pairs_majors)
{
	if (!have_python3())
		return;
	struct environment e = make_environment();
	test_build_library("value.c", test_format("%s/libcufft.so.79", e.wheel), "libcufft.so.79",
			   "-Wl,--enable-new-dtags,-rpath,'$ORIGIN' -DCARRIES='\"libnvJitLink.so.79\"'");
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", test_format("PYTHONPATH=%s", e.venv), test_format("CUDA_HOME=%s/toolkit", e.root),
			      "CUDA_PATH=", "CONDA_PREFIX=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--scan --json --cache=none");
	char *finding = strstr(run.output, test_format("\"library\":\"%s/libcufft.so.79\",\"dependency\":\"libnvJitLink.so.79\"", e.wheel));
	ck_assert_msg(finding, "%.6000s", run.output);
	char *hint = strstr(finding, "\"hint\":");
	ck_assert_msg(hint && strncmp(hint, "\"hint\":\"no copy of nvJitLink in this environment", 48) == 0, "%.600s", finding);
}
END_TEST

/* A stand-in python at FOLDER/python: a shell script of body. */
static char *fake_python(const char *folder, const char *body)
{
	char *python = test_format("%s/python", folder);
	test_write_file(python, test_format("#!/bin/sh\n%s", body));
	ck_assert_int_eq(chmod(python, 0755), 0);
	return python;
}

/* The python is bounded from its start to its exit: one that closes its output and goes on
   running is killed at --python-timeout, said, and the rest is scanned. */
START_TEST(test_scan_python_that_keeps_running_is_bounded)
{
	char *root = test_tmpdir();
	char *python = fake_python(root, "echo /usr/bin/python3\nexec >&-\nexec sleep 1000\n");
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "CUDA_HOME=", "CUDA_PATH=", "CONDA_PREFIX=", NULL };
	char *command = test_format("exec '%s' --scan --json --cache=none --python='%s' --python-timeout=1", test_setting("NVI_INSPECT"), python);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	time_t start = time(NULL);
	struct test_run run = test_run(argv, env, 20);
	ck_assert_msg(run.status == 0 && time(NULL) - start < 10, "%d after %lds: %s", run.status, (long)(time(NULL) - start), run.output);
	ck_assert_msg(test_contains(run.output, test_format("\"python_problem\":\"%s: did not finish in 1 s (killed)\"", python)), "%s", run.output);
	/* One that prints nothing at all, likewise. */
	python = fake_python(root, "exec sleep 1000\n");
	run = test_run(argv, env, 20);
	ck_assert_msg(test_contains(run.output, test_format("\"python_problem\":\"%s: did not finish in 1 s (killed)\"", python)), "%s", run.output);
	run = inspect(env, "--scan --python-timeout=0");
	ck_assert_msg(run.status == 2 && test_contains(run.output, "--python-timeout '0': not a number of seconds (1 to 86400)"), "%s", run.output);
	run = inspect(env, "--python-timeout=5 /bin/true");
	ck_assert_msg(run.status == 2 && test_contains(run.output, "--python-timeout goes with --scan"), "%s", run.output);
}
END_TEST

/* What the python prints (its sys.executable, its folders) reaches the text report escaped. */
START_TEST(test_scan_text_shows_what_the_python_prints_escaped)
{
	char *root = test_tmpdir();
	char *folder = test_format("%s/site\033]0;x\007-packages", root);
	test_mkdirs(folder);
	char *python = fake_python(root, test_format("printf '/usr/bin/\\033[2Jpython\\n%%s\\n' '%s'\n", folder));
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "CUDA_HOME=", "CUDA_PATH=", "CONDA_PREFIX=", "NO_COLOR=1", NULL };
	struct test_run run = inspect(env, "--scan --cache=none --python='%s'", python);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "Scanned (python /usr/bin/\\x1b[2Jpython):\n") &&
			      test_contains(run.output, test_format("  site-packages    %s/site\\x1b]0;x\\x07-packages: 0 NVIDIA files\n", root)),
		      "%s", run.output);
	ck_assert_msg(!strchr(run.output, '\033') && !strchr(run.output, '\007'), "raw bytes: %s", run.output);
}
END_TEST

START_TEST(test_scan_reads_the_copies_ld_so_cache_lists)
{
	/* A cache made by ldconfig for the toolkit's folder: the copies it lists are scanned, and the
	   wheel's NVRTC takes the toolkit's builtins through it (the mix seen on real machines). */
	if (!have_python3())
		return;
	struct environment e = make_environment();
	char *conf = test_format("%s/ld.so.conf", e.root), *cache = test_format("%s/ld.so.cache", e.root);
	test_write_file(conf, test_format("%s\n", e.toolkit));
	char *command = test_format("{ /sbin/ldconfig -X -C '%s' -f '%s' || ldconfig -X -C '%s' -f '%s'; } 2>&1", cache, conf, cache, conf);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run made = test_run(argv, NULL, 120);
	if (made.status != 0)
		return; /* no ldconfig here */
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", test_format("PYTHONPATH=%s", e.venv), "CUDA_HOME=", "CUDA_PATH=", "CONDA_PREFIX=",
			      "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--scan --json --cache='%s'", cache);
	ck_assert_msg(test_contains(run.output, test_format("\"found_in\":[\"ld.so.cache\"],\"names\":[\"%s/libnvrtc-builtins.so.77.0\"]", e.toolkit)),
		      "%.4000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("\"library\":\"%s/libnvrtc.so.77\",\"dependency\":\"libnvrtc-builtins.so.77.0\",\"got\":\"%s/libnvrtc-builtins.so.77.0\",\"own\":null,\"how\":\"cache\",\"run_time\":true",
							 e.wheel, e.toolkit)), "%.4000s", run.output);
	/* and the tree of that NVRTC says the same, under the default policy */
	run = inspect(env, "--cache='%s' '%s/libnvrtc.so.77'", cache, e.wheel);
	ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("warning: mixed origins: %s/libnvrtc.so.77 (nvrtc) gets libnvrtc-builtins.so.77.0 at run time from %s/libnvrtc-builtins.so.77.0 (cache)",
										e.wheel, e.toolkit)), "%d: %.4000s", run.status, run.output);
}
END_TEST

/* ---- bounds ----------------------------------------------------------------------------------------- */

/* count libraries ROOT/libring00000.so.77 ... each needing the next, the last the first, built from
   one compiled template whose two names are rewritten in place (names of one length: the ELF file
   stays valid), since compiling thousands would take minutes. RUNPATH $ORIGIN: each finds the next. */
static char *make_ring(size_t count)
{
	char *root = test_tmpdir();
	char *stub = test_format("%s/stub.so", root), *template = test_format("%s/template.so", root);
	test_build_library("value.c", stub, "libring00001.so.77", "-DVALUE_SYMBOL=stub_value");
	test_build_library("value.c", template, "libring00000.so.77",
			   test_format("-nostdlib -s -Wl,-z,noseparate-code -Wl,--build-id=none -Wl,--no-as-needed '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", stub));
	size_t size;
	FILE *f = fopen(template, "rb");
	ck_assert_ptr_nonnull(f);
	char *bytes = test_read_stream(f, &size);
	const size_t name_length = strlen("libring00000.so.77");
	for (size_t i = 0; i < count; i++) {
		char own[32], next[32];
		snprintf(own, sizeof(own), "libring%05zu.so.77", i);
		snprintf(next, sizeof(next), "libring%05zu.so.77", (i + 1) % count);
		char *copy = malloc(size);
		memcpy(copy, bytes, size);
		size_t replaced = 0;
		for (size_t k = 0; k + name_length <= size; k++) {
			if (memcmp(bytes + k, "libring0000", 11) != 0 || (bytes[k + 11] != '0' && bytes[k + 11] != '1') ||
			    memcmp(bytes + k + 12, ".so.77", 6) != 0)
				continue;
			memcpy(copy + k, bytes[k + 11] == '0' ? own : next, name_length);
			replaced++;
		}
		ck_assert_uint_ge(replaced, 2);
		f = fopen(test_format("%s/%s", root, own), "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(copy, 1, size, f), size);
		fclose(f);
		free(copy);
	}
	free(bytes);
	unlink(stub);
	unlink(template);
	return root;
}

static size_t longest_line(const char *text)
{
	size_t longest = 0;
	for (const char *s = text; *s;) {
		size_t n = strcspn(s, "\n");
		if (n > longest)
			longest = n;
		s += n + (s[n] == '\n');
	}
	return longest;
}

START_TEST(test_json_of_a_chain_of_1000_objects_is_flat)
{
	/* One file whose tree is a chain of 1,000 distinct objects: the document is as deep as for one. */
	char *root = make_ring(1000);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", NULL };
	struct test_run run = inspect(env, "--json '%s/libring00000.so.77'", root);
	ck_assert_msg(run.status == 0, "%d: %.2000s", run.status, run.output);
	ck_assert_uint_ge(test_count(run.output, "{\"id\":"), 1000);
	/* The checker here refuses documents nested deeper than 200; Python's json refused the nested one. */
	ck_assert_msg(test_json_document(run.output), "not one flat JSON document: %.2000s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libring00000.so.77\",\"path\":\"%s/libring00000.so.77\",\"how\":\"already_loaded\",\"family\":null,\"object\":0}", root)),
		      "%.2000s", run.output);
	const char *which[] = { "/bin/sh", "-c", "command -v python3", NULL };
	if (test_run(which, NULL, 30).status == 0) {
		char *command = test_format("'%s' --json '%s/libring00000.so.77' | python3 -c 'import json, sys; d = json.load(sys.stdin); print(len(d[\"files\"][0][\"objects\"]))'",
					    test_setting("NVI_INSPECT"), root);
		const char *argv[] = { "/bin/sh", "-c", command, NULL };
		struct test_run parsed = test_run(argv, env, 60);
		ck_assert_msg(parsed.status == 0 && atoi(parsed.output) >= 1000, "python's json: %d: %.2000s", parsed.status, parsed.output);
	}
}
END_TEST

START_TEST(test_text_grows_with_the_objects_not_with_the_depth)
{
	/* A chain 1,000 deep and one 2,000 deep: twice the objects, about twice the text, and no line
	   indented past the 16 levels after which a subtree continues in a block of its own. */
	char *small = make_ring(1000), *large = make_ring(2000);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", NULL };
	struct test_run a = inspect(env, "'%s/libring00000.so.77'", small);
	struct test_run b = inspect(env, "'%s/libring00000.so.77'", large);
	ck_assert_msg(a.status == 0 && b.status == 0, "%d %d: %.2000s", a.status, b.status, b.output);
	size_t length_a = strlen(a.output), length_b = strlen(b.output);
	ck_assert_msg(length_b < 3 * length_a, "%zu bytes for 1,000 objects, %zu for 2,000", length_a, length_b);
	ck_assert_msg(length_b < 2000 * 300, "%zu bytes for 2,000 objects", length_b);
	size_t limit = strlen(large) + 200 + 16 * strlen("│   ");
	ck_assert_msg(longest_line(b.output) < limit, "a line of %zu bytes", longest_line(b.output));
	/* Every object is shown once: the deep ones in their continuation blocks. */
	ck_assert_msg(test_contains(b.output, "(continued below as #") && test_contains(b.output, ", continued:\n"), "%.2000s", b.output);
	ck_assert_uint_eq(test_count(b.output, ".so.77 [runpath]"), 1999);
	ck_assert_uint_eq(test_count(b.output, "libring00000.so.77 => "), 1); /* the ring closes on the root */
}
END_TEST

START_TEST(test_a_cut_tree_says_so_and_exits_3)
{
	char *root = make_ring(300);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", NULL };
	struct test_run run = inspect(env, "--max-objects=100 '%s/libring00000.so.77'", root);
	ck_assert_msg(run.status == 3, "%d: %.3000s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, " not followed: the bound of objects was reached") &&
		      test_contains(run.output, "warning: the tree reached its bound of 100 objects (--max-objects)") &&
		      !test_contains(run.output, "not found"), "%.3000s", run.output);
	run = inspect(env, "--json --max-objects=100 '%s/libring00000.so.77'", root);
	ck_assert_msg(run.status == 3 && test_contains(run.output, "\"cut\":true,\"error\":null,\"status\":3}") &&
		      test_contains(run.output, "\"missing\":0,\"optional_missing\":0,\"cut\":true") && test_contains(run.output, "\"not_followed\":true}") &&
		      test_contains(run.output, "{\"kind\":\"cut\","), "%d: %.3000s", run.status, run.output);
	/* A missing dependency before the cut is the stronger answer: 1. */
	unlink(test_format("%s/libring00050.so.77", root));
	run = inspect(env, "--max-objects=100 '%s/libring00000.so.77' '%s/libring00051.so.77'", root, root);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "libring00050.so.77 not found"), "%d: %.3000s", run.status, run.output);
}
END_TEST

START_TEST(test_a_ring_of_10000_files_each_10000_deep_is_bounded)
{
	/* Every file of a ring of 10,000 inspected at once: each tree is 10,000 deep. Each is cut at its
	   bound, the run at its own, and the output stays in megabytes (it was 53 GB in 300 s). */
	char *root = make_ring(10000);
	const char **argv = calloc(10000 + 2, sizeof(char *));
	argv[0] = test_setting("NVI_INSPECT");
	for (size_t i = 0; i < 10000; i++)
		argv[1 + i] = test_format("%s/libring%05zu.so.77", root, i);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", NULL };
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct test_run run = test_run(argv, env, 240);
	clock_gettime(CLOCK_MONOTONIC, &end);
	double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
	size_t length = strlen(run.output);
	printf("a ring of 10,000 files: %.1f s, %zu bytes of text\n", seconds, length);
	ck_assert_msg(run.status == 3, "status %d (137: it ran past its time): %.2000s", run.status, run.output);
	ck_assert_msg(length < (64u << 20), "%zu bytes", length);
	ck_assert_msg(test_contains(run.output, "warning: this run reached its bound of 262144 objects in all"), "%.2000s", run.output + length - 2000);
	ck_assert_uint_eq(test_count(run.output, ": ELF64 "), 10000);
	free(run.output);
}
END_TEST

START_TEST(test_what_if_applies_the_trust_rule_for_the_user_of_the_process)
{
	/* The sibling holding nvJitLink belongs to nobody: the runtime in a root process would skip it
	   (its owner is neither root nor the origin's), in one of nobody's own processes use it. */
	struct wheel w = make_wheel(false);
	char *package = test_format("%s/site-packages/nvidia/nvjitlink", w.root);
	ck_assert_int_eq(chown(package, 65534, 65534), 0);
	ck_assert_int_eq(chown(test_format("%s/lib", package), 65534, 65534), 0);
	ck_assert_int_eq(chown(w.nvjitlink, 65534, 65534), 0);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--policy fallback --origin '%s' '%s'", w.cusparse_folder, w.cusparse);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "libnvJitLink.so.77 not found") &&
		      test_contains(run.output, test_format("%s skipped (wheel sibling)", package)),
		      "as root: %d: %s", run.status, run.output);
	/* A process of nobody's with an NVIDIA library of the cusparse folder loaded. */
	char *origin_library = test_format("%s/libcublas.so.77", w.cusparse_folder);
	test_build_library("value.c", origin_library, "libcublas.so.77", "");
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		void *handle = dlopen(origin_library, RTLD_NOW);
		if (handle && setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0)
			(void)!write(ready[1], "", 1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	char mark;
	bool started = read(ready[0], &mark, 1) == 1;
	close(ready[0]);
	run = inspect(env, "--json --policy fallback --pid %d '%s'", (int)pid, w.cusparse);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_msg(started, "the process did not start");
	ck_assert_msg(run.status == 0 && test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"wheel_sibling\"", w.nvjitlink)),
		      "for nobody's process: %d: %s", run.status, run.output);
}
END_TEST

/* One inspector for every glibc the runtime loads on (the wheel carries it): no symbol version above
   GLIBC_2.17, its start and the loader functions at the machine's first version (libdl's before
   2.34), constructors run once, and libelf and libz linked in where their archives were found. */
START_TEST(test_inspector_binds_no_glibc_version_above_2_17)
{
	const char *inspector = test_setting("NVI_INSPECT");
	const char *highest[] = { "/bin/sh", "-c", test_format("objdump -T '%s' | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1", inspector), NULL };
	static const char *const no_env[] = { NULL };
	struct test_run run = test_run(highest, no_env, 60);
	ck_assert_msg(test_contains(run.output, "GLIBC_2.") && strverscmp(run.output, "GLIBC_2.17\n") <= 0, "highest: %s", run.output);
	const char *base[] = { "/bin/sh", "-c",
			       test_format("objdump -T '%s' | grep -wE '__libc_start_main|dlopen|dlerror|dlclose' | grep -o 'GLIBC_[0-9.]*' | sort -u", inspector),
			       NULL };
	run = test_run(base, no_env, 60);
	ck_assert_str_eq(run.output, test_format("%s\n", test_setting("NVI_GLIBC_BASE")));
	if (strcmp(test_setting("NVI_LIBELF_STATIC"), "yes") == 0) {
		const char *needed[] = { "/bin/sh", "-c", test_format("objdump -p '%s' | grep NEEDED | grep -E 'libelf|libz'", inspector), NULL };
		run = test_run(needed, no_env, 60);
		ck_assert_msg(run.status != 0 && !run.output[0], "libelf and libz are linked in: %s", run.output);
	}
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("inspect");
	TCase *tc = tcase_create("inspect");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_rpath_comes_before_ld_library_path);
	tcase_add_test(tc, test_runpath_comes_after_ld_library_path);
	tcase_add_test(tc, test_empty_element_is_the_working_folder_and_its_files_keep_relative_names);
	tcase_add_test(tc, test_rpath_of_the_loaders_serves_an_object_without_runpath);
	tcase_add_test(tc, test_runpath_of_the_asker_stops_the_rpath_chain);
	tcase_add_test(tc, test_origin_is_the_folder_of_the_path_as_given);
	tcase_add_test(tc, test_nodeflib_skips_the_cache_and_the_default_folders);
	tcase_add_test(tc, test_missing_library_lists_every_place_looked);
	tcase_add_test(tc, test_first_loaded_wins);
	tcase_add_test(tc, test_library_of_another_machine_is_skipped);
	tcase_add_test(tc, test_library_of_another_class_is_skipped);
	tcase_add_test(tc, test_without_cache_the_default_folders_serve);
	tcase_add_test(tc, test_glibc_hwcaps_subfolders_come_before_their_folder);
	tcase_add_loop_test(tc, test_lib_and_platform_tokens_expand_as_the_loader_does, 0, TEST_CPU_KINDS);
	tcase_add_loop_test(tc, test_legacy_hwcap_subfolders_are_searched_as_the_loader_does, 0, TEST_CPU_KINDS);
	tcase_add_test(tc, test_dependency_cycles_end);
	tcase_add_test(tc, test_needed_with_a_slash_is_opened_as_that_path);
	tcase_add_test(tc, test_json_is_one_document_with_every_dependency_an_object);
	tcase_add_test(tc, test_dot_is_a_graph_of_the_tree);
	tcase_add_test(tc, test_text_has_no_colour_off_a_terminal);
	tcase_add_test(tc, test_text_has_colour_on_a_terminal_unless_no_color);
	tcase_add_test(tc, test_exit_status);
	tcase_add_test(tc, test_hostile_files_inspected_end_with_a_message);
	tcase_add_test(tc, test_broken_elf_files_never_crash_the_inspector);
	tcase_add_test(tc, test_hostile_files_on_the_search_path_never_block);
	tcase_add_test(tc, test_hostile_cache_files_are_read_or_refused);
	tcase_add_test(tc, test_what_if_the_runtime_supplies_the_wheel_sibling);
	tcase_add_test(tc, test_what_if_of_a_program_is_the_audit_fronts);
	tcase_add_test(tc, test_what_if_skips_a_copy_cut_short_as_the_runtime_does);
	tcase_add_test(tc, test_what_if_takes_wheel_siblings_in_byte_order);
	tcase_add_test(tc, test_mixed_origins_get_a_warning_and_coherent_fixes_them);
	tcase_add_test(tc, test_what_if_reads_the_origins_of_a_running_process);
	tcase_add_test(tc, test_what_if_takes_a_processs_origins_in_the_order_it_loaded_them);
	tcase_add_test(tc, test_pid_what_if_says_first_loaded_wins_under_every_policy);
	tcase_add_test(tc, test_what_if_reads_a_process_of_another_mount_namespace_through_its_root);
	tcase_add_test(tc, test_pid_of_an_exited_process_is_refused);
	tcase_add_test(tc, test_json_run_errors_are_documents);
	tcase_add_test(tc, test_messages_show_control_characters_escaped);
	tcase_add_test(tc, test_a_missing_required_run_time_dependent_is_a_miss);
	tcase_add_test(tc, test_default_view_names_what_nvinterpose_path_would_supply_when_trusted);
	tcase_add_test(tc, test_a_run_time_dependent_found_elsewhere_is_a_mixed_origin);
	tcase_add_test(tc, test_a_missing_optional_run_time_dependent_is_shown_and_not_a_miss);
	tcase_add_test(tc, test_run_time_dependents_are_those_the_file_names);
	tcase_add_test(tc, test_debian_cufft_10_has_no_run_time_dependent);
	tcase_add_test(tc, test_system_libraries_are_folded_unless_all);
	tcase_add_test(tc, test_max_depth_limits_the_tree_shown_not_the_answer);
	tcase_add_test(tc, test_usage_errors_have_one_shape);
	tcase_add_test(tc, test_families_show_both_wheel_layouts);
	tcase_add_test(tc, test_a_cache_that_cannot_be_read_is_said_in_text_mode);
	tcase_add_test(tc, test_json_fields_are_the_documented_ones);
	tcase_add_test(tc, test_scan_groups_every_copy_and_names_the_mixes);
	tcase_add_test(tc, test_scan_hints_where_a_missing_dependency_lies);
	tcase_add_test(tc, test_scan_hint_never_pairs_majors);
	tcase_add_test(tc, test_scan_python_that_keeps_running_is_bounded);
	tcase_add_test(tc, test_scan_text_shows_what_the_python_prints_escaped);
	tcase_add_test(tc, test_scan_reads_the_copies_ld_so_cache_lists);
	tcase_add_test(tc, test_json_of_a_chain_of_1000_objects_is_flat);
	tcase_add_test(tc, test_text_grows_with_the_objects_not_with_the_depth);
	tcase_add_test(tc, test_a_cut_tree_says_so_and_exits_3);
	tcase_add_test(tc, test_a_ring_of_10000_files_each_10000_deep_is_bounded);
	if (getenv("NVI_SANITIZE") && strstr(getenv("NVI_SANITIZE"), "address")) /* meson.build: programs bind the build's glibc there */
		printf("not run: test_inspector_binds_no_glibc_version_above_2_17: an AddressSanitizer build binds the build machine's glibc\n");
	else
		tcase_add_test(tc, test_inspector_binds_no_glibc_version_above_2_17);
	if (geteuid() == 0) /* it hands the sibling to another user */
		tcase_add_test(tc, test_what_if_applies_the_trust_rule_for_the_user_of_the_process);
	else
		printf("not run: test_what_if_applies_the_trust_rule_for_the_user_of_the_process: needs root (chown)\n");
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
