/* The libelf reader: facts of stand-in libraries built at test time read back exactly, with or
   without section headers; every file of the broken-ELF corpus gives an error or valid facts and
   never a crash or a hang; files that are not files are refused without blocking; the loader's
   compatibility rules; and the expansion of $ORIGIN, $LIB and $PLATFORM by glibc's rules. */
#define _GNU_SOURCE
#include "common.h"
#include "elf_check.h"
#include "elf_corpus.h"

#include "elf/elf_reader.h"

#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* -nostdlib and a trailing --as-needed keep the C library and test_build_library's -ldl out of
   DT_NEEDED, so the list is exactly what a row asks for. */
#define EXACT_NEEDED "-nostdlib -Wl,--as-needed"

/* A folder of this test's own: Check runs each test in a child, which removes its folders at exit. */
static char *test_folder(void)
{
	static char *folder;
	if (!folder)
		folder = test_tmpdir();
	return folder;
}

static char *read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	return test_read_stream(f, size);
}

static void write_whole(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	ck_assert_uint_eq(fwrite(data, 1, size, f), size);
	fclose(f);
}

/* Two libraries for the stand-ins to need; built once. */
static const char *dependencies(void)
{
	static char *folder;
	if (!folder) {
		folder = test_format("%s/deps", test_folder());
		test_mkdirs(folder);
		test_build_library("value.c", test_format("%s/libdep_a.so.1", folder), "libdep_a.so.1", EXACT_NEEDED);
		test_build_library("value.c", test_format("%s/libdep_b.so.2", folder), "libdep_b.so.2", EXACT_NEEDED);
	}
	return folder;
}

struct standin_row {
	const char *name;
	const char *soname; /* "" for none */
	const char *flags;  /* before EXACT_NEEDED; "%s" is the dependencies' folder */
	const char *needed; /* expected, '|'-separated */
	const char *rpath, *runpath;
	bool nodeflib;
};

static const struct standin_row standin_rows[] = {
	{ "plain", "libplain.so.1", "", "", NULL, NULL, false },
	{ "no-soname", "", "", "", NULL, NULL, false },
	/* DT_NEEDED in link order, not sorted: b before a. */
	{ "runpath-nodeflib", "libnvrtc.so.13",
	  "-L%s -Wl,--no-as-needed -l:libdep_b.so.2 -l:libdep_a.so.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib:/opt/x' "
	  "-Wl,-z,nodefaultlib",
	  "libdep_b.so.2|libdep_a.so.1", NULL, "$ORIGIN/../lib:/opt/x", true },
	/* Linked at 0x200000: DT_STRTAB, an address, is not the string table's file offset. */
	{ "rpath", "libcudnn.so.9",
	  "-L%s -Wl,--no-as-needed -l:libdep_a.so.1 -Wl,--disable-new-dtags,-rpath,'${ORIGIN}:$LIB/x' "
	  "-Wl,-Ttext-segment=0x200000",
	  "libdep_a.so.1", "${ORIGIN}:$LIB/x", NULL, false },
};

static char *build_standin(const struct standin_row *row)
{
	char *path = test_format("%s/%s.so", test_folder(), row->name);
	char *flags = test_format(row->flags, dependencies());
	test_build_library("value.c", path, row->soname, test_format("%s %s", flags, EXACT_NEEDED));
	return path;
}

static void assert_string(const char *what, const char *got, const char *expected)
{
	ck_assert_msg((!got && !expected) || (got && expected && strcmp(got, expected) == 0), "%s: '%s', expected '%s'",
		      what, got ? got : "(none)", expected ? expected : "(none)");
}

static void assert_facts_of_row(const struct elf_facts *facts, const struct standin_row *row)
{
	struct elf_host host = elf_host_of_this_process();
	ck_assert_uint_eq(facts->elf_class, host.elf_class);
	ck_assert_uint_eq(facts->data, host.data);
	ck_assert_uint_eq(facts->machine, host.machine);
	ck_assert_uint_eq(facts->type, ET_DYN);
	ck_assert(facts->has_dynamic);
	assert_string("interp", facts->interp, NULL);
	assert_string("soname", facts->soname, row->soname[0] ? row->soname : NULL);
	assert_string("rpath", facts->rpath, row->rpath);
	assert_string("runpath", facts->runpath, row->runpath);
	ck_assert_msg(facts->nodeflib == row->nodeflib, "%s: nodeflib %d", row->name, facts->nodeflib);
	char *needed = strdup("");
	for (size_t i = 0; i < facts->needed_count; i++)
		needed = test_format("%s%s%s", needed, i ? "|" : "", facts->needed[i]);
	assert_string("needed", needed, row->needed);
}

START_TEST(test_standin_facts_read_back_exactly)
{
	const struct standin_row *row = &standin_rows[_i];
	char *path = build_standin(row);
	struct elf_facts facts;
	char message[256];
	ck_assert_msg(elf_read_facts(path, &facts, message, sizeof(message)) == ELF_READER_OK, "%s", message);
	assert_facts_of_row(&facts, row);
	elf_facts_free(&facts);
}
END_TEST

/* The same file with its section header table made useless three ways: the header's fields
   cleared, the table overwritten, the table cut off with everything after the last segment. */
START_TEST(test_facts_do_not_depend_on_section_headers)
{
	const struct standin_row *row = &standin_rows[2];
	char *path = build_standin(row);
	size_t size;
	char *original = read_whole(path, &size);
	Elf64_Ehdr header;
	ck_assert_uint_ge(size, sizeof(header));
	memcpy(&header, original, sizeof(header));
	ck_assert_uint_eq(header.e_ident[EI_CLASS], ELFCLASS64);
	ck_assert_msg(header.e_shnum > 0 && header.e_shoff > 0 && header.e_shoff + header.e_shnum * sizeof(Elf64_Shdr) <= size,
		      "the stand-in has no section headers to damage");

	char *cleared_path = test_format("%s/cleared.so", test_folder());
	Elf64_Ehdr cleared = header;
	cleared.e_shoff = 0, cleared.e_shnum = 0, cleared.e_shstrndx = 0;
	memcpy(original, &cleared, sizeof(cleared));
	write_whole(cleared_path, original, size);

	char *overwritten_path = test_format("%s/overwritten.so", test_folder());
	memcpy(original, &header, sizeof(header));
	memset(original + header.e_shoff, 0xa5, header.e_shnum * sizeof(Elf64_Shdr));
	write_whole(overwritten_path, original, size);

	/* The end of the last segment's file image: nothing after it is needed to load the file. */
	char *cut_path = test_format("%s/cut.so", test_folder());
	uint64_t end = 0;
	for (size_t i = 0; i < header.e_phnum; i++) {
		Elf64_Phdr phdr;
		memcpy(&phdr, original + header.e_phoff + i * sizeof(phdr), sizeof(phdr));
		if (phdr.p_offset + phdr.p_filesz > end)
			end = phdr.p_offset + phdr.p_filesz;
	}
	ck_assert_uint_le(end, header.e_shoff);
	memcpy(original, &cleared, sizeof(cleared));
	write_whole(cut_path, original, end);

	const char *paths[] = { cleared_path, overwritten_path, cut_path };
	for (size_t i = 0; i < 3; i++) {
		struct elf_facts facts;
		char message[256];
		ck_assert_msg(elf_read_facts(paths[i], &facts, message, sizeof(message)) == ELF_READER_OK, "%s", message);
		assert_facts_of_row(&facts, row);
		elf_facts_free(&facts);
	}
}
END_TEST

/* The dynamic loader named in this program's PT_INTERP, as the loader itself reports it. */
static int find_interpreter(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP)
			*(const char **)arg = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return 1; /* the main program comes first */
}

START_TEST(test_interpreter_of_this_program_is_read)
{
	const char *interp = NULL;
	dl_iterate_phdr(find_interpreter, &interp);
	ck_assert_ptr_nonnull(interp);
	struct elf_facts facts;
	char message[256];
	ck_assert_msg(elf_read_facts("/proc/self/exe", &facts, message, sizeof(message)) == ELF_READER_OK, "%s", message);
	assert_string("interp", facts.interp, interp);
	ck_assert(facts.has_dynamic);
	elf_facts_free(&facts);
}
END_TEST

/* The program headers of a 64-bit file read whole into data. */
static Elf64_Phdr *program_headers(char *data, size_t size, size_t *count)
{
	Elf64_Ehdr header;
	ck_assert_uint_ge(size, sizeof(header));
	memcpy(&header, data, sizeof(header));
	ck_assert_uint_eq(header.e_ident[EI_CLASS], ELFCLASS64);
	ck_assert_uint_le(header.e_phoff + header.e_phnum * sizeof(Elf64_Phdr), size);
	ck_assert_uint_eq(header.e_phoff % 8, 0);
	*count = header.e_phnum;
	return (Elf64_Phdr *)(data + header.e_phoff);
}

static size_t index_of_type(const Elf64_Phdr *phdr, size_t count, uint32_t type)
{
	for (size_t i = 0; i < count; i++)
		if (phdr[i].p_type == type)
			return i;
	ck_abort_msg("no program header of type %u", type);
	return 0;
}

/* glibc's l_ld is the last PT_DYNAMIC that is not empty: here the real one moved last, a decoy over
   the code before it and an empty one after it. */
START_TEST(test_last_nonempty_dynamic_segment_is_the_one_read)
{
	const struct standin_row *row = &standin_rows[2];
	size_t size, count;
	char *data = read_whole(build_standin(row), &size);
	Elf64_Phdr *phdr = program_headers(data, size, &count);
	size_t dynamic = index_of_type(phdr, count, PT_DYNAMIC), stack = index_of_type(phdr, count, PT_GNU_STACK);
	ck_assert_uint_gt(count, dynamic + 2);
	ck_assert(phdr[count - 2].p_type != PT_LOAD && phdr[count - 1].p_type != PT_LOAD);
	Elf64_Phdr real = phdr[dynamic], decoy = real;
	decoy.p_offset = 0;
	phdr[dynamic] = decoy;
	phdr[stack] = phdr[count - 1];
	phdr[count - 2] = real;
	phdr[count - 1] = real;
	phdr[count - 1].p_filesz = phdr[count - 1].p_memsz = 0;
	char *path = test_format("%s/two-dynamic.so", test_folder());
	write_whole(path, data, size);
	struct elf_facts facts;
	char message[256];
	ck_assert_msg(elf_read_facts(path, &facts, message, sizeof(message)) == ELF_READER_OK, "%s", message);
	assert_facts_of_row(&facts, row);
	elf_facts_free(&facts);
}
END_TEST

/* The kernel starts the first PT_INTERP's interpreter; a later one names another file. */
START_TEST(test_first_interpreter_is_the_one_read)
{
	size_t size, count;
	char *data = read_whole("/proc/self/exe", &size);
	Elf64_Phdr *phdr = program_headers(data, size, &count);
	size_t interp = index_of_type(phdr, count, PT_INTERP), note = index_of_type(phdr, count, PT_NOTE);
	ck_assert_uint_gt(note, interp);
	const char *name = data + phdr[interp].p_offset;
	const char *slash = strrchr(name, '/');
	ck_assert_ptr_nonnull(slash);
	phdr[note] = phdr[interp];
	phdr[note].p_offset += (uint64_t)(slash - name);
	phdr[note].p_filesz -= (uint64_t)(slash - name);
	char *path = test_format("%s/two-interp", test_folder());
	write_whole(path, data, size);
	struct elf_facts facts;
	char message[256];
	ck_assert_msg(elf_read_facts(path, &facts, message, sizeof(message)) == ELF_READER_OK, "%s", message);
	assert_string("interp", facts.interp, name);
	elf_facts_free(&facts);
}
END_TEST

START_TEST(test_corpus_of_a_standin_gives_errors_or_valid_facts)
{
	ck_assert_uint_ge(elf_check_corpus(build_standin(&standin_rows[2])), 80);
	ck_assert_uint_ge(elf_check_corpus(build_standin(&standin_rows[3])), 80);
}
END_TEST

/* This program has PT_INTERP, which the stand-ins lack. */
START_TEST(test_corpus_of_this_program_gives_errors_or_valid_facts)
{
	char *copy = test_format("%s/self", test_folder());
	test_copy_file("/proc/self/exe", copy);
	ck_assert_uint_ge(elf_check_corpus(copy), 80);
}
END_TEST

/* A corpus file by the name the generator gave it: of the runpath-nodeflib stand-in, or with a
   "self-" prefix, of this program (which has PT_INTERP). */
static char *corpus_file(const char *name)
{
	bool self = strncmp(name, "self-", 5) == 0;
	char *folder = test_format("%s/corpus-%s", test_folder(), self ? "self" : "standin");
	char *source = self ? test_format("%s/self", test_folder()) : build_standin(&standin_rows[2]);
	if (self)
		test_copy_file("/proc/self/exe", source);
	test_mkdirs(folder);
	struct elf_corpus_file *files = NULL;
	size_t count = elf_corpus_write(source, folder, &files);
	ck_assert_uint_gt(count, 0);
	for (size_t i = 0; i < count; i++)
		if (strcmp(files[i].name, self ? name + 5 : name) == 0)
			return files[i].path;
	ck_abort_msg("no corpus file named %s", name);
	return NULL;
}

struct error_row {
	const char *file;
	enum elf_reader_error error;
	const char *message; /* a part of the message */
};

static const struct error_row error_rows[] = {
	{ "empty", ELF_READER_NOT_ELF, "too short" },
	{ "not-elf", ELF_READER_NOT_ELF, "not an ELF file" },
	{ "ar-archive", ELF_READER_NOT_ELF, "not an ELF file" },
	{ "magic-only", ELF_READER_MALFORMED, "identification" },
	{ "truncated-63", ELF_READER_MALFORMED, "truncated ELF header" },
	{ "truncated-64", ELF_READER_MALFORMED, "program headers" },
	{ "bad-class", ELF_READER_MALFORMED, "class" },
	{ "bad-data", ELF_READER_MALFORMED, "data encoding" },
	{ "bad-version", ELF_READER_MALFORMED, "version 2" },
	/* e_phoff 0 means "no table" while e_phnum counts one: neither can be believed. */
	{ "e_phoff-0", ELF_READER_MALFORMED, "e_phoff is 0" },
	{ "e_phoff-max", ELF_READER_MALFORMED, "program headers" },
	{ "e_phnum-max", ELF_READER_UNSUPPORTED, "PN_XNUM" },
	{ "e_phentsize-0", ELF_READER_MALFORMED, "e_phentsize" },
	{ "e_phentsize-max", ELF_READER_MALFORMED, "e_phentsize" },
	{ "dynamic-offset-beyond", ELF_READER_MALFORMED, "PT_DYNAMIC" },
	{ "dynamic-size-beyond", ELF_READER_MALFORMED, "PT_DYNAMIC" },
	{ "dynamic-size-max", ELF_READER_MALFORMED, "PT_DYNAMIC" },
	{ "dynamic-size-1", ELF_READER_MALFORMED, "no entry" },
	{ "no-dt-null", ELF_READER_MALFORMED, "no DT_NULL" },
	{ "strtab-outside", ELF_READER_MALFORMED, "DT_STRTAB" },
	{ "strsz-beyond-file", ELF_READER_MALFORMED, "DT_STRSZ" },
	{ "strsz-max", ELF_READER_MALFORMED, "DT_STRSZ" },
	{ "strsz-0", ELF_READER_MALFORMED, "outside DT_STRSZ 0" },
	{ "soname-beyond-strsz", ELF_READER_MALFORMED, "DT_SONAME offset" },
	{ "needed-beyond-strsz", ELF_READER_MALFORMED, "DT_NEEDED offset" },
	{ "needed-max", ELF_READER_MALFORMED, "DT_NEEDED offset" },
	{ "runpath-beyond-strsz", ELF_READER_MALFORMED, "DT_RUNPATH offset" },
	{ "strsz-cuts-soname", ELF_READER_MALFORMED, "DT_SONAME is not terminated" },
	{ "strsz-cuts-runpath", ELF_READER_MALFORMED, "DT_RUNPATH is not terminated" },
	{ "needed-257", ELF_READER_UNSUPPORTED, "more than 256 DT_NEEDED" },
	{ "runpath-70000", ELF_READER_UNSUPPORTED, "DT_RUNPATH is longer than" },
	{ "self-interp-offset-beyond", ELF_READER_MALFORMED, "PT_INTERP" },
	{ "self-interp-unterminated", ELF_READER_MALFORMED, "PT_INTERP is not terminated" },
};

START_TEST(test_broken_file_gives_the_error_that_names_it)
{
	const struct error_row *row = &error_rows[_i];
	const char *path = corpus_file(row->file);
	struct elf_facts facts;
	char message[512];
	enum elf_reader_error error = elf_read_facts(path, &facts, message, sizeof(message));
	ck_assert_msg(error == row->error && strstr(message, row->message) && strstr(message, path),
		      "%s: error %d '%s', expected %d with '%s'", row->file, error, message, row->error, row->message);
	/* On failure nothing is left to free and the facts say nothing. */
	ck_assert_ptr_null(facts.soname);
	ck_assert_uint_eq(facts.needed_count, 0);
	ck_assert(!facts.has_dynamic);
}
END_TEST

/* glibc skips an empty PT_DYNAMIC (a separate debuginfo file has one): no dynamic facts, and not
   a file the loader takes. */
START_TEST(test_empty_dynamic_segment_is_skipped_as_the_loader_does)
{
	struct elf_facts facts;
	char message[256];
	ck_assert_msg(elf_read_facts(corpus_file("dynamic-size-0"), &facts, message, sizeof(message)) == ELF_READER_OK, "%s",
		      message);
	ck_assert(!facts.has_dynamic);
	ck_assert_ptr_null(facts.soname);
	struct elf_host host = elf_host_of_this_process();
	ck_assert(!elf_is_compatible(&facts, &host));
	elf_facts_free(&facts);
}
END_TEST

START_TEST(test_256_needed_read_in_order)
{
	struct elf_facts facts;
	char message[256];
	ck_assert_msg(elf_read_facts(corpus_file("needed-256"), &facts, message, sizeof(message)) == ELF_READER_OK, "%s",
		      message);
	ck_assert_uint_eq(facts.needed_count, 256);
	for (size_t i = 0; i < 256; i++) {
		char expected[32];
		snprintf(expected, sizeof(expected), "libneeded%zu.so.1", i);
		assert_string("needed", facts.needed[i], expected);
	}
	elf_facts_free(&facts);
}
END_TEST

START_TEST(test_runpath_of_60000_bytes_is_read_whole)
{
	struct elf_facts facts;
	char message[256];
	ck_assert_msg(elf_read_facts(corpus_file("runpath-60000"), &facts, message, sizeof(message)) == ELF_READER_OK, "%s",
		      message);
	ck_assert_ptr_nonnull(facts.runpath);
	ck_assert_uint_eq(strlen(facts.runpath), 60000);
	elf_facts_free(&facts);
}
END_TEST

/* Read in a child with an alarm, so a blocking open or read fails the test instead of hanging it. */
static void assert_refused(const char *path, enum elf_reader_error expected, const char *message)
{
	struct elf_child_read read = elf_read_in_child(path, 20);
	ck_assert_msg(read.status == 0, "%s: the read ended with status %d%s", path, read.status,
		      read.status == 128 + SIGALRM ? " (it blocked)" : "");
	ck_assert_msg(read.error == expected && strstr(read.message, message), "%s: error %d '%s', expected %d with '%s'",
		      path, read.error, read.message, expected, message);
	elf_child_read_free(&read);
}

START_TEST(test_fifo_is_refused_without_blocking)
{
	char *fifo = test_format("%s/fifo", test_folder());
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	assert_refused(fifo, ELF_READER_IO, "not a regular file");
}
END_TEST

START_TEST(test_device_directory_and_missing_path_are_refused)
{
	assert_refused("/dev/zero", ELF_READER_IO, "not a regular file");
	assert_refused(test_folder(), ELF_READER_IO, "not a regular file");
	assert_refused(test_format("%s/missing.so", test_folder()), ELF_READER_IO, "No such file");
}
END_TEST

START_TEST(test_message_stays_on_one_line)
{
	char *path = test_format("%s/two\nlines.so", test_folder());
	test_write_file(path, "not an ELF file");
	struct elf_facts facts;
	char message[256];
	ck_assert_int_eq(elf_read_facts(path, &facts, message, sizeof(message)), ELF_READER_NOT_ELF);
	ck_assert_msg(!strchr(message, '\n') && strstr(message, "lines.so"), "'%s'", message);
	/* A short buffer holds a cut, terminated message. */
	char small[8];
	memset(small, 'x', sizeof(small));
	ck_assert_int_eq(elf_read_facts(path, &facts, small, sizeof(small)), ELF_READER_NOT_ELF);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
}
END_TEST

START_TEST(test_facts_read_again_after_free)
{
	char *path = build_standin(&standin_rows[2]);
	struct elf_facts facts;
	char message[256];
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(elf_read_facts(path, &facts, message, sizeof(message)), ELF_READER_OK);
		assert_facts_of_row(&facts, &standin_rows[2]);
		elf_facts_free(&facts);
		ck_assert_ptr_null(facts.soname);
		ck_assert_uint_eq(facts.needed_count, 0);
	}
}
END_TEST

START_TEST(test_host_is_what_this_program_is_built_as)
{
	struct elf_host host = elf_host_of_this_process();
	struct elf_facts facts;
	char message[256];
	ck_assert_int_eq(elf_read_facts("/proc/self/exe", &facts, message, sizeof(message)), ELF_READER_OK);
	ck_assert_uint_eq(host.elf_class, facts.elf_class);
	ck_assert_uint_eq(host.data, facts.data);
	ck_assert_uint_eq(host.machine, facts.machine);
	ck_assert_uint_eq(host.elf_class, sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32);
	ck_assert_uint_eq(host.data, __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
	elf_facts_free(&facts);
}
END_TEST

/* A header field of the stand-in changed in the file; the facts read from it, then judged. */
struct compatibility_row {
	const char *name;
	size_t offset, size; /* in the ELF header; size 0: the file as built */
	uint64_t value;
	bool compatible;
};

static const struct compatibility_row compatibility_rows[] = {
	{ "as built", 0, 0, 0, true },
	{ "OS ABI GNU", EI_OSABI, 1, ELFOSABI_GNU, true },
	{ "OS ABI FreeBSD", EI_OSABI, 1, ELFOSABI_FREEBSD, false },
	{ "foreign machine", offsetof(Elf64_Ehdr, e_machine), 2, EM_S390, false },
	{ "executable", offsetof(Elf64_Ehdr, e_type), 2, ET_EXEC, false },
	{ "relocatable", offsetof(Elf64_Ehdr, e_type), 2, ET_REL, false },
	/* glibc: "object file has no dynamic section" */
	{ "no program headers", offsetof(Elf64_Ehdr, e_phnum), 2, 0, false },
};

START_TEST(test_compatibility_follows_the_loader)
{
	const struct compatibility_row *row = &compatibility_rows[_i];
	size_t size;
	char *data = read_whole(build_standin(&standin_rows[0]), &size);
	ck_assert_uint_eq((unsigned char)data[EI_CLASS], ELFCLASS64);
	ck_assert_uint_eq((unsigned char)data[EI_DATA], ELFDATA2LSB);
	for (size_t i = 0; i < row->size; i++)
		data[row->offset + i] = (char)(row->value >> (8 * i));
	char *path = test_format("%s/compatibility-%d.so", test_folder(), _i);
	write_whole(path, data, size);
	struct elf_facts facts;
	char message[256];
	ck_assert_msg(elf_read_facts(path, &facts, message, sizeof(message)) == ELF_READER_OK, "%s: %s", row->name, message);
	struct elf_host host = elf_host_of_this_process();
	ck_assert_msg(elf_is_compatible(&facts, &host) == row->compatible, "%s: compatible is %d", row->name,
		      !row->compatible);
	elf_facts_free(&facts);
}
END_TEST

/* Real converted headers from the corpus: a 32-bit copy and a big-endian copy. */
START_TEST(test_other_class_and_byte_order_are_not_compatible)
{
	const char *names[] = { "compact-other-class", "compact-other-order" };
	struct elf_host host = elf_host_of_this_process();
	for (size_t i = 0; i < 2; i++) {
		struct elf_facts facts;
		char message[256];
		ck_assert_msg(elf_read_facts(corpus_file(names[i]), &facts, message, sizeof(message)) == ELF_READER_OK, "%s",
			      message);
		ck_assert_msg(!elf_is_compatible(&facts, &host), "%s is compatible", names[i]);
		ck_assert_ptr_nonnull(facts.soname);
		elf_facts_free(&facts);
	}
	struct elf_facts facts;
	char message[256];
	ck_assert_int_eq(elf_read_facts(corpus_file("compact"), &facts, message, sizeof(message)), ELF_READER_OK);
	ck_assert(elf_is_compatible(&facts, &host));
	elf_facts_free(&facts);
	ck_assert(!elf_is_compatible(NULL, &host));
}
END_TEST

struct expansion_row {
	const char *list, *origin, *lib, *platform;
	const char *expected; /* the elements, each followed by '|' */
};

static const struct expansion_row expansion_rows[] = {
	{ "$ORIGIN/../lib", "/o", NULL, NULL, "/o/../lib|" },
	{ "${ORIGIN}/x", "/o", NULL, NULL, "/o/x|" },
	{ "$ORIGIN", "/o", NULL, NULL, "/o|" },
	{ "/a/$ORIGIN/b", "/o", NULL, NULL, "/a//o/b|" },
	/* A name that runs on is another token, unknown: it stays as written. */
	{ "$ORIGINX/y", "/o", NULL, NULL, "$ORIGINX/y|" },
	{ "$ORIGIN_2", "/o", NULL, NULL, "$ORIGIN_2|" },
	{ "${ORIGIN", "/o", NULL, NULL, "${ORIGIN|" },
	{ "$UNKNOWN/a", "/o", "lib", "p", "$UNKNOWN/a|" },
	{ "$", "/o", NULL, NULL, "$|" },
	{ "a$", "/o", NULL, NULL, "a$|" },
	{ "$$ORIGIN", "/o", NULL, NULL, "$/o|" },
	{ "$ORIGIN$LIB", "/o", "lib64", NULL, "/olib64|" },
	{ "$ORIGIN/", "/o", NULL, NULL, "/o/|" },
	/* A known token without a value drops its element, and only that one. */
	{ "$LIB/a:/b", "/o", NULL, NULL, "/b|" },
	{ "$LIB/a", "/o", "lib64", NULL, "lib64/a|" },
	{ "${LIB}/a", "/o", "x86_64-linux-gnu", NULL, "x86_64-linux-gnu/a|" },
	{ "/p/$PLATFORM:/q/${PLATFORM}", NULL, NULL, "haswell", "/p/haswell|/q/haswell|" },
	{ "/p/$PLATFORM:/q", "/o", "lib", NULL, "/q|" },
	{ "$ORIGIN/a:/b:$ORIGIN/c", NULL, NULL, NULL, "/b|" },
	{ "${ORIGIN}", NULL, NULL, NULL, "" },
	/* An element written empty stays (the current folder). */
	{ "a::b", "/o", NULL, NULL, "a||b|" },
	{ "a:", "/o", NULL, NULL, "a||" },
	{ ":a", "/o", NULL, NULL, "|a|" },
	{ ":", "/o", NULL, NULL, "||" },
	/* A ':' ends a token: it is not part of the element after it. */
	{ "$ORIGIN:$ORIGIN", "/o", NULL, NULL, "/o|/o|" },
	{ "${ORIGIN:}", "/o", NULL, NULL, "${ORIGIN|}|" },
};

START_TEST(test_expansion_follows_glibc)
{
	const struct expansion_row *row = &expansion_rows[_i];
	char *elements[16] = { NULL };
	int count = elf_expand_search_path(row->list, row->origin, row->lib, row->platform, elements, 16);
	ck_assert_int_ge(count, 0);
	ck_assert_int_le(count, 16);
	char *joined = strdup("");
	for (int i = 0; i < count; i++)
		joined = test_format("%s%s|", joined, elements[i]);
	ck_assert_msg(strcmp(joined, row->expected) == 0, "'%s' (origin %s, lib %s, platform %s): '%s', expected '%s'",
		      row->list, row->origin, row->lib, row->platform, joined, row->expected);
	for (int i = 0; i < count; i++)
		free(elements[i]);
}
END_TEST

START_TEST(test_expansion_counts_elements_beyond_capacity)
{
	char *elements[2] = { NULL, NULL };
	ck_assert_int_eq(elf_expand_search_path("/a:$LIB:/b:/c", "/o", NULL, NULL, elements, 2), 3);
	ck_assert_str_eq(elements[0], "/a");
	ck_assert_str_eq(elements[1], "/b");
	free(elements[0]);
	free(elements[1]);
	ck_assert_int_eq(elf_expand_search_path("/a:/b", "/o", NULL, NULL, NULL, 0), 2);
	ck_assert_int_eq(elf_expand_search_path(NULL, "/o", NULL, NULL, NULL, 0), 0);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("elf_reader");
	TCase *tc = tcase_create("elf_reader");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_standin_facts_read_back_exactly, 0, sizeof(standin_rows) / sizeof(standin_rows[0]));
	tcase_add_test(tc, test_facts_do_not_depend_on_section_headers);
	tcase_add_test(tc, test_interpreter_of_this_program_is_read);
	tcase_add_test(tc, test_last_nonempty_dynamic_segment_is_the_one_read);
	tcase_add_test(tc, test_first_interpreter_is_the_one_read);
	tcase_add_test(tc, test_corpus_of_a_standin_gives_errors_or_valid_facts);
	tcase_add_test(tc, test_corpus_of_this_program_gives_errors_or_valid_facts);
	tcase_add_loop_test(tc, test_broken_file_gives_the_error_that_names_it, 0, sizeof(error_rows) / sizeof(error_rows[0]));
	tcase_add_test(tc, test_empty_dynamic_segment_is_skipped_as_the_loader_does);
	tcase_add_test(tc, test_256_needed_read_in_order);
	tcase_add_test(tc, test_runpath_of_60000_bytes_is_read_whole);
	tcase_add_test(tc, test_fifo_is_refused_without_blocking);
	tcase_add_test(tc, test_device_directory_and_missing_path_are_refused);
	tcase_add_test(tc, test_message_stays_on_one_line);
	tcase_add_test(tc, test_facts_read_again_after_free);
	tcase_add_test(tc, test_host_is_what_this_program_is_built_as);
	tcase_add_loop_test(tc, test_compatibility_follows_the_loader, 0,
			    sizeof(compatibility_rows) / sizeof(compatibility_rows[0]));
	tcase_add_test(tc, test_other_class_and_byte_order_are_not_compatible);
	tcase_add_loop_test(tc, test_expansion_follows_glibc, 0, sizeof(expansion_rows) / sizeof(expansion_rows[0]));
	tcase_add_test(tc, test_expansion_counts_elements_beyond_capacity);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
