/* The libelf reader. The file is mapped, not read (a 540 MB library costs the pages the reader
   touches), and libelf reads the mapping in place as ELF_C_READ_MMAP does, converting what it hands
   out to this host's byte order; every offset and count taken from the file is checked against the
   file's size first. The dynamic section is found the loader's way, through PT_DYNAMIC and the load
   segments; section headers are never used, so a file whose section headers are stripped or damaged
   reads the same. As with any mapped file, one truncated by another process while it is read can
   raise SIGBUS. */
#define _GNU_SOURCE
#include "elf_reader.h"

#include "dst.h"

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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The longest string copied out of a file. Real DT_RUNPATHs are a few hundred bytes; without a
   bound, 256 DT_NEEDED entries naming one huge unterminated-looking string would copy it 256 times. */
#define ELF_READER_MAX_STRING 65536
/* The most dynamic entries looked at for DT_NULL: far more than any real dynamic section holds,
   and it keeps a lying PT_DYNAMIC of a huge file from being walked (or, unaligned, copied) whole. */
#define ELF_READER_MAX_DYNAMIC_ENTRIES 65536

struct reader {
	const char *path;
	char *message;
	size_t message_size;
	int fd;
	Elf *elf;
	uint64_t file_size;
	GElf_Ehdr header;
	size_t phnum;
};

/* True when [offset, offset + size) reaches into the ELF header. This reader clears the header's
   section-header fields in its private mapping (see below), so such bytes are no longer the file's;
   no real library puts its interpreter, dynamic section or strings there, and the runtime's reader
   refuses the same files. */
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

static enum elf_reader_error read_program_header(struct reader *reader, size_t index, GElf_Phdr *phdr)
{
	if (!gelf_getphdr(reader->elf, (int)index, phdr))
		return fail(reader, ELF_READER_MALFORMED, "program header %zu: %s", index, libelf_message());
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
	size_t counted = 0;
	if (elf_getphdrnum(reader->elf, &counted) != 0 || counted != h->e_phnum)
		return fail(reader, ELF_READER_MALFORMED, "program header count: %s", libelf_message());
	reader->phnum = counted;
	return ELF_READER_OK;
}

/* The file offset of a virtual address, through the first PT_LOAD whose file image holds it, and
   how many bytes follow it in both that image and the file (a segment may claim more than a
   truncated file has; what is there still reads, as it would from the loader's mapping). */
static bool file_offset_of(struct reader *reader, uint64_t address, uint64_t *offset, uint64_t *available)
{
	for (size_t i = 0; i < reader->phnum; i++) {
		GElf_Phdr phdr;
		if (!gelf_getphdr(reader->elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		if (address < phdr.p_vaddr || address - phdr.p_vaddr >= phdr.p_filesz)
			continue;
		uint64_t into = address - phdr.p_vaddr;
		if (phdr.p_offset > reader->file_size || into > reader->file_size - phdr.p_offset)
			return false;
		*offset = phdr.p_offset + into;
		*available = phdr.p_filesz - into;
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
	size_t length = limit < ELF_READER_MAX_STRING + 1 ? (size_t)limit : ELF_READER_MAX_STRING + 1;
	if (length == 0 || !inside_file(reader, offset, length))
		return fail(reader, ELF_READER_MALFORMED, "%s lies outside the file", what);
	Elf_Data *data = elf_getdata_rawchunk(reader->elf, (int64_t)offset, length, ELF_T_BYTE);
	if (!data || !data->d_buf || data->d_size != length)
		return fail(reader, ELF_READER_MALFORMED, "%s: %s", what, libelf_message());
	const char *end = memchr(data->d_buf, '\0', length);
	if (!end) {
		if (length < limit)
			return fail(reader, ELF_READER_UNSUPPORTED, "%s is longer than %d bytes", what, ELF_READER_MAX_STRING);
		return fail(reader, ELF_READER_MALFORMED, "%s is not terminated", what);
	}
	*out = strndup(data->d_buf, (size_t)(end - (const char *)data->d_buf));
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

/* The entries the facts need, as string table offsets; where a tag repeats, the loader keeps the
   last (its l_info[tag]), and so does this. */
struct dynamic_entries {
	bool has_strtab, has_strsz, has_soname, has_rpath, has_runpath;
	uint64_t strtab, strsz, soname, rpath, runpath;
	size_t needed_count;
	uint64_t needed[ELF_READER_MAX_NEEDED];
};

static enum elf_reader_error collect_dynamic_entries(struct reader *reader, const GElf_Phdr *phdr,
						     struct dynamic_entries *entries, struct elf_facts *facts)
{
	size_t entry_size = gelf_fsize(reader->elf, ELF_T_DYN, 1, EV_CURRENT);
	if (entry_size == 0)
		return fail(reader, ELF_READER_MALFORMED, "dynamic entry size: %s", libelf_message());
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
	Elf_Data *data = elf_getdata_rawchunk(reader->elf, (int64_t)phdr->p_offset, (size_t)count * entry_size, ELF_T_DYN);
	if (!data)
		return fail(reader, ELF_READER_MALFORMED, "PT_DYNAMIC: %s", libelf_message());
	for (size_t i = 0; i < count; i++) {
		GElf_Dyn dyn;
		if (!gelf_getdyn(data, (int)i, &dyn))
			return fail(reader, ELF_READER_MALFORMED, "dynamic entry %zu: %s", i, libelf_message());
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
	for (size_t i = 0; i < reader->phnum; i++) {
		GElf_Phdr phdr;
		if ((error = read_program_header(reader, i, &phdr)))
			return error;
		if (phdr.p_type == PT_DYNAMIC && phdr.p_filesz > 0) {
			dynamic = phdr;
			has_dynamic = true;
		} else if (phdr.p_type == PT_INTERP && !has_interp) {
			has_interp = true;
			if ((error = read_interpreter(reader, &phdr, facts)))
				return error;
		}
	}
	return has_dynamic ? read_dynamic(reader, &dynamic, facts) : ELF_READER_OK;
}

/* What libelf is not asked to judge: the file is a regular file, holds an ELF identification of a
   class, encoding and version that exist, and a whole ELF header. */
static enum elf_reader_error check_identification(struct reader *reader, unsigned char *elf_class)
{
	unsigned char ident[EI_NIDENT];
	struct stat st;
	if (fstat(reader->fd, &st) != 0)
		return fail(reader, ELF_READER_IO, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(reader, ELF_READER_IO, "not a regular file");
	reader->file_size = (uint64_t)st.st_size;
	if (reader->file_size < SELFMAG)
		return fail(reader, ELF_READER_NOT_ELF, "too short for an ELF file (%llu bytes)",
			    (unsigned long long)reader->file_size);
	ssize_t n = pread(reader->fd, ident, sizeof(ident), 0);
	if (n < 0)
		return fail(reader, ELF_READER_IO, "%s", strerror(errno));
	if ((size_t)n < SELFMAG || memcmp(ident, ELFMAG, SELFMAG) != 0)
		return fail(reader, ELF_READER_NOT_ELF, "not an ELF file");
	if ((size_t)n < EI_NIDENT)
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
	*elf_class = ident[EI_CLASS];
	return ELF_READER_OK;
}

/* libelf is handed a private copy-on-write mapping of the file whose ELF header names no section
   headers: this reader never uses them, and libelf would otherwise count them when it opens the
   file, allocate about 200 bytes for each one claimed (extended numbering lets a damaged section 0
   claim one per 64 bytes of the file: gigabytes for a large library), and refuse the whole file
   for some damage there. Clearing the fields touches one page; the file itself is never written. */
static void *map_without_section_headers(struct reader *reader, unsigned char elf_class)
{
	void *image = mmap(NULL, (size_t)reader->file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, reader->fd, 0);
	if (image == MAP_FAILED)
		return NULL;
	char *header = image;
	if (elf_class == ELFCLASS32) {
		memset(header + offsetof(Elf32_Ehdr, e_shoff), 0, sizeof(Elf32_Off));
		memset(header + offsetof(Elf32_Ehdr, e_shnum), 0, sizeof(Elf32_Half));
		memset(header + offsetof(Elf32_Ehdr, e_shstrndx), 0, sizeof(Elf32_Half));
	} else {
		memset(header + offsetof(Elf64_Ehdr, e_shoff), 0, sizeof(Elf64_Off));
		memset(header + offsetof(Elf64_Ehdr, e_shnum), 0, sizeof(Elf64_Half));
		memset(header + offsetof(Elf64_Ehdr, e_shstrndx), 0, sizeof(Elf64_Half));
	}
	return image;
}

enum elf_reader_error elf_read_facts(const char *path, struct elf_facts *facts, char *message, size_t size)
{
	struct reader reader = { .path = path, .message = message, .message_size = size, .fd = -1 };
	enum elf_reader_error error;
	unsigned char elf_class = 0;
	void *image = NULL;
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
	if ((error = check_identification(&reader, &elf_class)))
		goto out;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		error = fail(&reader, ELF_READER_UNSUPPORTED, "libelf: %s", libelf_message());
		goto out;
	}
	image = map_without_section_headers(&reader, elf_class);
	if (!image) {
		error = fail(&reader, ELF_READER_IO, "mmap: %s", strerror(errno));
		goto out;
	}
	/* elf_memory reads the image as ELF_C_READ_MMAP does a file: in place, converting on demand. */
	reader.elf = elf_memory(image, (size_t)reader.file_size);
	if (!reader.elf || elf_kind(reader.elf) != ELF_K_ELF) {
		error = fail(&reader, ELF_READER_MALFORMED, "libelf: %s", reader.elf ? "not an ELF object" : libelf_message());
		goto out;
	}
	if (!gelf_getehdr(reader.elf, &reader.header)) {
		error = fail(&reader, ELF_READER_MALFORMED, "ELF header: %s", libelf_message());
		goto out;
	}
	facts->elf_class = reader.header.e_ident[EI_CLASS];
	facts->data = reader.header.e_ident[EI_DATA];
	facts->osabi = reader.header.e_ident[EI_OSABI];
	facts->machine = reader.header.e_machine;
	facts->type = reader.header.e_type;
	error = check_program_headers(&reader);
	if (error == ELF_READER_OK)
		error = read_segments(&reader, facts);
out:
	if (reader.elf)
		elf_end(reader.elf);
	if (image)
		munmap(image, (size_t)reader.file_size);
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
