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
#include "standins.h"

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
	bool whole;
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
		dprintf(fd, "%d %d\n%s", error, file.whole, text);
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
		int whole = 0;
		sscanf(data, "%d %d", &result.error, &whole);
		result.whole = whole != 0;
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

/* Both readers on one file; returns true when the oracle read it and the runtime's reader agreed.
   *whole (when not NULL) is then whether both found the file whole. */
static bool compare_whole(const char *path, const char *label, bool *whole)
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
		if (ours.error == 0) {
			ck_assert_msg(strcmp(ours.dynamic, oracle.dynamic) == 0, "%s: the readers differ\nruntime:\n%slibelf:\n%s", label,
				      ours.dynamic, oracle.dynamic);
			ck_assert_msg(ours.whole == oracle.whole, "%s: whole to the runtime's reader %d, to libelf's %d", label, ours.whole,
				      oracle.whole);
			if (whole)
				*whole = ours.whole;
		}
	} else if (oracle.error != ELF_READER_OK) {
		ck_assert_msg(ours.error != 0, "%s: libelf refuses it (%s), the runtime's reader read\n%s", label, oracle.message,
			      ours.dynamic);
	}
	elf_child_read_free(&oracle);
	return oracle_reads && ours.error == 0;
}

static bool compare(const char *path, const char *label) { return compare_whole(path, label, NULL); }

/* A stand-in with every fact the readers report. */
static char *standin(void)
{
	char *folder = test_tmpdir();
	char *dep = test_format("%s/libdep.so.1", folder);
	test_build_library("value.c", dep, "libdep.so.1", "");
	char *path = test_format("%s/libnvrtc-builtins.so.77.1", folder);
	test_build_library("value.c", path, "libnvrtc-builtins.so.77.1",
			   test_format("-Wl,--no-as-needed '%s' -Wl,--disable-new-dtags,-rpath,'$ORIGIN/a:/b' -Wl,-z,nodefaultlib", dep));
	return path;
}

START_TEST(test_same_facts_as_libelf_for_a_standin)
{
	char *path = standin();
	ck_assert(compare(path, path));
	static struct dynamic_file file;
	ck_assert_int_eq(dynamic_read_file(path, &file), 0);
	ck_assert_str_eq(file.soname, "libnvrtc-builtins.so.77.1");
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
	size_t agreed = 0, cut = 0;
	for (size_t i = 0; i < count; i++) {
		bool whole = true;
		if (compare_whole(files[i].path, files[i].name, &whole)) {
			agreed++;
			cut += !whole;
		}
	}
	/* Some damage is where neither reader looks: those files must read, and the same. Some of
	   them the loader cannot map whole (a truncation after the strings, a segment claiming more
	   than the file has): both readers must say so. */
	ck_assert_msg(agreed > 0, "no corpus file read alike");
	ck_assert_msg(cut > 0, "no corpus file read alike and found cut short");
	elf_corpus_free(files, count);
}
END_TEST

/* A copy cut short inside its last load segment (an interrupted install) still reads, headers,
   dynamic section and strings, but the loader would map past its end: both readers say it is not
   whole; uncut, it is. */
START_TEST(test_copy_cut_inside_a_load_segment_reads_but_is_not_whole)
{
	char *path = test_format("%s/libnvrtc-builtins.so.77.1", test_tmpdir());
	test_build_library("value.c", path, "libnvrtc-builtins.so.77.1", STANDIN_PADDING);
	bool whole = false;
	ck_assert(compare_whole(path, "uncut", &whole));
	ck_assert_msg(whole, "the uncut copy is whole");
	standin_cut_library(path, STANDIN_CUT_DATA);
	ck_assert(compare_whole(path, "cut", &whole));
	ck_assert_msg(!whole, "the cut copy is not whole");
	static struct dynamic_file file;
	ck_assert_int_eq(dynamic_read_file(path, &file), 0);
	ck_assert(dynamic_file_is_compatible(&file) && !file.whole);
}
END_TEST

/* The check before the load: the same file untouched is unchanged; rewritten in place, cut
   short, or replaced by another file under its name, it is not. */
START_TEST(test_a_file_rewritten_since_its_read_is_changed)
{
	char *folder = test_tmpdir();
	char *path = test_format("%s/libnvrtc-builtins.so.77.1", folder), *other = test_format("%s/other", folder);
	standin_builtins(path, 42, NULL);
	static struct dynamic_file file;
	ck_assert_int_eq(dynamic_read_file(path, &file), 0);
	ck_assert(dynamic_file_unchanged(path, &file.identity));
	ck_assert_int_eq(truncate(path, file.identity.size - 1), 0);
	ck_assert(!dynamic_file_unchanged(path, &file.identity));
	ck_assert_int_eq(dynamic_read_file(path, &file), 0);
	standin_builtins(other, 42, "libnvrtc-builtins.so.77.1");
	ck_assert_int_eq(rename(other, path), 0);
	ck_assert(!dynamic_file_unchanged(path, &file.identity));
	ck_assert_int_eq(dynamic_read_file(path, &file), 0);
	FILE *out = fopen(path, "r+b");
	ck_assert_ptr_nonnull(out);
	fputc(0x7f, out); /* the same byte again: only the change time says it was written */
	fclose(out);
	ck_assert(!dynamic_file_unchanged(path, &file.identity));
	ck_assert(!dynamic_file_unchanged(test_format("%s/missing", folder), &file.identity));
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

/* The reader's file reads, wrapped (the suite links with --wrap for pread64 and mmap64, the
   names large-file builds call): once armed,
   the file is cut to nothing after the armed-th read or mapping, as pip rewriting a wheel would
   cut a candidate while the runtime reads it. */
static int cut_after = -1;
static int reads_seen;
static const char *cut_path;
ssize_t __real_pread64(int fd, void *buffer, size_t count, off_t offset);
ssize_t __wrap_pread64(int fd, void *buffer, size_t count, off_t offset);
void *__real_mmap64(void *address, size_t length, int protection, int flags, int fd, off_t offset);
void *__wrap_mmap64(void *address, size_t length, int protection, int flags, int fd, off_t offset);

static void count_read(int fd)
{
	if (cut_after >= 0 && fd >= 0 && ++reads_seen == cut_after + 1 && cut_path)
		ck_assert_int_eq(truncate(cut_path, 0), 0);
}

ssize_t __wrap_pread64(int fd, void *buffer, size_t count, off_t offset)
{
	ssize_t n = __real_pread64(fd, buffer, count, offset);
	count_read(fd);
	return n;
}

void *__wrap_mmap64(void *address, size_t length, int protection, int flags, int fd, off_t offset)
{
	void *mapped = __real_mmap64(address, length, protection, flags, fd, offset);
	count_read(fd);
	return mapped;
}

START_TEST(test_file_truncated_while_read_gives_an_error_never_a_signal)
{
	char *source = standin();
	size_t size = 0;
	char *bytes = test_read_stream(fopen(source, "rb"), &size);
	/* How many reads a whole read takes, then each cut in turn, each in a child of its own. */
	cut_after = 1 << 30;
	reads_seen = 0;
	static struct dynamic_file file;
	ck_assert_int_eq(dynamic_read_file(source, &file), 0);
	int reads = reads_seen;
	ck_assert_int_gt(reads, 0);
	for (int k = 0; k < reads; k++) {
		char *copy = test_format("%s.cut%d", source, k);
		FILE *out = fopen(copy, "wb");
		fwrite(bytes, 1, size, out);
		fclose(out);
		fflush(NULL);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			cut_after = k;
			cut_path = copy;
			reads_seen = 0;
			int error = dynamic_read_file(copy, &file);
			/* Cut after its last read, the reader has read it all. */
			bool expected = k == reads - 1 ? error == 0 : error == -EIO || error == -ENOEXEC;
			_exit(expected ? 0 : 1);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		ck_assert_msg(!WIFSIGNALED(status), "cut after read %d of %d: killed by signal %d", k, reads, WTERMSIG(status));
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "cut after read %d of %d: not the answer expected", k, reads);
	}
	cut_after = -1;
}
END_TEST

/* A loaded object made up in memory: a PT_LOAD over a buffer holding its dynamic section and a
   string table with its soname, at a small load base. glibc adds the base to DT_STRTAB in a
   writable dynamic section and leaves it an offset in a read-only one (the vDSO's): the reader
   must follow that rule, not guess from the value. */
static void check_loaded_soname_with_strtab_stored(bool writable)
{
	static union {
		ElfW(Dyn) dynamic[4];
		char bytes[256];
	} image;
	static const char strings[] = "\0libnvrtc.so.77";
	memcpy(image.bytes + 128, strings, sizeof(strings));
	ElfW(Addr) base = 0x1000;
	ElfW(Addr) address = (ElfW(Addr))image.bytes; /* where the object lies in memory */
	ElfW(Addr) strtab_offset = address + 128 - base;
	image.dynamic[0] = (ElfW(Dyn)){ .d_tag = DT_STRTAB, .d_un.d_ptr = writable ? base + strtab_offset : strtab_offset };
	image.dynamic[1] = (ElfW(Dyn)){ .d_tag = DT_STRSZ, .d_un.d_val = sizeof(strings) };
	image.dynamic[2] = (ElfW(Dyn)){ .d_tag = DT_SONAME, .d_un.d_val = 1 };
	image.dynamic[3] = (ElfW(Dyn)){ .d_tag = DT_NULL };
	ElfW(Phdr) phdr[2] = {
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_vaddr = address - base, .p_memsz = sizeof(image) },
		{ .p_type = PT_DYNAMIC, .p_flags = writable ? PF_R | PF_W : PF_R, .p_vaddr = address - base,
		  .p_memsz = sizeof(image.dynamic) },
	};
	struct dynamic_facts facts;
	ck_assert(dynamic_read_loaded(base, phdr, 2, &facts));
	ck_assert_msg(facts.soname && strcmp(facts.soname, "libnvrtc.so.77") == 0, "writable %d: soname %s", writable,
		      facts.soname ? facts.soname : "(none)");
}

START_TEST(test_strtab_of_a_writable_dynamic_section_is_relocated_in_place) { check_loaded_soname_with_strtab_stored(true); }
END_TEST

START_TEST(test_strtab_of_a_read_only_dynamic_section_stays_an_offset) { check_loaded_soname_with_strtab_stored(false); }
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
		bool whole = false;
		ck_assert_msg(compare_whole(path, path, &whole), "%s: not read alike", path);
		ck_assert_msg(whole, "%s: a real library the loader maps whole is not found whole", path);
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
		tcase_add_test(tc, test_copy_cut_inside_a_load_segment_reads_but_is_not_whole);
		tcase_add_test(tc, test_a_file_rewritten_since_its_read_is_changed);
		tcase_add_test(tc, test_hostile_paths_give_an_error);
		tcase_add_test(tc, test_file_truncated_while_read_gives_an_error_never_a_signal);
		tcase_add_test(tc, test_strtab_of_a_writable_dynamic_section_is_relocated_in_place);
		tcase_add_test(tc, test_strtab_of_a_read_only_dynamic_section_stays_an_offset);
		tcase_add_test(tc, test_dynamic_section_overlapping_the_header_is_refused_by_both);
		tcase_add_test(tc, test_program_headers_overlapping_the_header_are_refused_by_both);
	}
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
