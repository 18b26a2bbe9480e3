/* The libelf reader over the real toolkit: every lib*.so.* in its lib64 reads, with the SONAME,
   DT_NEEDED, RPATH, RUNPATH and NODEFLIB that `readelf -d` shows; its compact copy reads the same;
   and the corpus made from the largest library meets every expectation. Skipped (77) where the
   toolkit is absent. */
#define _GNU_SOURCE
#include "common.h"
#include "elf_check.h"
#include "elf_corpus.h"

#include "elf/elf_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *lib64;

/* The regular files named lib*.so.* in lib64 (the unversioned names are links to them). */
static size_t toolkit_libraries(char ***paths) { return test_regular_files(lib64, "lib*.so.*", paths); }

/* The text between the first '[' and the last ']' of line, or NULL. */
static char *bracketed(const char *line)
{
	const char *open = strchr(line, '['), *close = strrchr(line, ']');
	return open && close && close > open ? strndup(open + 1, (size_t)(close - open - 1)) : NULL;
}

/* What `readelf -dW` says of path, as elf_facts_text writes it (without the header). */
static char *readelf_dynamic(const char *path)
{
	const char *argv[] = { "readelf", "-dW", path, NULL };
	struct test_run run = test_run(argv, NULL, 120);
	ck_assert_msg(run.status == 0, "readelf -d %s: %s", path, run.output);
	char *soname = NULL, *rpath = NULL, *runpath = NULL, *needed = strdup("");
	bool nodeflib = false, dynamic = false;
	char *saveptr = NULL;
	for (char *line = strtok_r(run.output, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
		if (strstr(line, "Dynamic section at offset"))
			dynamic = true;
		if (strstr(line, "(NEEDED)"))
			needed = test_format("%sneeded %s\n", needed, bracketed(line));
		else if (strstr(line, "(SONAME)"))
			soname = bracketed(line);
		else if (strstr(line, "(RPATH)"))
			rpath = bracketed(line);
		else if (strstr(line, "(RUNPATH)"))
			runpath = bracketed(line);
		else if (strstr(line, "(FLAGS_1)") && strstr(line, "NODEFLIB"))
			nodeflib = true;
	}
	free(run.output);
	return test_format("dynamic %d\nnodeflib %d\ninterp (none)\nsoname %s\nrpath %s\nrunpath %s\n%s", dynamic, nodeflib,
			   soname ? soname : "(none)", rpath ? rpath : "(none)", runpath ? runpath : "(none)", needed);
}

START_TEST(test_every_toolkit_library_reads_as_readelf_shows)
{
	char **paths;
	size_t count = toolkit_libraries(&paths);
	struct elf_host host = elf_host_of_this_process();
	ck_assert_msg(count >= 10, "only %zu libraries in %s", count, lib64);
	for (size_t i = 0; i < count; i++) {
		struct elf_facts facts;
		char message[512];
		ck_assert_msg(elf_read_facts(paths[i], &facts, message, sizeof(message)) == ELF_READER_OK, "%s", message);
		char *got = elf_facts_text(&facts, false), *expected = readelf_dynamic(paths[i]);
		ck_assert_msg(strcmp(got, expected) == 0, "%s:\n%s\nreadelf -d says:\n%s", paths[i], got, expected);
		ck_assert_msg(facts.soname != NULL, "%s has no SONAME", paths[i]);
		ck_assert_msg(elf_is_compatible(&facts, &host), "%s is not loadable here", paths[i]);
		elf_facts_free(&facts);
	}
	printf("%zu toolkit libraries read as readelf -d shows them\n", count);
}
END_TEST

START_TEST(test_compact_copy_of_every_toolkit_library_reads_the_same)
{
	char **paths;
	size_t count = toolkit_libraries(&paths);
	char *folder = test_tmpdir();
	for (size_t i = 0; i < count; i++) {
		char *compact = test_format("%s/compact-%zu", folder, i);
		ck_assert_msg(elf_corpus_write_compact(paths[i], compact) == 0, "no compact copy of %s", paths[i]);
		struct elf_child_read original = elf_read_in_child(paths[i], 60), copy = elf_read_in_child(compact, 60);
		ck_assert_msg(original.status == 0 && copy.status == 0 && copy.error == ELF_READER_OK, "%s: %s", paths[i],
			      copy.message);
		ck_assert_msg(strcmp(original.facts, copy.facts) == 0, "%s:\n%s\ncompact copy:\n%s", paths[i], original.facts,
			      copy.facts);
		struct stat st;
		ck_assert_int_eq(stat(compact, &st), 0);
		ck_assert_msg(st.st_size < 1 << 20, "%s: compact copy of %lld bytes", paths[i], (long long)st.st_size);
		elf_child_read_free(&original);
		elf_child_read_free(&copy);
	}
}
END_TEST

/* The largest library: over the generator's size limit, so its variants come from its compact copy. */
START_TEST(test_corpus_of_the_largest_toolkit_library_gives_errors_or_valid_facts)
{
	char **paths;
	size_t count = toolkit_libraries(&paths);
	const char *largest = NULL;
	off_t largest_size = 0;
	for (size_t i = 0; i < count; i++) {
		struct stat st;
		if (stat(paths[i], &st) == 0 && st.st_size > largest_size)
			largest = paths[i], largest_size = st.st_size;
	}
	ck_assert_ptr_nonnull(largest);
	ck_assert_uint_ge(elf_check_corpus(largest), 80);
}
END_TEST

int main(void)
{
	const char *home = getenv("NVI_CUDA_HOME") && getenv("NVI_CUDA_HOME")[0] ? getenv("NVI_CUDA_HOME") : "/usr/local/cuda";
	struct stat st;
	if (asprintf(&lib64, "%s/lib64", home) < 0)
		return EXIT_FAILURE;
	if (stat(lib64, &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("SKIP: no CUDA toolkit at %s\n", lib64);
		return TEST_SKIP;
	}
	Suite *suite = suite_create("elf_cuda");
	TCase *tc = tcase_create("elf_cuda");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_every_toolkit_library_reads_as_readelf_shows);
	tcase_add_test(tc, test_compact_copy_of_every_toolkit_library_reads_the_same);
	tcase_add_test(tc, test_corpus_of_the_largest_toolkit_library_gives_errors_or_valid_facts);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
