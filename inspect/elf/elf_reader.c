/* The libelf reader. Only the pieces the facts need are read, with pread (a 540 MB library costs a
   few kilobytes), and libelf's translation functions convert each one from the file's byte order
   to this host's; every offset and count taken from the file is checked against the file's size
   first. The file is neither mapped nor handed to libelf whole: a mapping costs more in page
   faults and unmapping than the reads themselves (the inspector reads dozens of files a call), and
   libelf opening a whole file would count its section headers, allocating about 200 bytes for each
   one claimed (extended numbering lets a damaged section 0 claim one per 64 bytes of the file). The
   dynamic section is found the loader's way, through PT_DYNAMIC and the load segments; section
   headers are never used, so a file whose section headers are stripped or damaged reads the same,
   and one truncated by another process while it is read is an error, not a signal. */
#define _GNU_SOURCE
#include "elf_reader.h"

#include "loader/dst.h"
#include "loader/elf_newer.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The longest string copied out of a file. Real DT_RUNPATHs are a few hundred bytes; without a
   bound, 256 DT_NEEDED entries naming one huge unterminated-looking string would copy it 256 times. */
#define ELF_READER_MAX_STRING 65536
/* The most dynamic entries looked at for DT_NULL: far more than any real dynamic section holds,
   and it keeps a lying PT_DYNAMIC of a huge file from being walked (or, unaligned, copied) whole. */
#define ELF_READER_MAX_DYNAMIC_ENTRIES 65536

/* One read covers the ELF header and program headers of a real library, and most dynamic sections
   and runs of DT_NEEDED strings. */
#define ELF_READER_BLOCK 4096

struct reader {
	const char *path;
	char *message;
	size_t message_size;
	int fd;
	uint64_t file_size;
	GElf_Ehdr header;
	size_t phnum;
	GElf_Phdr *phdrs;
	/* The last block read, and where a read larger than a block goes. */
	uint64_t block_offset;
	size_t block_size;
	unsigned char block[ELF_READER_BLOCK];
	unsigned char *large;
};

/* True when offset lies inside the ELF header. No real library puts its interpreter, dynamic
   section, strings or program headers there, and the runtime's reader refuses such files: this
   reader is its oracle (tests/test_dynamic.c, fuzz/run.sh dynamic), so it refuses the same ones. */
static bool overlaps_header(const struct reader *reader, uint64_t offset)
{
	return offset < (reader->header.e_ident[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr));
}

static enum elf_reader_error fail(struct reader *reader, enum elf_reader_error error, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes "path: reason" as one line: a path or a file's bytes may hold newlines, a log line may not. */
static enum elf_reader_error fail(struct reader *reader, enum elf_reader_error error, const char *format, ...)
{
	if (!reader->message || reader->message_size == 0)
		return error;
	int n = snprintf(reader->message, reader->message_size, "%s: ", reader->path ? reader->path : "(null)");
	if (n >= 0 && (size_t)n < reader->message_size) {
		va_list args;
		va_start(args, format);
		vsnprintf(reader->message + n, reader->message_size - (size_t)n, format, args);
		va_end(args);
	}
	for (char *c = reader->message; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return error;
}

static const char *libelf_message(void)
{
	const char *message = elf_errmsg(-1);
	return message ? message : "unknown libelf error";
}

/* True when [offset, offset + size) lies inside the file. */
static bool inside_file(const struct reader *reader, uint64_t offset, uint64_t size)
{
	return offset <= reader->file_size && size <= reader->file_size - offset;
}

/* The size bytes at offset: a pointer into the block (read again only when they are not already
   in it) or, for more than a block, into a buffer of their own; valid until the next read. */
static enum elf_reader_error read_at(struct reader *reader, uint64_t offset, size_t size, const unsigned char **bytes)
{
	if (!inside_file(reader, offset, size))
		return fail(reader, ELF_READER_MALFORMED, "%zu bytes at 0x%llx reach past the end of the file", size,
			    (unsigned long long)offset);
	if (offset >= reader->block_offset && offset - reader->block_offset <= reader->block_size &&
	    size <= reader->block_size - (offset - reader->block_offset)) {
		*bytes = reader->block + (offset - reader->block_offset);
		return ELF_READER_OK;
	}
	unsigned char *buffer = reader->block;
	/* From the start of the block's page where it still holds all size bytes: the next piece
	   (the strings after a DT_NEEDED, the header before the program headers) is often near. */
	uint64_t start = offset - offset % ELF_READER_BLOCK;
	if (offset + size > start + ELF_READER_BLOCK)
		start = offset;
	size_t length = ELF_READER_BLOCK;
	if (size > ELF_READER_BLOCK) {
		free(reader->large);
		if (!(reader->large = malloc(size)))
			return fail(reader, ELF_READER_IO, "out of memory");
		buffer = reader->large, length = size;
	} else {
		reader->block_size = 0;
	}
	if (length > reader->file_size - start)
		length = (size_t)(reader->file_size - start);
	size_t done = 0;
	while (done < length) {
		ssize_t n = pread(reader->fd, buffer + done, length - done, (off_t)(start + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(reader, ELF_READER_IO, "%s", strerror(errno));
		if (n == 0)
			return fail(reader, ELF_READER_IO, "the file shrank while it was read");
		done += (size_t)n;
	}
	if (buffer == reader->block)
		reader->block_offset = start, reader->block_size = length;
	*bytes = buffer + (offset - start);
	return ELF_READER_OK;
}

/* Converts size bytes of structures of type from the file's class and byte order to this host's, in
   place: native holds the file's bytes, copied out of the block to be aligned. */
static enum elf_reader_error translate(struct reader *reader, Elf_Type type, void *native, size_t size, const char *what)
{
	Elf_Data data = { .d_buf = native, .d_type = type, .d_size = size, .d_version = EV_CURRENT };
	unsigned int encoding = reader->header.e_ident[EI_DATA];
	Elf_Data *done = reader->header.e_ident[EI_CLASS] == ELFCLASS32 ? elf32_xlatetom(&data, &data, encoding)
									  : elf64_xlatetom(&data, &data, encoding);
	if (!done)
		return fail(reader, ELF_READER_MALFORMED, "%s: %s", what, libelf_message());
	return ELF_READER_OK;
}

static enum elf_reader_error read_header(struct reader *reader)
{
	const unsigned char *bytes;
	enum elf_reader_error error;
	if (reader->header.e_ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr header;
		if ((error = read_at(reader, 0, sizeof(header), &bytes)))
			return error;
		memcpy(&header, bytes, sizeof(header));
		if ((error = translate(reader, ELF_T_EHDR, &header, sizeof(header), "ELF header")))
			return error;
		GElf_Ehdr *h = &reader->header;
		memcpy(h->e_ident, header.e_ident, EI_NIDENT);
		h->e_type = header.e_type, h->e_machine = header.e_machine, h->e_version = header.e_version;
		h->e_entry = header.e_entry, h->e_phoff = header.e_phoff, h->e_shoff = header.e_shoff;
		h->e_flags = header.e_flags, h->e_ehsize = header.e_ehsize, h->e_phentsize = header.e_phentsize;
		h->e_phnum = header.e_phnum, h->e_shentsize = header.e_shentsize, h->e_shnum = header.e_shnum;
		h->e_shstrndx = header.e_shstrndx;
		return ELF_READER_OK;
	}
	if ((error = read_at(reader, 0, sizeof(Elf64_Ehdr), &bytes)))
		return error;
	memcpy(&reader->header, bytes, sizeof(Elf64_Ehdr));
	return translate(reader, ELF_T_EHDR, &reader->header, sizeof(Elf64_Ehdr), "ELF header");
}

/* The program headers, checked to lie in the file, converted once: the string table's address is
   looked up in them again. */
static enum elf_reader_error read_program_headers(struct reader *reader, size_t entry_size)
{
	const GElf_Ehdr *h = &reader->header;
	const unsigned char *bytes;
	enum elf_reader_error error;
	if ((error = read_at(reader, h->e_phoff, h->e_phnum * entry_size, &bytes)))
		return error;
	if (!(reader->phdrs = calloc(h->e_phnum, sizeof(*reader->phdrs))))
		return fail(reader, ELF_READER_IO, "out of memory");
	for (size_t i = 0; i < h->e_phnum; i++) {
		GElf_Phdr *phdr = &reader->phdrs[i];
		if (h->e_ident[EI_CLASS] == ELFCLASS32) {
			Elf32_Phdr p;
			memcpy(&p, bytes + i * entry_size, sizeof(p));
			if ((error = translate(reader, ELF_T_PHDR, &p, sizeof(p), "program header")))
				return error;
			phdr->p_type = p.p_type, phdr->p_flags = p.p_flags, phdr->p_offset = p.p_offset;
			phdr->p_vaddr = p.p_vaddr, phdr->p_paddr = p.p_paddr, phdr->p_filesz = p.p_filesz;
			phdr->p_memsz = p.p_memsz, phdr->p_align = p.p_align;
		} else {
			memcpy(phdr, bytes + i * entry_size, sizeof(*phdr));
			if ((error = translate(reader, ELF_T_PHDR, phdr, sizeof(*phdr), "program header")))
				return error;
		}
	}
	reader->phnum = h->e_phnum;
	return ELF_READER_OK;
}

/* The loader takes e_phnum literally and needs entries of exactly its own size. */
static enum elf_reader_error check_program_headers(struct reader *reader)
{
	const GElf_Ehdr *h = &reader->header;
	size_t entry_size = h->e_ident[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
	if (h->e_phnum == 0)
		return ELF_READER_OK;
	if (h->e_phnum == PN_XNUM)
		return fail(reader, ELF_READER_UNSUPPORTED, "extended program header numbering (PN_XNUM)");
	if (h->e_phoff == 0)
		return fail(reader, ELF_READER_MALFORMED, "e_phnum is %u but e_phoff is 0", h->e_phnum);
	if (overlaps_header(reader, h->e_phoff))
		return fail(reader, ELF_READER_MALFORMED, "the program headers at 0x%llx overlap the ELF header",
			    (unsigned long long)h->e_phoff);
	if (h->e_phentsize != entry_size)
		return fail(reader, ELF_READER_MALFORMED, "e_phentsize is %u, not %zu", h->e_phentsize, entry_size);
	if (!inside_file(reader, h->e_phoff, (uint64_t)h->e_phnum * entry_size))
		return fail(reader, ELF_READER_MALFORMED, "program headers (%u at 0x%llx) reach past the end of the file",
			    h->e_phnum, (unsigned long long)h->e_phoff);
	return read_program_headers(reader, entry_size);
}

/* The file offset of a virtual address, through the first PT_LOAD whose file image holds it, and
   how many bytes follow it in both that image and the file (a segment may claim more than a
   truncated file has; what is there still reads, as it would from the loader's mapping). */
static bool file_offset_of(struct reader *reader, uint64_t address, uint64_t *offset, uint64_t *available)
{
	for (size_t i = 0; i < reader->phnum; i++) {
		const GElf_Phdr *phdr = &reader->phdrs[i];
		if (phdr->p_type != PT_LOAD || address < phdr->p_vaddr || address - phdr->p_vaddr >= phdr->p_filesz)
			continue;
		uint64_t into = address - phdr->p_vaddr;
		if (phdr->p_offset > reader->file_size || into > reader->file_size - phdr->p_offset)
			return false;
		*offset = phdr->p_offset + into;
		*available = phdr->p_filesz - into;
		if (*available > reader->file_size - *offset)
			*available = reader->file_size - *offset;
		return true;
	}
	return false;
}

/* A NUL-terminated string of at most limit bytes (terminator included) at offset, copied. */
static enum elf_reader_error copy_string(struct reader *reader, uint64_t offset, uint64_t limit, const char *what,
					 char **out)
{
	/* Real strings are short: look for the terminator in a first few bytes before reading all
	   the bytes the string may take. */
	const size_t first = 256;
	size_t length = limit < ELF_READER_MAX_STRING + 1 ? (size_t)limit : ELF_READER_MAX_STRING + 1;
	const unsigned char *bytes;
	const char *end = NULL;
	enum elf_reader_error error;
	if (length == 0 || !inside_file(reader, offset, length))
		return fail(reader, ELF_READER_MALFORMED, "%s lies outside the file", what);
	if (length > first) {
		if ((error = read_at(reader, offset, first, &bytes)))
			return error;
		end = memchr(bytes, '\0', first);
	}
	if (!end) {
		if ((error = read_at(reader, offset, length, &bytes)))
			return error;
		end = memchr(bytes, '\0', length);
	}
	if (!end) {
		if (length < limit)
			return fail(reader, ELF_READER_UNSUPPORTED, "%s is longer than %d bytes", what, ELF_READER_MAX_STRING);
		return fail(reader, ELF_READER_MALFORMED, "%s is not terminated", what);
	}
	*out = strndup((const char *)bytes, (size_t)(end - (const char *)bytes));
	if (!*out)
		return fail(reader, ELF_READER_IO, "%s: out of memory", what);
	return ELF_READER_OK;
}

static enum elf_reader_error read_interpreter(struct reader *reader, const GElf_Phdr *phdr, struct elf_facts *facts)
{
	if (overlaps_header(reader, phdr->p_offset))
		return fail(reader, ELF_READER_MALFORMED, "PT_INTERP at 0x%llx overlaps the ELF header", (unsigned long long)phdr->p_offset);
	if (!inside_file(reader, phdr->p_offset, phdr->p_filesz))
		return fail(reader, ELF_READER_MALFORMED, "PT_INTERP (0x%llx bytes at 0x%llx) reaches past the end of the file",
			    (unsigned long long)phdr->p_filesz, (unsigned long long)phdr->p_offset);
	return copy_string(reader, phdr->p_offset, phdr->p_filesz, "PT_INTERP", &facts->interp);
}

/* ---- whether the loader can map it whole ----
   glibc maps each load segment's bytes of the file and reads some program headers and the tables
   the dynamic section names in memory, never asking the file's size: a page past the end is a
   SIGBUS, an address outside the segments a SIGSEGV. */

/* [address, address + size) in the memory of some PT_LOAD (size 0: the byte at address). */
static bool in_load_memory(const struct reader *reader, uint64_t address, uint64_t size)
{
	for (size_t i = 0; i < reader->phnum; i++) {
		const GElf_Phdr *phdr = &reader->phdrs[i];
		if (phdr->p_type == PT_LOAD && address >= phdr->p_vaddr && address - phdr->p_vaddr < phdr->p_memsz &&
		    (size ? size : 1) <= phdr->p_memsz - (address - phdr->p_vaddr))
			return true;
	}
	return false;
}

static bool segments_whole(const struct reader *reader)
{
	for (size_t i = 0; i < reader->phnum; i++) {
		const GElf_Phdr *phdr = &reader->phdrs[i];
		switch (phdr->p_type) {
		case PT_LOAD:
			if (!inside_file(reader, phdr->p_offset, phdr->p_filesz))
				return false;
			break;
		case PT_DYNAMIC:
		case PT_TLS:
		case PT_NOTE:
		case PT_GNU_PROPERTY:
		case PT_PHDR:
			if (phdr->p_filesz && !in_load_memory(reader, phdr->p_vaddr, phdr->p_filesz))
				return false;
			break;
		}
	}
	return true;
}

/* The string table as the loader sees it: DT_STRTAB's address in a load segment's file image,
   DT_STRSZ bytes long, all of it inside that image and the file. */
struct string_table {
	uint64_t offset, size;
};

static enum elf_reader_error find_string_table(struct reader *reader, bool has_strtab, uint64_t address,
					       bool has_strsz, uint64_t size, struct string_table *table)
{
	uint64_t offset = 0, available = 0;
	if (!has_strtab)
		return fail(reader, ELF_READER_MALFORMED, "the dynamic section names strings but has no DT_STRTAB");
	if (!has_strsz)
		return fail(reader, ELF_READER_MALFORMED, "the dynamic section has no DT_STRSZ");
	if (!file_offset_of(reader, address, &offset, &available))
		return fail(reader, ELF_READER_MALFORMED, "DT_STRTAB 0x%llx is in no load segment's file image in the file",
			    (unsigned long long)address);
	if (size > available)
		return fail(reader, ELF_READER_MALFORMED, "DT_STRSZ %llu reaches past its load segment or the file",
			    (unsigned long long)size);
	if (overlaps_header(reader, offset))
		return fail(reader, ELF_READER_MALFORMED, "DT_STRTAB at file offset 0x%llx overlaps the ELF header",
			    (unsigned long long)offset);
	table->offset = offset;
	table->size = size;
	return ELF_READER_OK;
}

static enum elf_reader_error read_dynamic_string(struct reader *reader, const struct string_table *table,
						 uint64_t index, const char *what, char **out)
{
	if (index >= table->size)
		return fail(reader, ELF_READER_MALFORMED, "%s offset %llu is outside DT_STRSZ %llu", what,
			    (unsigned long long)index, (unsigned long long)table->size);
	return copy_string(reader, table->offset + index, table->size - index, what, out);
}

/* The tables the loader reads through the dynamic section: the tag of each, and the tag of its
   size (DT_NULL where only its contents tell). */
static const int64_t table_tags[][2] = {
	{ DT_STRTAB, DT_STRSZ }, { DT_SYMTAB, DT_NULL },	  { DT_HASH, DT_NULL },	      { DT_GNU_HASH, DT_NULL },
	{ DT_RELA, DT_RELASZ },	 { DT_JMPREL, DT_PLTRELSZ },	  { DT_RELR, DT_RELRSZ },      { DT_VERSYM, DT_NULL },
	{ DT_VERDEF, DT_NULL },	 { DT_VERNEED, DT_NULL },	  { DT_INIT_ARRAY, DT_INIT_ARRAYSZ },
	{ DT_FINI_ARRAY, DT_FINI_ARRAYSZ },			  { DT_INIT, DT_NULL },	      { DT_FINI, DT_NULL },
};
#define TABLE_COUNT (sizeof(table_tags) / sizeof(table_tags[0]))

/* The entries the facts need, as string table offsets; where a tag repeats, the loader keeps the
   last (its l_info[tag]), and so does this. */
struct dynamic_entries {
	bool has_strtab, has_strsz, has_soname, has_rpath, has_runpath;
	uint64_t strtab, strsz, soname, rpath, runpath;
	size_t needed_count;
	uint64_t needed[ELF_READER_MAX_NEEDED];
	/* Every table the loader reads in memory: its start, and its length where a tag gives it. */
	bool has_table[TABLE_COUNT];
	uint64_t table[TABLE_COUNT], table_size[TABLE_COUNT];
};

/* Where the dynamic section's address and size tags go in dynamic_entries' tables. */
static void note_table(struct dynamic_entries *entries, const GElf_Dyn *dyn)
{
	for (size_t t = 0; t < TABLE_COUNT; t++)
		if (dyn->d_tag == table_tags[t][0]) {
			entries->has_table[t] = true;
			entries->table[t] = dyn->d_un.d_ptr;
		} else if (table_tags[t][1] != DT_NULL && dyn->d_tag == table_tags[t][1]) {
			entries->table_size[t] = dyn->d_un.d_val;
		}
}

static bool tables_whole(const struct reader *reader, const struct dynamic_entries *entries)
{
	for (size_t t = 0; t < TABLE_COUNT; t++)
		if (entries->has_table[t] && !in_load_memory(reader, entries->table[t], entries->table_size[t]))
			return false;
	return true;
}

static enum elf_reader_error collect_dynamic_entries(struct reader *reader, const GElf_Phdr *phdr,
						     struct dynamic_entries *entries, struct elf_facts *facts)
{
	bool is_32 = reader->header.e_ident[EI_CLASS] == ELFCLASS32;
	size_t entry_size = is_32 ? sizeof(Elf32_Dyn) : sizeof(Elf64_Dyn);
	const unsigned char *bytes;
	enum elf_reader_error error;
	if (overlaps_header(reader, phdr->p_offset))
		return fail(reader, ELF_READER_MALFORMED, "PT_DYNAMIC at 0x%llx overlaps the ELF header", (unsigned long long)phdr->p_offset);
	if (!inside_file(reader, phdr->p_offset, phdr->p_filesz))
		return fail(reader, ELF_READER_MALFORMED, "PT_DYNAMIC (0x%llx bytes at 0x%llx) reaches past the end of the file",
			    (unsigned long long)phdr->p_filesz, (unsigned long long)phdr->p_offset);
	uint64_t count = phdr->p_filesz / entry_size;
	if (count > ELF_READER_MAX_DYNAMIC_ENTRIES)
		count = ELF_READER_MAX_DYNAMIC_ENTRIES;
	if (count == 0)
		return fail(reader, ELF_READER_MALFORMED, "PT_DYNAMIC holds no entry");
	if ((error = read_at(reader, phdr->p_offset, (size_t)count * entry_size, &bytes)))
		return error;
	for (size_t i = 0; i < count; i++) {
		GElf_Dyn dyn;
		if (is_32) {
			Elf32_Dyn d;
			memcpy(&d, bytes + i * entry_size, sizeof(d));
			if ((error = translate(reader, ELF_T_DYN, &d, sizeof(d), "dynamic entry")))
				return error;
			dyn.d_tag = d.d_tag; /* signed, as gelf_getdyn widens it */
			dyn.d_un.d_val = d.d_un.d_val;
		} else {
			memcpy(&dyn, bytes + i * entry_size, sizeof(dyn));
			if ((error = translate(reader, ELF_T_DYN, &dyn, sizeof(dyn), "dynamic entry")))
				return error;
		}
		if (dyn.d_tag != DT_NULL)
			note_table(entries, &dyn);
		switch (dyn.d_tag) {
		case DT_NULL:
			return ELF_READER_OK;
		case DT_STRTAB: entries->has_strtab = true, entries->strtab = dyn.d_un.d_ptr; break;
		case DT_STRSZ: entries->has_strsz = true, entries->strsz = dyn.d_un.d_val; break;
		case DT_SONAME: entries->has_soname = true, entries->soname = dyn.d_un.d_val; break;
		case DT_RPATH: entries->has_rpath = true, entries->rpath = dyn.d_un.d_val; break;
		case DT_RUNPATH: entries->has_runpath = true, entries->runpath = dyn.d_un.d_val; break;
		case DT_FLAGS_1: facts->nodeflib = (dyn.d_un.d_val & DF_1_NODEFLIB) != 0; break;
		case DT_NEEDED:
			if (entries->needed_count == ELF_READER_MAX_NEEDED)
				return fail(reader, ELF_READER_UNSUPPORTED, "more than %d DT_NEEDED entries", ELF_READER_MAX_NEEDED);
			entries->needed[entries->needed_count++] = dyn.d_un.d_val;
			break;
		}
	}
	return fail(reader, ELF_READER_MALFORMED, "no DT_NULL in the first %llu entries of PT_DYNAMIC",
		    (unsigned long long)count);
}

static enum elf_reader_error read_dynamic(struct reader *reader, const GElf_Phdr *phdr, struct elf_facts *facts)
{
	struct dynamic_entries *entries = calloc(1, sizeof(*entries));
	struct string_table table = { 0, 0 };
	enum elf_reader_error error;
	if (!entries)
		return fail(reader, ELF_READER_IO, "out of memory");
	error = collect_dynamic_entries(reader, phdr, entries, facts);
	if (error != ELF_READER_OK)
		goto out;
	facts->whole = facts->whole && tables_whole(reader, entries);
	if (entries->has_soname || entries->has_rpath || entries->has_runpath || entries->needed_count > 0) {
		error = find_string_table(reader, entries->has_strtab, entries->strtab, entries->has_strsz,
					  entries->strsz, &table);
		if (error != ELF_READER_OK)
			goto out;
	}
	if (entries->has_soname && (error = read_dynamic_string(reader, &table, entries->soname, "DT_SONAME", &facts->soname)))
		goto out;
	if (entries->has_rpath && (error = read_dynamic_string(reader, &table, entries->rpath, "DT_RPATH", &facts->rpath)))
		goto out;
	if (entries->has_runpath &&
	    (error = read_dynamic_string(reader, &table, entries->runpath, "DT_RUNPATH", &facts->runpath)))
		goto out;
	for (size_t i = 0; i < entries->needed_count; i++) {
		if ((error = read_dynamic_string(reader, &table, entries->needed[i], "DT_NEEDED", &facts->needed[i])))
			goto out;
		facts->needed_count = i + 1;
	}
	facts->has_dynamic = true;
out:
	free(entries);
	return error;
}

static enum elf_reader_error read_segments(struct reader *reader, struct elf_facts *facts)
{
	/* The loader's l_ld is the last PT_DYNAMIC it meets that is not empty (objcopy
	   --only-keep-debug leaves an empty one); its interpreter the first PT_INTERP. */
	GElf_Phdr dynamic = { 0 };
	bool has_dynamic = false, has_interp = false;
	enum elf_reader_error error;
	facts->whole = segments_whole(reader);
	for (size_t i = 0; i < reader->phnum; i++) {
		const GElf_Phdr *phdr = &reader->phdrs[i];
		if (phdr->p_type == PT_DYNAMIC && phdr->p_filesz > 0) {
			dynamic = *phdr;
			has_dynamic = true;
		} else if (phdr->p_type == PT_INTERP && !has_interp) {
			has_interp = true;
			if ((error = read_interpreter(reader, phdr, facts)))
				return error;
		}
	}
	return has_dynamic ? read_dynamic(reader, &dynamic, facts) : ELF_READER_OK;
}

/* The file is a regular file that holds an ELF identification of a class, encoding and version
   that exist, and a whole ELF header. */
static enum elf_reader_error check_identification(struct reader *reader)
{
	const unsigned char *ident;
	struct stat st;
	enum elf_reader_error error;
	if (fstat(reader->fd, &st) != 0)
		return fail(reader, ELF_READER_IO, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(reader, ELF_READER_IO, "not a regular file");
	reader->file_size = (uint64_t)st.st_size;
	if (reader->file_size < SELFMAG)
		return fail(reader, ELF_READER_NOT_ELF, "too short for an ELF file (%llu bytes)",
			    (unsigned long long)reader->file_size);
	size_t n = reader->file_size < EI_NIDENT ? (size_t)reader->file_size : EI_NIDENT;
	if ((error = read_at(reader, 0, n, &ident)))
		return error;
	if (memcmp(ident, ELFMAG, SELFMAG) != 0)
		return fail(reader, ELF_READER_NOT_ELF, "not an ELF file");
	if (n < EI_NIDENT)
		return fail(reader, ELF_READER_MALFORMED, "truncated ELF identification");
	if (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64)
		return fail(reader, ELF_READER_MALFORMED, "unknown ELF class %u", ident[EI_CLASS]);
	if (ident[EI_DATA] != ELFDATA2LSB && ident[EI_DATA] != ELFDATA2MSB)
		return fail(reader, ELF_READER_MALFORMED, "unknown ELF data encoding %u", ident[EI_DATA]);
	/* The loader refuses any other version, and libelf does not take the file for ELF. */
	if (ident[EI_VERSION] != EV_CURRENT)
		return fail(reader, ELF_READER_MALFORMED, "ELF identification version %u, not %u", ident[EI_VERSION], EV_CURRENT);
	size_t header_size = ident[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
	if (reader->file_size < header_size)
		return fail(reader, ELF_READER_MALFORMED, "truncated ELF header (%llu bytes)",
			    (unsigned long long)reader->file_size);
	memcpy(reader->header.e_ident, ident, EI_NIDENT);
	return ELF_READER_OK;
}

enum elf_reader_error elf_read_facts(const char *path, struct elf_facts *facts, char *message, size_t size)
{
	struct reader reader = { .path = path, .message = message, .message_size = size, .fd = -1 };
	enum elf_reader_error error;
	if (message && size)
		message[0] = '\0';
	if (!facts)
		return fail(&reader, ELF_READER_IO, "no facts to fill");
	memset(facts, 0, sizeof(*facts));
	if (!path)
		return fail(&reader, ELF_READER_IO, "no path");
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused once open. */
	reader.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (reader.fd < 0)
		return fail(&reader, ELF_READER_IO, "%s", strerror(errno));
	if ((error = check_identification(&reader)))
		goto out;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		error = fail(&reader, ELF_READER_UNSUPPORTED, "libelf: %s", libelf_message());
		goto out;
	}
	if ((error = read_header(&reader)))
		goto out;
	facts->elf_class = reader.header.e_ident[EI_CLASS];
	facts->data = reader.header.e_ident[EI_DATA];
	facts->osabi = reader.header.e_ident[EI_OSABI];
	facts->machine = reader.header.e_machine;
	facts->type = reader.header.e_type;
	error = check_program_headers(&reader);
	if (error == ELF_READER_OK)
		error = read_segments(&reader, facts);
out:
	free(reader.phdrs);
	free(reader.large);
	close(reader.fd);
	if (error != ELF_READER_OK)
		elf_facts_free(facts);
	return error;
}

void elf_facts_free(struct elf_facts *facts)
{
	if (!facts)
		return;
	free(facts->interp);
	free(facts->soname);
	free(facts->rpath);
	free(facts->runpath);
	for (size_t i = 0; i < facts->needed_count && i < ELF_READER_MAX_NEEDED; i++)
		free(facts->needed[i]);
	memset(facts, 0, sizeof(*facts));
}

struct elf_host elf_host_of_this_process(void)
{
	/* The header of the object this code is linked into: built for this process, so it has the
	   process's class, encoding and machine. */
	extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
	struct elf_host host = {
		.elf_class = __ehdr_start.e_ident[EI_CLASS],
		.data = __ehdr_start.e_ident[EI_DATA],
		.osabi = __ehdr_start.e_ident[EI_OSABI],
		.machine = __ehdr_start.e_machine,
	};
	return host;
}

bool elf_is_compatible(const struct elf_facts *facts, const struct elf_host *host)
{
	if (!facts || !host)
		return false;
	/* glibc's elf_machine_matches_host and VALID_ELF_OSABI (SYSV, or GNU for IFUNC and unique
	   symbols); dlopen refuses ET_EXEC, and ET_DYN without a dynamic section ("object file has no
	   dynamic section"). */
	return facts->elf_class == host->elf_class && facts->data == host->data && facts->machine == host->machine &&
	       (facts->osabi == ELFOSABI_SYSV || facts->osabi == ELFOSABI_GNU) && facts->type == ET_DYN &&
	       facts->has_dynamic;
}

/* The runtime's expansion, so the inspector shows the search path the runtime uses. */
int elf_expand_search_path(const char *list, const char *origin, const char *lib, const char *platform,
			   char **elements, size_t capacity)
{
	return dst_expand_search_path(list, origin, lib, platform, elements, capacity);
}
