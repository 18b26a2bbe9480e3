/* A small, bounded reader of dynamic sections, of loaded objects (in memory) and of files about to
   be loaded (read with pread, a piece at a time). It runs inside host processes, the in-memory part
   where the loader holds its locks, so it allocates nothing and trusts no offset it has not checked;
   it never maps a file, so a candidate truncated while it is read (pip rewriting a wheel) is an
   error, not a SIGBUS. tests/test_dynamic.c
   holds its answers against the libelf reader (inspect/elf/) over real libraries and broken files. */
#include "dynamic.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* More entries than any real dynamic section holds: a bound for a missing DT_NULL. */
#define DYNAMIC_MAX_ENTRIES 4096

static bool inside_load_segment(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, ElfW(Addr) start, size_t length)
{
	for (size_t i = 0; i < phnum; i++) {
		if (phdr[i].p_type != PT_LOAD)
			continue;
		ElfW(Addr) begin = base + phdr[i].p_vaddr;
		ElfW(Addr) end = begin + phdr[i].p_memsz;
		if (start >= begin && start <= end && length <= end - start)
			return true;
	}
	return false;
}

/* The dynamic section of an object in memory, a bound on its entries, and whether the loader added
   the load base to its address entries (dynamic_strtab_relocated). */
static const ElfW(Dyn) *loaded_dynamic(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, size_t *entries, bool *relocated)
{
	const ElfW(Dyn) *dynamic = NULL;
	bool writable = false;
	for (size_t i = 0; phdr && i < phnum; i++)
		if (phdr[i].p_type == PT_DYNAMIC) {
			dynamic = (const ElfW(Dyn) *)(base + phdr[i].p_vaddr);
			*entries = phdr[i].p_memsz / sizeof(ElfW(Dyn));
			writable = (phdr[i].p_flags & PF_W) != 0;
		}
	if (dynamic && *entries > DYNAMIC_MAX_ENTRIES)
		*entries = DYNAMIC_MAX_ENTRIES;
	*relocated = dynamic_strtab_relocated(base, writable);
	return dynamic;
}

/* An address entry of a loaded object's dynamic section, as an address. */
static ElfW(Addr) loaded_address(ElfW(Addr) base, bool relocated, ElfW(Addr) address)
{
	return address && !relocated ? address + base : address;
}

/* A loaded object's dynamic array and its string table, as the loader left them. */
struct loaded_strings {
	const ElfW(Dyn) *dynamic;
	size_t entries;
	ElfW(Addr) strtab; /* an address inside a load segment, or 0 */
	size_t strsz;
};

static bool locate_strings(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, struct loaded_strings *loaded)
{
	bool relocated;
	memset(loaded, 0, sizeof(*loaded));
	if (!(loaded->dynamic = loaded_dynamic(base, phdr, phnum, &loaded->entries, &relocated)))
		return false;
	for (size_t i = 0; i < loaded->entries && loaded->dynamic[i].d_tag != DT_NULL; i++) {
		if (loaded->dynamic[i].d_tag == DT_STRTAB)
			loaded->strtab = loaded->dynamic[i].d_un.d_ptr;
		else if (loaded->dynamic[i].d_tag == DT_STRSZ)
			loaded->strsz = loaded->dynamic[i].d_un.d_val;
	}
	loaded->strtab = loaded_address(base, relocated, loaded->strtab);
	if (loaded->strtab && !inside_load_segment(base, phdr, phnum, loaded->strtab, loaded->strsz))
		loaded->strtab = 0;
	return true;
}

/* The string at offset in the table, when it lies whole inside it. */
static const char *loaded_string(const struct loaded_strings *loaded, size_t offset)
{
	if (!loaded->strtab || offset >= loaded->strsz || !memchr((const char *)loaded->strtab + offset, '\0', loaded->strsz - offset))
		return NULL;
	return (const char *)loaded->strtab + offset;
}

bool dynamic_read_loaded(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, struct dynamic_facts *facts)
{
	struct loaded_strings loaded;
	memset(facts, 0, sizeof(*facts));
	if (!locate_strings(base, phdr, phnum, &loaded))
		return false;
	for (size_t i = 0; i < loaded.entries && loaded.dynamic[i].d_tag != DT_NULL; i++) {
		switch (loaded.dynamic[i].d_tag) {
		case DT_SONAME: facts->soname = loaded_string(&loaded, loaded.dynamic[i].d_un.d_val); break;
		case DT_RPATH: facts->has_rpath = true; break;
		case DT_RUNPATH: facts->has_runpath = true; break;
		case DT_FLAGS_1: facts->nodeflib = (loaded.dynamic[i].d_un.d_val & DF_1_NODEFLIB) != 0; break;
		}
	}
	return true;
}

bool dynamic_loaded_needs(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, const char *name)
{
	struct loaded_strings loaded;
	if (!locate_strings(base, phdr, phnum, &loaded))
		return false;
	for (size_t i = 0; i < loaded.entries && loaded.dynamic[i].d_tag != DT_NULL; i++) {
		const char *needed;
		if (loaded.dynamic[i].d_tag == DT_NEEDED && (needed = loaded_string(&loaded, loaded.dynamic[i].d_un.d_val)) &&
		    strcmp(needed, name) == 0)
			return true;
	}
	return false;
}

bool dynamic_strtab_relocated(ElfW(Addr) base, bool dynamic_writable)
{
	/* glibc's dl_relocate_ld (BZ #28340, 2.35): the loader adds the load base to DT_STRTAB in the
	   dynamic section itself, unless the object is at its link address, its PT_DYNAMIC is read-only
	   (the vDSO), or the architecture keeps every dynamic section read-only (MIPS, RISC-V). */
#if defined(__mips__) || defined(__riscv)
	(void)base, (void)dynamic_writable;
	return false;
#else
	return base != 0 && dynamic_writable;
#endif
}

bool dynamic_has_nodeflib(const ElfW(Dyn) *dynamic)
{
	for (size_t i = 0; dynamic && i < DYNAMIC_MAX_ENTRIES && dynamic[i].d_tag != DT_NULL; i++)
		if (dynamic[i].d_tag == DT_FLAGS_1)
			return (dynamic[i].d_un.d_val & DF_1_NODEFLIB) != 0;
	return false;
}

bool dynamic_has_runpath(const ElfW(Dyn) *dynamic)
{
	for (size_t i = 0; dynamic && i < DYNAMIC_MAX_ENTRIES && dynamic[i].d_tag != DT_NULL; i++)
		if (dynamic[i].d_tag == DT_RUNPATH)
			return true;
	return false;
}

/* The header of the running process's own objects: what a candidate must agree with. */
static const ElfW(Ehdr) *own_header(void)
{
	extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
	return &__ehdr_start;
}

static bool is_own_class(const ElfW(Ehdr) *header)
{
	const ElfW(Ehdr) *own = own_header();
	return memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 && header->e_ident[EI_CLASS] == own->e_ident[EI_CLASS] &&
	       header->e_ident[EI_DATA] == own->e_ident[EI_DATA];
}

static bool is_loadable_kind(unsigned char osabi, unsigned short machine, unsigned short type)
{
	return (osabi == ELFOSABI_SYSV || osabi == ELFOSABI_GNU) && machine == own_header()->e_machine && type == ET_DYN;
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
	/* As the loader reads it: up to DT_NULL, and a repeated tag's last value counts. */
	for (; i < entries; i++) {
		if (!dyn_at(&cursor, i, &dyn))
			return -EIO;
		if (dyn.d_tag == DT_NULL)
			break;
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

/* ---- A loaded object's symbols and relocations --------------------------------------------- */

bool dynamic_inside_load_segment(const struct dynamic_tables *tables, ElfW(Addr) address, size_t length)
{
	return inside_load_segment(tables->base, tables->phdr, tables->phnum, address, length);
}

/* The bytes from address to the end of the load segment that holds it; 0 outside them all. */
static size_t loaded_bytes_from(const struct dynamic_tables *tables, ElfW(Addr) address)
{
	for (size_t i = 0; i < tables->phnum; i++) {
		const ElfW(Phdr) *load = &tables->phdr[i];
		ElfW(Addr) begin = tables->base + load->p_vaddr, end = begin + load->p_memsz;
		if (load->p_type == PT_LOAD && address >= begin && address < end)
			return end - address;
	}
	return 0;
}

/* A table of count entries of size bytes at address, inside one segment and aligned for them. */
static bool table_fits(const struct dynamic_tables *tables, ElfW(Addr) address, size_t count, size_t size, size_t align)
{
	return address % align == 0 && count <= loaded_bytes_from(tables, address) / size;
}

/* DT_GNU_HASH: the header (buckets, first hashed symbol, bloom words, bloom shift), the bloom
   filter, the buckets, then one chain word for each hashed symbol, the last of a chain odd. The
   symbol count is where the chain of the highest bucket ends. */
static bool read_gnu_hash(struct dynamic_tables *tables, ElfW(Addr) address)
{
	const uint32_t *header = (const uint32_t *)address;
	if (!table_fits(tables, address, 4, sizeof(uint32_t), sizeof(uint32_t)))
		return false;
	uint32_t buckets = header[0], first = header[1], bloom_words = header[2];
	ElfW(Addr) bloom = address + 4 * sizeof(uint32_t);
	if (buckets == 0 || !table_fits(tables, bloom, bloom_words, sizeof(ElfW(Addr)), sizeof(uint32_t)))
		return false;
	ElfW(Addr) bucket_table = bloom + (ElfW(Addr))bloom_words * sizeof(ElfW(Addr));
	if (!table_fits(tables, bucket_table, buckets, sizeof(uint32_t), sizeof(uint32_t)))
		return false;
	tables->gnu_buckets = (const uint32_t *)bucket_table;
	tables->gnu_chains = tables->gnu_buckets + buckets;
	tables->gnu_bucket_count = buckets;
	size_t chain_words = loaded_bytes_from(tables, (ElfW(Addr))tables->gnu_chains) / sizeof(uint32_t);
	uint32_t last = 0;
	for (uint32_t i = 0; i < buckets; i++)
		if (tables->gnu_buckets[i] > last)
			last = tables->gnu_buckets[i];
	size_t count = first;
	if (last >= first) {
		size_t i = last;
		while (i - first < chain_words && !(tables->gnu_chains[i - first] & 1))
			i++;
		if (i - first >= chain_words)
			return false; /* a chain that runs off its segment */
		count = i + 1;
	}
	tables->first_hashed = first;
	tables->symbol_count = count;
	return true;
}

/* DT_HASH: bucket and chain counts (the chain count is the symbol count), buckets, chains. */
static bool read_sysv_hash(struct dynamic_tables *tables, ElfW(Addr) address)
{
	const ElfW(Word) *header = (const ElfW(Word) *)address;
	if (!table_fits(tables, address, 2, sizeof(ElfW(Word)), sizeof(ElfW(Word))) || header[0] == 0 ||
	    !table_fits(tables, address, 2 + (size_t)header[0] + header[1], sizeof(ElfW(Word)), sizeof(ElfW(Word))))
		return false;
	tables->sysv_bucket_count = header[0];
	tables->sysv_buckets = header + 2;
	tables->sysv_chains = tables->sysv_buckets + header[0];
	tables->symbol_count = header[1];
	tables->first_hashed = 0;
	return true;
}

/* A relocation table of size bytes: whole entries, inside a segment. */
static bool read_relocations(const struct dynamic_tables *tables, ElfW(Addr) address, size_t size, const ElfW(Rela) **table,
			     size_t *count)
{
	*table = NULL;
	*count = 0;
	if (!address || size == 0)
		return true;
	if (size % sizeof(ElfW(Rela)) || !table_fits(tables, address, size / sizeof(ElfW(Rela)), sizeof(ElfW(Rela)), sizeof(ElfW(Addr))))
		return false;
	*table = (const ElfW(Rela) *)address;
	*count = size / sizeof(ElfW(Rela));
	return true;
}

bool dynamic_read_tables(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, struct dynamic_tables *tables)
{
	memset(tables, 0, sizeof(*tables));
	tables->base = base;
	tables->phdr = phdr;
	tables->phnum = phnum;
	tables->machine = own_header()->e_machine;
	size_t entries = 0;
	bool relocated;
	const ElfW(Dyn) *dynamic = loaded_dynamic(base, phdr, phnum, &entries, &relocated);
	if (!dynamic)
		return false;
	ElfW(Addr) symtab = 0, strtab = 0, gnu_hash = 0, sysv_hash = 0, rela = 0, jmprel = 0;
	size_t strsz = 0, syment = sizeof(ElfW(Sym)), relasz = 0, relaent = sizeof(ElfW(Rela)), relacount = 0, pltrelsz = 0;
	ElfW(Sxword) pltrel = DT_RELA;
	for (size_t i = 0; i < entries && dynamic[i].d_tag != DT_NULL; i++) {
		ElfW(Xword) value = dynamic[i].d_un.d_val;
		switch (dynamic[i].d_tag) {
		case DT_SYMTAB: symtab = value; break;
		case DT_STRTAB: strtab = value; break;
		case DT_STRSZ: strsz = value; break;
		case DT_SYMENT: syment = value; break;
		case DT_GNU_HASH: gnu_hash = value; break;
		case DT_HASH: sysv_hash = value; break;
		case DT_RELA: rela = value; break;
		case DT_RELASZ: relasz = value; break;
		case DT_RELAENT: relaent = value; break;
		case DT_RELACOUNT: relacount = value; break;
		case DT_JMPREL: jmprel = value; break;
		case DT_PLTRELSZ: pltrelsz = value; break;
		case DT_PLTREL: pltrel = (ElfW(Sxword))value; break;
		}
	}
	symtab = loaded_address(base, relocated, symtab);
	strtab = loaded_address(base, relocated, strtab);
	if (!symtab || !strtab || syment != sizeof(ElfW(Sym)) || relaent != sizeof(ElfW(Rela)) ||
	    !inside_load_segment(base, phdr, phnum, strtab, strsz) || !table_fits(tables, symtab, 1, sizeof(ElfW(Sym)), sizeof(ElfW(Addr))))
		return false;
	tables->symbols = (const ElfW(Sym) *)symtab;
	tables->strings = (const char *)strtab;
	tables->strings_size = strsz;
	/* The loader prefers the GNU hash; without either table it finds none of the symbols, and
	   only the segment bounds how many entries a relocation may name. */
	if (gnu_hash ? !read_gnu_hash(tables, loaded_address(base, relocated, gnu_hash))
		     : sysv_hash && !read_sysv_hash(tables, loaded_address(base, relocated, sysv_hash)))
		return false;
	size_t in_segment = loaded_bytes_from(tables, symtab) / sizeof(ElfW(Sym));
	if (!gnu_hash && !sysv_hash)
		tables->symbol_count = tables->first_hashed = in_segment;
	if (tables->symbol_count > in_segment || tables->first_hashed > tables->symbol_count)
		return false;
	if (!read_relocations(tables, loaded_address(base, relocated, rela), relasz, &tables->relocations, &tables->relocation_count) ||
	    (pltrel == DT_RELA && !read_relocations(tables, loaded_address(base, relocated, jmprel), pltrelsz, &tables->plt_relocations,
						     &tables->plt_relocation_count)))
		return false;
	tables->relative_count = relacount < tables->relocation_count ? relacount : tables->relocation_count;
	return true;
}

/* The name of symbol index, when it lies inside the string table. */
static bool symbol_is_named(const struct dynamic_tables *tables, size_t index, const char *name, size_t length)
{
	ElfW(Word) offset = tables->symbols[index].st_name;
	return offset < tables->strings_size && length < tables->strings_size - offset && tables->strings[offset] == name[0] &&
	       memcmp(tables->strings + offset, name, length + 1) == 0;
}

static unsigned long sysv_hash_of(const char *name)
{
	unsigned long hash = 0;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
		hash = (hash << 4) + *s;
		unsigned long high = hash & 0xf0000000;
		hash ^= high >> 24;
		hash &= ~high;
	}
	return hash;
}

static uint32_t gnu_hash_of(const char *name)
{
	uint32_t hash = 5381;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		hash = hash * 33 + *s;
	return hash;
}

bool dynamic_may_define(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, const char *name)
{
	size_t entries = 0;
	bool relocated;
	const ElfW(Dyn) *dynamic = loaded_dynamic(base, phdr, phnum, &entries, &relocated);
	ElfW(Addr) address = 0;
	for (size_t i = 0; dynamic && i < entries && dynamic[i].d_tag != DT_NULL; i++)
		if (dynamic[i].d_tag == DT_GNU_HASH)
			address = loaded_address(base, relocated, dynamic[i].d_un.d_ptr);
	const uint32_t *header = (const uint32_t *)address;
	if (!address || address % sizeof(uint32_t) || !inside_load_segment(base, phdr, phnum, address, 4 * sizeof(uint32_t)) || !header[2])
		return true;
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(address + 4 * sizeof(uint32_t));
	const unsigned bits = 8 * sizeof(ElfW(Addr));
	uint32_t hash = gnu_hash_of(name), words = header[2], shift = header[3];
	const ElfW(Addr) *word = &bloom[(hash / bits) % words];
	if ((ElfW(Addr))word % sizeof(uint32_t) || !inside_load_segment(base, phdr, phnum, (ElfW(Addr))word, sizeof(*word)))
		return true;
	ElfW(Addr) mask = ((ElfW(Addr))1 << (hash % bits)) | ((ElfW(Addr))1 << ((hash >> (shift % 32)) % bits));
	return (*word & mask) == mask;
}

size_t dynamic_hashed_symbols_named(const struct dynamic_tables *tables, const char *name, size_t *indexes, size_t capacity)
{
	size_t found = 0, length = strlen(name);
	if (tables->gnu_buckets) {
		uint32_t hash = gnu_hash_of(name);
		size_t first = tables->first_hashed;
		for (size_t i = tables->gnu_buckets[hash % tables->gnu_bucket_count]; i >= first && i < tables->symbol_count && found < capacity; i++) {
			uint32_t chain = tables->gnu_chains[i - first];
			if ((chain | 1) == (hash | 1) && symbol_is_named(tables, i, name, length))
				indexes[found++] = i;
			if (chain & 1)
				break;
		}
	} else if (tables->sysv_buckets) {
		/* At most one step a symbol: a chain that loops ends there. */
		size_t i = tables->sysv_buckets[sysv_hash_of(name) % tables->sysv_bucket_count];
		for (size_t steps = 0; i != STN_UNDEF && i < tables->symbol_count && steps < tables->symbol_count && found < capacity; steps++) {
			if (symbol_is_named(tables, i, name, length))
				indexes[found++] = i;
			i = tables->sysv_chains[i];
		}
	}
	return found;
}

size_t dynamic_symbols_named(const struct dynamic_tables *tables, const char *name, size_t *indexes, size_t capacity)
{
	size_t found = 0, length = strlen(name);
	/* Symbol 0 is the undefined one; imports sit below the hashed symbols. */
	for (size_t i = 1; i < tables->first_hashed && found < capacity; i++)
		if (symbol_is_named(tables, i, name, length))
			indexes[found++] = i;
	return found + dynamic_hashed_symbols_named(tables, name, indexes + found, capacity - found);
}

bool dynamic_relocation_fills_address_slot(unsigned short machine, unsigned int type)
{
	switch (machine) {
	case EM_X86_64: return type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT || type == R_X86_64_64;
	case EM_AARCH64: return type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_GLOB_DAT || type == R_AARCH64_ABS64;
	default: return false;
	}
}
