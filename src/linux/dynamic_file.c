/* The runtime's reader of files about to be loaded: their header, program headers, PT_INTERP and
   dynamic section, read with pread a piece at a time, never mapped or read whole, every offset
   checked against the file's size; a file cut short while it is read (pip rewriting a wheel) is an
   error, not a SIGBUS. It also tells whether the loader could map the file whole, which the
   runtime asks of every copy it would load. tests/test_dynamic.c holds its answers against the
   libelf reader (inspect/elf/) over real libraries and broken files. */
#include "dynamic.h"
#include "loader/elf_newer.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_own_class(const ElfW(Ehdr) *header)
{
	const ElfW(Ehdr) *own = dynamic_own_header();
	return memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 && header->e_ident[EI_CLASS] == own->e_ident[EI_CLASS] &&
	       header->e_ident[EI_DATA] == own->e_ident[EI_DATA];
}

static bool is_loadable_kind(unsigned char osabi, unsigned short machine, unsigned short type)
{
	return (osabi == ELFOSABI_SYSV || osabi == ELFOSABI_GNU) && machine == dynamic_own_header()->e_machine && type == ET_DYN;
}

/* What glibc's open_verify accepts besides class and byte order. */
static bool is_loadable_header(const ElfW(Ehdr) *header)
{
	return is_own_class(header) && header->e_ident[EI_VERSION] == EV_CURRENT &&
	       is_loadable_kind(header->e_ident[EI_OSABI], header->e_machine, header->e_type) &&
	       header->e_phentsize == sizeof(ElfW(Phdr));
}

bool dynamic_file_is_compatible(const struct dynamic_file *file)
{
	/* glibc refuses a shared object without a dynamic section. */
	return is_loadable_kind(file->osabi, file->machine, file->type) && file->has_dynamic;
}

/* Opens a regular file without blocking (a FIFO would block a plain open for reading). */
static int open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		int error = S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
		close(fd);
		return error;
	}
	return fd;
}

bool dynamic_file_is_loadable(const char *path)
{
	ElfW(Ehdr) header;
	struct stat st;
	int fd = open_regular(path, &st);
	if (fd < 0)
		return false;
	bool ok = pread(fd, &header, sizeof(header), 0) == (ssize_t)sizeof(header);
	close(fd);
	return ok && is_loadable_header(&header);
}

/* The file, read a piece at a time: its descriptor and its size at open. */
struct view {
	int fd;
	size_t size;
};

static bool in_file(const struct view *view, ElfW(Off) offset, ElfW(Xword) length)
{
	return offset <= view->size && length <= view->size - offset;
}

/* length bytes at offset, all of them: a file that got shorter since it was opened is an error. */
static bool read_at(const struct view *view, void *out, size_t length, ElfW(Off) offset)
{
	size_t done = 0;
	while (done < length) {
		ssize_t n = pread(view->fd, (char *)out + done, length - done, (off_t)(offset + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

/* The dynamic entries, read a block at a time: entry i, with the block that holds it cached. */
#define DYN_BLOCK 64
struct dyn_cursor {
	const struct view *view;
	ElfW(Off) offset;
	size_t entries;
	size_t first; /* the cached block's first entry, or SIZE_MAX */
	ElfW(Dyn) block[DYN_BLOCK];
};

static bool dyn_at(struct dyn_cursor *cursor, size_t i, ElfW(Dyn) *dyn)
{
	if (cursor->first == SIZE_MAX || i < cursor->first || i >= cursor->first + DYN_BLOCK) {
		size_t first = i - i % DYN_BLOCK;
		size_t n = cursor->entries - first < DYN_BLOCK ? cursor->entries - first : DYN_BLOCK;
		if (!read_at(cursor->view, cursor->block, n * sizeof(ElfW(Dyn)), cursor->offset + first * sizeof(ElfW(Dyn))))
			return false;
		cursor->first = first;
	}
	*dyn = cursor->block[i - cursor->first];
	return true;
}

/* The file offset of a virtual address, through the PT_LOAD segment that holds it; the length
   available from there within both the segment's file image and the file. */
static int file_offset_of(const struct view *view, const ElfW(Phdr) *phdrs, size_t phnum, ElfW(Addr) address, ElfW(Off) *offset,
			  ElfW(Xword) *available)
{
	for (size_t i = 0; i < phnum; i++) {
		ElfW(Phdr) load = phdrs[i];
		if (load.p_type != PT_LOAD || address < load.p_vaddr || address - load.p_vaddr >= load.p_filesz)
			continue;
		*offset = load.p_offset + (address - load.p_vaddr);
		if (*offset < load.p_offset || !in_file(view, *offset, 0))
			return -ENOEXEC;
		ElfW(Xword) in_segment = load.p_filesz - (address - load.p_vaddr);
		ElfW(Xword) in_view = view->size - *offset;
		*available = in_segment < in_view ? in_segment : in_view;
		return 0;
	}
	return -ENOEXEC;
}

/* Copies the NUL-terminated string at offset, which must end within limit bytes, into the facts'
   text: -ENOEXEC when it does not end there, -E2BIG when it ends there but does not fit. */
static int keep_string(const struct view *view, struct dynamic_file *file, ElfW(Off) offset, ElfW(Xword) limit,
		       const char **out)
{
	char *start = file->text + file->text_used;
	size_t room = sizeof(file->text) - file->text_used;
	size_t done = 0;
	char chunk[256];
	while (done < limit) {
		size_t n = limit - done < sizeof(chunk) ? (size_t)(limit - done) : sizeof(chunk);
		if (!read_at(view, chunk, n, offset + done))
			return -EIO;
		const char *nul = memchr(chunk, '\0', n);
		size_t piece = nul ? (size_t)(nul - chunk) + 1 : n;
		if (done + piece <= room)
			memcpy(start + done, chunk, piece);
		done += piece;
		if (nul) {
			if (done > room)
				return -E2BIG;
			*out = start;
			file->text_used += done;
			return 0;
		}
	}
	return -ENOEXEC;
}

/* ---- Whether the loader can map the file whole ----------------------------------------------
   glibc maps each load segment's file image and then reads the dynamic section, the tables it
   names and some program headers in memory. It never compares them with the file's size: a page of
   a segment past the end of the file (a copy cut short by an interrupted install or a full disk)
   is a SIGBUS in the host, an address outside the segments a SIGSEGV. */

/* Program headers whose bytes the loader reads where the load segments put them: the dynamic
   section, the TLS initialization image, the notes and GNU properties, the program headers
   themselves (dl_iterate_phdr hands them out). */
static bool read_in_memory(ElfW(Word) type)
{
	return type == PT_DYNAMIC || type == PT_TLS || type == PT_NOTE || type == PT_GNU_PROPERTY || type == PT_PHDR;
}

static bool segments_whole(const struct view *view, const ElfW(Phdr) *phdrs, size_t phnum)
{
	for (size_t i = 0; i < phnum; i++) {
		const ElfW(Phdr) *phdr = &phdrs[i];
		if (phdr->p_type == PT_LOAD ? !in_file(view, phdr->p_offset, phdr->p_filesz)
					    : read_in_memory(phdr->p_type) && phdr->p_filesz &&
						      !dynamic_segments_hold(0, phdrs, phnum, phdr->p_vaddr, phdr->p_filesz))
			return false;
	}
	return true;
}

/* The tables of the dynamic section the loader reads in memory, each with the tag of its size (0
   where only its contents tell its length: its start is checked). */
static const struct {
	ElfW(Sxword) tag, size_tag;
} loader_tables[] = {
	{ DT_STRTAB, DT_STRSZ },   { DT_SYMTAB, 0 },    { DT_HASH, 0 },   { DT_GNU_HASH, 0 },
	{ DT_RELA, DT_RELASZ },    { DT_JMPREL, DT_PLTRELSZ },            { DT_RELR, DT_RELRSZ },
	{ DT_VERSYM, 0 },          { DT_VERDEF, 0 },    { DT_VERNEED, 0 }, { DT_INIT_ARRAY, DT_INIT_ARRAYSZ },
	{ DT_FINI_ARRAY, DT_FINI_ARRAYSZ },             { DT_INIT, 0 },   { DT_FINI, 0 },
};
#define LOADER_TABLES (sizeof(loader_tables) / sizeof(loader_tables[0]))

struct tables_seen {
	bool present[LOADER_TABLES];
	ElfW(Addr) address[LOADER_TABLES];
	ElfW(Xword) size[LOADER_TABLES];
};

/* As the loader keeps them: a repeated tag's last value. */
static void note_table(struct tables_seen *seen, const ElfW(Dyn) *dyn)
{
	for (size_t t = 0; t < LOADER_TABLES; t++) {
		if (dyn->d_tag == loader_tables[t].tag) {
			seen->present[t] = true;
			seen->address[t] = dyn->d_un.d_ptr;
		} else if (loader_tables[t].size_tag && dyn->d_tag == loader_tables[t].size_tag) {
			seen->size[t] = dyn->d_un.d_val;
		}
	}
}

static bool tables_inside(const struct tables_seen *seen, const ElfW(Phdr) *phdrs, size_t phnum)
{
	for (size_t t = 0; t < LOADER_TABLES; t++)
		if (seen->present[t] && !dynamic_segments_hold(0, phdrs, phnum, seen->address[t], seen->size[t] ? seen->size[t] : 1))
			return false;
	return true;
}

static int read_dynamic(const struct view *view, size_t phnum, const ElfW(Phdr) *dynamic_header, struct dynamic_file *file)
{
	/* Nothing the loader reads lies in the ELF header of a real library; the libelf reader, this
	   reader's oracle, cannot read such files as they are, so both refuse them. */
	if (!in_file(view, dynamic_header->p_offset, dynamic_header->p_filesz) || dynamic_header->p_offset < sizeof(ElfW(Ehdr)))
		return -ENOEXEC;
	size_t entries = dynamic_header->p_filesz / sizeof(ElfW(Dyn));
	if (entries > DYNAMIC_MAX_ENTRIES)
		entries = DYNAMIC_MAX_ENTRIES + 1; /* past any real one: without a DT_NULL before, refused */
	struct dyn_cursor cursor = { view, dynamic_header->p_offset, entries, SIZE_MAX, { { 0 } } };
	ElfW(Addr) strtab = 0;
	ElfW(Xword) strsz = 0;
	bool have_strtab = false;
	ElfW(Xword) soname = 0, rpath = 0, runpath = 0;
	bool have_soname = false, have_rpath = false, have_runpath = false;
	size_t needed_count = 0;
	size_t i = 0;
	ElfW(Dyn) dyn;
	struct tables_seen seen = { .present = { false } };
	/* As the loader reads it: up to DT_NULL, and a repeated tag's last value counts. */
	for (; i < entries; i++) {
		if (!dyn_at(&cursor, i, &dyn))
			return -EIO;
		if (dyn.d_tag == DT_NULL)
			break;
		note_table(&seen, &dyn);
		switch (dyn.d_tag) {
		case DT_STRTAB: strtab = dyn.d_un.d_ptr; have_strtab = true; break;
		case DT_STRSZ: strsz = dyn.d_un.d_val; break;
		case DT_SONAME: soname = dyn.d_un.d_val; have_soname = true; break;
		case DT_RPATH: rpath = dyn.d_un.d_val; have_rpath = true; break;
		case DT_RUNPATH: runpath = dyn.d_un.d_val; have_runpath = true; break;
		case DT_FLAGS_1: file->nodeflib = (dyn.d_un.d_val & DF_1_NODEFLIB) != 0; break;
		case DT_NEEDED: needed_count++; break;
		}
	}
	if (i == entries)
		return i > DYNAMIC_MAX_ENTRIES ? -E2BIG : -ENOEXEC; /* no DT_NULL within the segment */
	file->has_dynamic = true;
	file->whole = file->whole && tables_inside(&seen, file->phdrs, phnum);
	bool have_strings = have_soname || have_rpath || have_runpath || needed_count;
	if (!have_strings)
		return 0;
	if (needed_count > DYNAMIC_MAX_NEEDED)
		return -E2BIG;
	ElfW(Off) offset;
	ElfW(Xword) available;
	int error = have_strtab ? file_offset_of(view, file->phdrs, phnum, strtab, &offset, &available) : -ENOEXEC;
	if (error)
		return error;
	if (strsz > available || offset < sizeof(ElfW(Ehdr)))
		return -ENOEXEC;
#define KEEP(value, out) \
	(error = (value) < strsz ? keep_string(view, file, offset + (value), strsz - (value), (out)) : -ENOEXEC)
	if (have_soname && KEEP(soname, &file->soname))
		return error;
	if (have_rpath && KEEP(rpath, &file->rpath))
		return error;
	if (have_runpath && KEEP(runpath, &file->runpath))
		return error;
	for (i = 0; i < entries; i++) {
		if (!dyn_at(&cursor, i, &dyn))
			return -EIO;
		if (dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_NEEDED && KEEP(dyn.d_un.d_val, &file->needed[file->needed_count++]))
			return error;
	}
#undef KEEP
	return 0;
}

int dynamic_read_file(const char *path, struct dynamic_file *file)
{
	struct stat st;
	memset(file, 0, offsetof(struct dynamic_file, text));
	int fd = open_regular(path, &st);
	if (fd < 0)
		return fd;
	struct view view = { fd, (size_t)st.st_size };
	file->identity = (struct dynamic_file_identity){ (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
							  (long long)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec };
	ElfW(Ehdr) header;
	int error = -ENOEXEC;
	if (view.size < sizeof(header))
		goto out;
	if (!read_at(&view, &header, sizeof(header), 0)) {
		error = -EIO;
		goto out;
	}
	if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
		goto out;
	file->elf_class = header.e_ident[EI_CLASS];
	file->data = header.e_ident[EI_DATA];
	file->osabi = header.e_ident[EI_OSABI];
	if (!is_own_class(&header) || header.e_ident[EI_VERSION] != EV_CURRENT)
		goto out;
	file->machine = header.e_machine;
	file->type = header.e_type;
	size_t phnum = header.e_phnum;
	if (phnum && (header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phoff < sizeof(ElfW(Ehdr)) ||
		      !in_file(&view, header.e_phoff, (ElfW(Xword))phnum * sizeof(ElfW(Phdr)))))
		goto out;
	if (phnum > DYNAMIC_MAX_PHDRS) {
		error = -E2BIG;
		goto out;
	}
	if (!read_at(&view, file->phdrs, phnum * sizeof(ElfW(Phdr)), header.e_phoff)) {
		error = -EIO;
		goto out;
	}
	file->whole = segments_whole(&view, file->phdrs, phnum);
	/* The kernel starts the first PT_INTERP; the loader uses the last PT_DYNAMIC that has contents
	   (debuginfo files carry empty ones). */
	ElfW(Phdr) dynamic = { .p_type = PT_NULL };
	error = 0;
	for (size_t i = 0; i < phnum && !error; i++) {
		ElfW(Phdr) phdr = file->phdrs[i];
		if (phdr.p_type == PT_INTERP && !file->interp) {
			if (!in_file(&view, phdr.p_offset, phdr.p_filesz) || phdr.p_filesz == 0 || phdr.p_offset < sizeof(ElfW(Ehdr)))
				error = -ENOEXEC;
			else
				error = keep_string(&view, file, phdr.p_offset, phdr.p_filesz, &file->interp);
		} else if (phdr.p_type == PT_DYNAMIC && phdr.p_filesz > 0) {
			dynamic = phdr;
		}
	}
	if (!error && dynamic.p_type == PT_DYNAMIC)
		error = read_dynamic(&view, phnum, &dynamic, file);
out:
	close(fd);
	return error;
}

bool dynamic_file_unchanged(const char *path, const struct dynamic_file_identity *identity)
{
	struct stat st;
	return stat(path, &st) == 0 && (unsigned long long)st.st_dev == identity->device && (unsigned long long)st.st_ino == identity->inode &&
	       (long long)st.st_size == identity->size &&
	       (long long)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec == identity->changed_ns;
}
