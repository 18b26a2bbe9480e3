/* The table's DT_NEEDED lists against every real NVIDIA binary this host has: each NVIDIA library a
   binary names in DT_NEEDED must be in its family's row. DT_NEEDED differ by CUDA release (11.8's
   libcusolver.so.11 needs cublas and cublasLt, 13.0's libcusolver.so.12 also nvJitLink and
   cusparse), so a row holds the union and a binary's needs must be in it; a family a row names
   that no binary here needs is only reported (another release may need it). The binaries are
   those of the toolkit the build names (-Dnvidia_toolkit), CUDA_HOME, CUDA_PATH, /usr/local/cuda*,
   the pip wheels of the python on PATH, and every NVIDIA library ld.so.cache lists (a system CUDA
   such as Debian's 11.8 packages). Skipped (77) where none is found. */
#define _GNU_SOURCE
#include "common.h"

#include "elf/elf_reader.h"
#include "libnames.h"

#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct binary {
	char *path;
	dev_t device;
	ino_t inode;
};

static struct binary *binaries;
static size_t binary_count;
static char *places;

static void add_binary(const char *path)
{
	struct stat st;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int family = libnames_match_linux(base, NULL);
	if (family < 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	for (size_t i = 0; i < binary_count; i++)
		if (binaries[i].device == st.st_dev && binaries[i].inode == st.st_ino)
			return;
	binaries = realloc(binaries, (binary_count + 1) * sizeof(*binaries));
	binaries[binary_count++] = (struct binary){ strdup(path), st.st_dev, st.st_ino };
}

static void add_folder(const char *folder)
{
	DIR *dir = opendir(folder);
	if (!dir)
		return;
	size_t before = binary_count;
	for (struct dirent *entry; (entry = readdir(dir));) {
		char *path;
		if (asprintf(&path, "%s/%s", folder, entry->d_name) >= 0) {
			add_binary(path);
			free(path);
		}
	}
	closedir(dir);
	if (binary_count > before) {
		char *grown;
		if (asprintf(&grown, "%s %s", places ? places : "", folder) >= 0) {
			free(places);
			places = grown;
		}
	}
}

static void add_glob(const char *pattern)
{
	glob_t found;
	if (glob(pattern, GLOB_NOSORT, NULL, &found) == 0)
		for (size_t i = 0; i < found.gl_pathc; i++)
			add_folder(found.gl_pathv[i]);
	globfree(&found);
}

static void add_toolkit(const char *prefix)
{
	if (!prefix || !prefix[0])
		return;
	const char *subfolders[] = { "lib64", "lib", "lib/*-linux-gnu", "targets/*/lib", "nvvm/lib64", "extras/CUPTI/lib64" };
	for (size_t i = 0; i < sizeof(subfolders) / sizeof(subfolders[0]); i++) {
		char *pattern;
		if (asprintf(&pattern, "%s/%s", prefix, subfolders[i]) >= 0) {
			add_glob(pattern);
			free(pattern);
		}
	}
}

/* Lines of a command's output (run with /bin/sh -c), or NULL when it failed. */
static char *output_of(const char *command)
{
	FILE *f = popen(command, "r");
	if (!f)
		return NULL;
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);
	char line[4096];
	while (fgets(line, sizeof(line), f))
		fputs(line, out);
	fclose(out);
	if (pclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void find_binaries(void)
{
	add_toolkit(getenv("NVI_CUDA_HOME"));
	add_toolkit(getenv("CUDA_HOME"));
	add_toolkit(getenv("CUDA_PATH"));
	add_glob("/usr/local/cuda*/lib64");
	add_glob("/usr/local/cuda*/targets/*/lib");
	/* The wheels: site-packages/nvidia/PKG/lib (CUDA 12) and nvidia/cu13/lib (CUDA 13). */
	char *site = output_of("python3 -c 'import site; print(\"\\n\".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null");
	for (char *line = site ? strtok(site, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		char *pattern;
		if (asprintf(&pattern, "%s/nvidia/*/lib", line) >= 0) {
			add_glob(pattern);
			free(pattern);
		}
	}
	free(site);
	/* Whatever the loader's cache lists: a system CUDA lands there. */
	char *cache = output_of("{ /sbin/ldconfig -p || ldconfig -p; } 2>/dev/null");
	size_t before = binary_count;
	for (char *line = cache ? strtok(cache, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		char *arrow = strstr(line, " => ");
		if (arrow)
			add_binary(arrow + 4);
	}
	free(cache);
	if (binary_count > before) {
		char *grown;
		if (asprintf(&grown, "%s ld.so.cache", places ? places : "") >= 0) {
			free(places);
			places = grown;
		}
	}
}

static bool family_is(int family, void *arg) { return family == *(int *)arg; }

START_TEST(test_every_binarys_needed_families_are_in_its_row)
{
	size_t checked = 0, needs = 0;
	char *wrong = test_format("%s", "");
	bool *confirmed = calloc(libnames_count * libnames_count, sizeof(bool));
	bool *seen = calloc(libnames_count, sizeof(bool));
	for (size_t i = 0; i < binary_count; i++) {
		struct elf_facts facts;
		char message[512];
		if (elf_read_facts(binaries[i].path, &facts, message, sizeof(message)) != ELF_READER_OK)
			continue;
		const char *name = facts.soname ? facts.soname : strrchr(binaries[i].path, '/') + 1;
		int family = libnames_match_linux(name, NULL);
		if (family < 0 || !facts.has_dynamic) {
			elf_facts_free(&facts);
			continue;
		}
		checked++;
		seen[family] = true;
		for (size_t k = 0; k < facts.needed_count; k++) {
			int needed = libnames_match_linux(facts.needed[k], NULL);
			if (needed < 0)
				continue;
			needs++;
			confirmed[(size_t)family * libnames_count + (size_t)needed] = true;
			if (!libnames_foreach_family(libnames[family].needed, family_is, &needed))
				wrong = test_format("%s\n  %s (%s) needs %s (%s), which the row of %s does not list", wrong, binaries[i].path, name,
						    facts.needed[k], libnames[needed].family, libnames[family].family);
		}
		elf_facts_free(&facts);
	}
	printf("%zu NVIDIA binaries from%s: %zu NVIDIA DT_NEEDED entries checked\n", checked, places, needs);
	/* A family a row names that no binary found here needs: fine for the union, worth seeing. */
	for (size_t f = 0; f < libnames_count; f++)
		for (size_t n = 0; seen[f] && n < libnames_count; n++) {
			int needed = (int)n;
			if (libnames_foreach_family(libnames[f].needed, family_is, &needed) && !confirmed[f * libnames_count + n])
				printf("  note: the row of %s lists %s, which no binary of it here needs\n", libnames[f].family, libnames[n].family);
		}
	ck_assert_msg(checked > 0, "no NVIDIA binary could be read among %zu files", binary_count);
	ck_assert_msg(wrong[0] == '\0', "DT_NEEDED the table does not hold:%s", wrong);
	free(confirmed);
	free(seen);
}
END_TEST

int main(void)
{
	find_binaries();
	if (binary_count == 0) {
		printf("SKIP: no NVIDIA library on this host (a toolkit in -Dnvidia_toolkit, CUDA_HOME, CUDA_PATH or /usr/local/cuda*, "
		       "pip wheels of python3, or ld.so.cache)\n");
		return TEST_SKIP;
	}
	Suite *suite = suite_create("table_cuda");
	TCase *tc = tcase_create("table");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_every_binarys_needed_families_are_in_its_row);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
