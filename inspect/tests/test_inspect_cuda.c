/* nvinterpose-inspect over the real toolkit: for every library in its lib64, every library the real
   loader maps (`ld.so --list FILE`, the loader named by the file's PT_INTERP, or this program's for a
   library without one) appears in the inspector's --json with the same resolved file. One call of
   the inspector for all of them. Skipped (77) where the toolkit is absent. */
#define _GNU_SOURCE
#include "common.h"

#include "elf/elf_reader.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *lib64;

static char *interpreter_of(const char *path)
{
	struct elf_facts facts;
	char message[512];
	char *interpreter = NULL;
	if (elf_read_facts(path, &facts, message, sizeof(message)) == ELF_READER_OK && facts.interp)
		interpreter = strdup(facts.interp);
	elf_facts_free(&facts);
	return interpreter;
}

/* The shared libraries of lib64: regular files named lib*.so* that are ELF shared objects (the
   unversioned names are mostly links to them). */
static size_t toolkit_libraries(char ***paths)
{
	char **files = NULL;
	size_t found = test_regular_files(lib64, "lib*.so*", &files), count = 0;
	*paths = NULL;
	for (size_t i = 0; i < found; i++) {
		struct elf_facts facts;
		char message[512];
		if (elf_read_facts(files[i], &facts, message, sizeof(message)) != ELF_READER_OK)
			continue;
		bool shared = facts.type == 3 /* ET_DYN */ && facts.has_dynamic;
		elf_facts_free(&facts);
		if (!shared)
			continue;
		*paths = realloc(*paths, (count + 1) * sizeof(**paths));
		(*paths)[count++] = files[i];
	}
	free(files);
	return count;
}

/* The part of the document about file: from its "file" member to the next file's. */
static char *section_of(const char *document, const char *file)
{
	char *start = strstr(document, test_format("{\"file\":\"%s\",", file));
	ck_assert_msg(start != NULL, "no %s in the document", file);
	char *end = strstr(start + 1, ",{\"file\":\"");
	return end ? strndup(start, (size_t)(end - start)) : strdup(start);
}

START_TEST(test_every_library_the_loader_maps_is_in_the_json_with_the_same_file)
{
	char **paths;
	size_t count = toolkit_libraries(&paths);
	ck_assert_uint_gt(count, 0);
	const char *env[] = { "LD_PRELOAD=", NULL };
	const char **argv = calloc(count + 3, sizeof(char *));
	argv[0] = test_setting("NVI_INSPECT");
	argv[1] = "--json";
	for (size_t i = 0; i < count; i++)
		argv[2 + i] = paths[i];
	struct test_run inspected = test_run(argv, env, 300);
	ck_assert_msg(inspected.status == 0 || inspected.status == 1, "status %d:\n%.4000s", inspected.status, inspected.output);
	char *own = interpreter_of("/proc/self/exe");
	ck_assert_ptr_nonnull(own);
	size_t compared = 0, mismatches = 0;
	for (size_t i = 0; i < count; i++) {
		char *section = section_of(inspected.output, paths[i]);
		char *interpreter = interpreter_of(paths[i]);
		const char *list[] = { interpreter ? interpreter : own, "--list", paths[i], NULL };
		struct test_run loader = test_run(list, env, 120);
		for (char *line = strtok(loader.output, "\n"); line; line = strtok(NULL, "\n")) {
			while (isspace((unsigned char)*line))
				line++;
			char *arrow = strstr(line, " => ");
			char *address = strstr(line, " (0x");
			char *expected = NULL;
			if (arrow && strncmp(arrow + 4, "not found", 9) == 0) {
				*arrow = '\0';
				expected = test_format("{\"name\":\"%s\",\"path\":null", line);
			} else if (arrow && address) {
				*arrow = '\0';
				*address = '\0';
				expected = test_format("{\"name\":\"%s\",\"path\":\"%s\"", line, arrow + 4);
			} else if (line[0] == '/' && address) {
				*address = '\0';
				expected = test_format("\"path\":\"%s\"", line);
			}
			if (!expected)
				continue; /* linux-vdso.so.1, which no file names */
			compared++;
			if (!test_contains(section, expected)) {
				mismatches++;
				fprintf(stderr, "%s: the loader has %s; the inspector does not\n", paths[i], expected);
			}
		}
		free(loader.output);
		free(interpreter);
		free(section);
	}
	printf("%zu libraries, %zu loader lines compared, %zu mismatches\n", count, compared, mismatches);
	ck_assert_uint_gt(compared, count);
	ck_assert_msg(mismatches == 0, "%zu mismatches (see above)", mismatches);
}
END_TEST

int main(void)
{
	const char *home = getenv("NVI_CUDA_HOME");
	/* Not test_format: Check's assertions are not to be used outside a test. */
	if (asprintf(&lib64, "%s/lib64", home && home[0] ? home : "/usr/local/cuda") < 0)
		return EXIT_FAILURE;
	struct stat st;
	if (stat(lib64, &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("skipped: %s is absent\n", lib64);
		return TEST_SKIP;
	}
	Suite *suite = suite_create("inspect_cuda");
	TCase *tc = tcase_create("toolkit");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_every_library_the_loader_maps_is_in_the_json_with_the_same_file);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
