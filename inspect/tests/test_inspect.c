/* nvinterpose-inspect over stand-in trees built at test time: each loader rule it models, checked
   against what it prints and against the real loader (`ld.so --list`, the oracle), the output
   formats, exit statuses, hostile files (as the file inspected and on the search path), the what-if
   and the mixed-origin warning. Stand-ins use names no ld.so.cache holds. */
#define _GNU_SOURCE
#include "common.h"
#include "elf_corpus.h"

#include "elf/elf_reader.h"

#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
	char *command = test_format("exec '%s' %s", test_setting("NVI_INSPECT"), args);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, env, 60);
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
	struct test_run run = test_run(argv, traced, 60);
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

/* ---- a minimal JSON checker: the document must parse, whatever it says -------------------------- */

static bool json_value(const char **s, int depth);

static void json_space(const char **s)
{
	while (**s == ' ' || **s == '\n' || **s == '\t' || **s == '\r')
		(*s)++;
}

static bool json_string(const char **s)
{
	if (**s != '"')
		return false;
	for ((*s)++; **s != '"'; (*s)++) {
		if ((unsigned char)**s < 0x20)
			return false;
		if (**s == '\\') {
			(*s)++;
			if (**s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)(*s)[i]))
						return false;
				*s += 4;
			} else if (!strchr("\"\\/bfnrt", **s) || !**s) {
				return false;
			}
		}
	}
	(*s)++;
	return true;
}

static bool json_members(const char **s, char close, int depth, bool keyed)
{
	(*s)++;
	json_space(s);
	if (**s == close) {
		(*s)++;
		return true;
	}
	for (;;) {
		json_space(s);
		if (keyed) {
			if (!json_string(s))
				return false;
			json_space(s);
			if (*(*s)++ != ':')
				return false;
		}
		if (!json_value(s, depth + 1))
			return false;
		json_space(s);
		if (**s == close) {
			(*s)++;
			return true;
		}
		if (*(*s)++ != ',')
			return false;
	}
}

static bool json_value(const char **s, int depth)
{
	json_space(s);
	if (depth > 200)
		return false;
	if (**s == '{')
		return json_members(s, '}', depth, true);
	if (**s == '[')
		return json_members(s, ']', depth, false);
	if (**s == '"')
		return json_string(s);
	for (const char *word = "true\0false\0null\0"; *word; word += strlen(word) + 1)
		if (strncmp(*s, word, strlen(word)) == 0) {
			*s += strlen(word);
			return true;
		}
	char *end;
	strtod(*s, &end);
	if (end == *s)
		return false;
	*s = end;
	return true;
}

static bool json_document(const char *text)
{
	const char *s = text;
	if (!json_value(&s, 0))
		return false;
	json_space(&s);
	return *s == '\0';
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
	uint16_t machine = EM_AARCH64;
	assert_other_kind_is_skipped(18, &machine, sizeof(machine), "another machine: AArch64");
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
	   real loader says which it meant. */
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
   layout alone; the inspector's answer must be the real loader's, found or not. */
START_TEST(test_legacy_hwcap_subfolders_are_searched_as_the_loader_does)
{
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
	ck_assert_msg(json_document(document), "not one JSON document:\n%s", document);
	ck_assert_int_eq(test_count(document, "{\"file\":"), 3);
	ck_assert_msg(test_contains(document, "{\"name\":\"libleaf.so.1\",\"path\":\""), "%s", document);
	ck_assert_msg(test_contains(document, "{\"name\":\"libgone.so.1\",\"path\":null,\"how\":\"not_found\",\"family\":null,\"looked\":["), "%s", document);
	ck_assert_msg(test_contains(document, "\"family\":null,\"needed\":["), "%s", document);
	ck_assert_msg(test_contains(document, "\"error\":\""), "%s", document);
	ck_assert_msg(test_contains(document, "\"status\":2}"), "%s", document);
	/* every dependency, like every file, has its own "needed" */
	ck_assert_uint_eq(test_count(document, "{\"name\":") + test_count(document, "{\"file\":"), test_count(document, "\"needed\":["));
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
		{ "/bin/sh", 0, "libc.so.6 => " },
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

START_TEST(test_what_if_the_runtime_supplies_the_wheel_sibling)
{
	struct wheel w = make_wheel(false);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json '%s'", w.cusparse);
	ck_assert_msg(run.status == 1 && test_contains(run.output, "{\"name\":\"libnvJitLink.so.77\",\"path\":null,\"how\":\"not_found\",\"family\":\"nvJitLink\""),
		      "%d: %s", run.status, run.output);
	run = inspect(env, "--json --policy fallback --origin '%s' '%s'", w.cusparse_folder, w.cusparse);
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"wheel_sibling\",\"family\":\"nvJitLink\",\"runtime\":{\"action\":\"preload\",\"instead_of\":null}",
							 w.nvjitlink)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("\"runtime\":[{\"name\":\"libnvJitLink.so.77\",\"needed_by\":\"%s\",\"action\":\"preload\"", w.cusparse)),
		      "%s", run.output);
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
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"wheel_sibling\",\"family\":\"nvJitLink\",\"runtime\":{\"action\":\"coherent\",\"instead_of\":\"%s\"}",
							 w.nvjitlink, w.system_nvjitlink)), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "mixed origins"), "%s", run.output);
	/* fallback keeps the loader's choice, and the warning. */
	run = inspect(env, "--json --policy fallback '%s'", w.cusparse);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"ld_library_path\"", w.system_nvjitlink)) &&
		      test_contains(run.output, "mixed origins"), "%s", run.output);
}
END_TEST

START_TEST(test_what_if_reads_the_origins_of_a_running_process)
{
	/* A process that has the wheel's nvJitLink mapped (loaded by path), waiting: its folder is an
	   origin, and its nvJitLink counts as loaded. */
	struct wheel w = make_wheel(false);
	char *ready = test_format("%s/ready", w.root);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		void *handle = dlopen(w.nvjitlink, RTLD_NOW);
		if (handle)
			test_write_file(ready, "");
		pause();
		_exit(0);
	}
	for (int i = 0; i < 3000 && access(ready, F_OK) != 0; i++)
		usleep(10000);
	const char *env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "NVINTERPOSE_PATH=", NULL };
	struct test_run run = inspect(env, "--json --pid %d '%s'", (int)pid, w.cusparse);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_msg(access(ready, F_OK) == 0, "the probe did not start");
	ck_assert_msg(run.status == 0, "%d: %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, test_format("{\"name\":\"libnvJitLink.so.77\",\"path\":\"%s\",\"how\":\"already_loaded\"", w.nvjitlink)),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("\"pid\":%d", (int)pid)), "%s", run.output);
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
	tcase_add_test(tc, test_lib_and_platform_tokens_expand_as_the_loader_does);
	tcase_add_test(tc, test_legacy_hwcap_subfolders_are_searched_as_the_loader_does);
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
	tcase_add_test(tc, test_mixed_origins_get_a_warning_and_coherent_fixes_them);
	tcase_add_test(tc, test_what_if_reads_the_origins_of_a_running_process);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
