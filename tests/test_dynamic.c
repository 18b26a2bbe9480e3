/* The runtime's own reader (src/linux/dynamic.c) held against the libelf reader (inspect/elf/): over
   stand-ins, over the broken files of tests/elf_corpus.c, and (test_dynamic cuda) over every
   library of the CUDA toolkit. Where libelf reads a file of this process's class and byte order,
   the runtime's reader gives the same facts (or says the file is past its bounds); where libelf
   refuses a file, so does it; and it never crashes or hangs. */
#define _GNU_SOURCE
#include "common.h"
#include "elf_check.h"
#include "elf_corpus.h"
#include "linux/dynamic.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *or_none(const char *s) { return s ? s : "(none)"; }

/* The same lines as elf_facts_text without its header line. */
static char *dynamic_text(const struct dynamic_file *file)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	fprintf(out, "dynamic %d\nnodeflib %d\ninterp %s\nsoname %s\nrpath %s\nrunpath %s\n", file->has_dynamic, file->nodeflib,
		or_none(file->interp), or_none(file->soname), or_none(file->rpath), or_none(file->runpath));
	for (size_t i = 0; i < file->needed_count; i++)
		fprintf(out, "needed %s\n", file->needed[i]);
	fclose(out);
	return text;
}

struct runtime_read {
	int status; /* the child's exit status, or 128 + signal */
	int error;  /* dynamic_read_file's answer */
	char *dynamic;
};

/* dynamic_read_file in a forked child, so that a crash or a hang fails one file, not the suite. */
static struct runtime_read runtime_read_in_child(const char *path)
{
	struct runtime_read result = { .status = -1, .error = 0, .dynamic = NULL };
	char *output = test_format("%s/nvinterpose-dynamic-XXXXXX", getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
	int fd = mkstemp(output);
	ck_assert_int_ge(fd, 0);
	unlink(output);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL); /* Check's handler would end the whole test */
		alarm(30);
		static struct dynamic_file file;
		int error = dynamic_read_file(path, &file);
		char *text = dynamic_text(&file);
		dprintf(fd, "%d\n%s", error, text);
		_exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	char *data = calloc(1, 1 << 20);
	ssize_t n = pread(fd, data, (1 << 20) - 1, 0);
	close(fd);
	if (n > 0) {
		char *newline = strchr(data, '\n');
		result.error = atoi(data);
		result.dynamic = newline ? newline + 1 : data;
	}
	return result;
}

/* "header class=2 data=1 ..." of the oracle: is the file of this process's class and byte order? */
static bool is_own_class(const char *facts)
{
	unsigned elf_class = 0, data = 0;
	return facts && sscanf(facts, "header class=%u data=%u", &elf_class, &data) == 2 &&
	       elf_class == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
	       data == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
}

/* Both readers on one file; returns true when the oracle read it and the runtime's reader agreed. */
static bool compare(const char *path, const char *label)
{
	struct elf_child_read oracle = elf_read_in_child(path, 30);
	struct runtime_read ours = runtime_read_in_child(path);
	ck_assert_msg(ours.status == 0, "%s: the runtime's reader ended with status %d%s", label, ours.status,
		      ours.status == 128 + SIGALRM ? " (it hung)" : "");
	ck_assert_msg(oracle.status == 0, "%s: the libelf reader ended with status %d", label, oracle.status);
	bool oracle_reads = oracle.error == ELF_READER_OK && is_own_class(oracle.facts);
	if (oracle_reads) {
		ck_assert_msg(ours.error == 0 || ours.error == -E2BIG, "%s: libelf reads it, the runtime's reader says %s", label,
			      strerror(-ours.error));
		if (ours.error == 0)
			ck_assert_msg(strcmp(ours.dynamic, oracle.dynamic) == 0, "%s: the readers differ\nruntime:\n%slibelf:\n%s", label,
				      ours.dynamic, oracle.dynamic);
	} else if (oracle.error != ELF_READER_OK) {
		ck_assert_msg(ours.error != 0, "%s: libelf refuses it (%s), the runtime's reader read\n%s", label, oracle.message,
			      ours.dynamic);
	}
	elf_child_read_free(&oracle);
	return oracle_reads && ours.error == 0;
}

/* A stand-in with every fact the readers report. */
static char *standin(void)
{
	char *folder = test_tmpdir();
	char *dep = test_format("%s/libdep.so.1", folder);
	test_build_library("value.c", dep, "libdep.so.1", "");
	char *path = test_format("%s/libnvrtc-builtins.so.12.9", folder);
	test_build_library("value.c", path, "libnvrtc-builtins.so.12.9",
			   test_format("-Wl,--no-as-needed '%s' -Wl,--disable-new-dtags,-rpath,'$ORIGIN/a:/b' -Wl,-z,nodefaultlib", dep));
	return path;
}

START_TEST(test_same_facts_as_libelf_for_a_standin)
{
	char *path = standin();
	ck_assert(compare(path, path));
	static struct dynamic_file file;
	ck_assert_int_eq(dynamic_read_file(path, &file), 0);
	ck_assert_str_eq(file.soname, "libnvrtc-builtins.so.12.9");
	ck_assert_str_eq(file.rpath, "$ORIGIN/a:/b");
	ck_assert(file.nodeflib);
	ck_assert_msg(file.needed_count >= 2 && strcmp(file.needed[0], "libdep.so.1") == 0, "%zu", file.needed_count);
}
END_TEST

START_TEST(test_broken_files_give_an_error_or_the_same_facts)
{
	char *folder = test_tmpdir();
	struct elf_corpus_file *files = NULL;
	size_t count = elf_corpus_write(standin(), folder, &files);
	ck_assert_uint_gt(count, 50);
	size_t agreed = 0;
	for (size_t i = 0; i < count; i++)
		agreed += compare(files[i].path, files[i].name);
	/* Some damage is where neither reader looks: those files must read, and the same. */
	ck_assert_msg(agreed > 0, "no corpus file read alike");
	elf_corpus_free(files, count);
}
END_TEST

START_TEST(test_hostile_paths_give_an_error)
{
	static struct dynamic_file file;
	char *folder = test_tmpdir();
	char *fifo = test_format("%s/fifo", folder);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	ck_assert_int_eq(runtime_read_in_child(fifo).error, -EINVAL);
	ck_assert_int_eq(dynamic_read_file(folder, &file), -EISDIR);
	ck_assert_int_eq(dynamic_read_file("/nonexistent/libx.so", &file), -ENOENT);
	ck_assert_int_eq(dynamic_read_file("/dev/zero", &file), -EINVAL);
	char *empty = test_format("%s/empty", folder);
	test_write_file(empty, "");
	ck_assert_int_eq(dynamic_read_file(empty, &file), -ENOEXEC);
}
END_TEST

/* A copy of the stand-in with patch applied to its header or program headers. */
static char *patched_copy(void (*patch)(ElfW(Ehdr) *header, ElfW(Phdr) *phdr))
{
	char *source = standin(), *copy = test_format("%s.patched", source);
	size_t size = 0;
	char *bytes = test_read_stream(fopen(source, "rb"), &size);
	ElfW(Ehdr) *header = (ElfW(Ehdr) *)bytes;
	patch(header, (ElfW(Phdr) *)(bytes + header->e_phoff));
	FILE *out = fopen(copy, "wb");
	fwrite(bytes, 1, size, out);
	fclose(out);
	return copy;
}

static void dynamic_at_offset_1(ElfW(Ehdr) *header, ElfW(Phdr) *phdr)
{
	for (int i = 0; i < header->e_phnum; i++)
		if (phdr[i].p_type == PT_DYNAMIC)
			phdr[i].p_offset = 1;
}

static void program_headers_inside_the_header(ElfW(Ehdr) *header, ElfW(Phdr) *phdr)
{
	(void)phdr;
	header->e_phoff = 46;
}

/* Found by fuzz/run.sh dynamic: the libelf reader then read a private copy whose ELF header had its
   section-header fields cleared, so a dynamic section or program headers that overlap the header
   read differently there than in the file. Both readers refuse such files. */
START_TEST(test_dynamic_section_overlapping_the_header_is_refused_by_both)
{
	char *path = patched_copy(dynamic_at_offset_1);
	compare(path, "PT_DYNAMIC at offset 1");
	static struct dynamic_file file;
	ck_assert_int_eq(dynamic_read_file(path, &file), -ENOEXEC);
}
END_TEST

START_TEST(test_program_headers_overlapping_the_header_are_refused_by_both)
{
	char *path = patched_copy(program_headers_inside_the_header);
	compare(path, "e_phoff 46");
	static struct dynamic_file file;
	ck_assert_int_eq(dynamic_read_file(path, &file), -ENOEXEC);
	struct elf_facts facts;
	char message[256];
	ck_assert_int_eq(elf_read_facts(path, &facts, message, sizeof(message)), ELF_READER_MALFORMED);
}
END_TEST

static const char *lib64;

START_TEST(test_same_facts_as_libelf_over_the_toolkit)
{
	DIR *dir = opendir(lib64);
	ck_assert_ptr_nonnull(dir);
	size_t compared = 0;
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		if (strncmp(entry->d_name, "lib", 3) != 0 || !strstr(entry->d_name, ".so."))
			continue;
		char *path = test_format("%s/%s", lib64, entry->d_name);
		ck_assert_msg(compare(path, path), "%s: not read alike", path);
		compared++;
	}
	closedir(dir);
	ck_assert_uint_ge(compared, 20);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *suite = suite_create("dynamic");
	TCase *tc = tcase_create("dynamic");
	tcase_set_timeout(tc, 600);
	if (argc > 1 && strcmp(argv[1], "cuda") == 0) {
		const char *home = getenv("NVI_CUDA_HOME") ? getenv("NVI_CUDA_HOME") : "/usr/local/cuda";
		char *folder = NULL;
		if (asprintf(&folder, "%s/lib64", home) < 0 || access(folder, R_OK) != 0) {
			printf("SKIP: no CUDA toolkit at %s\n", home);
			return TEST_SKIP;
		}
		lib64 = folder;
		tcase_add_test(tc, test_same_facts_as_libelf_over_the_toolkit);
	} else {
		tcase_add_test(tc, test_same_facts_as_libelf_for_a_standin);
		tcase_add_test(tc, test_broken_files_give_an_error_or_the_same_facts);
		tcase_add_test(tc, test_hostile_paths_give_an_error);
		tcase_add_test(tc, test_dynamic_section_overlapping_the_header_is_refused_by_both);
		tcase_add_test(tc, test_program_headers_overlapping_the_header_are_refused_by_both);
	}
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
