/* A small, bounded reader of the dynamic sections of loaded objects, in memory (files about to be
   loaded are dynamic_file.c's). It runs inside host processes, where the loader holds its locks, so
   it allocates nothing and trusts no address it has not checked against the object's load segments.
   tests/test_dynamic.c and tests/test_dynamic_tables.c hold its answers. */
#include "dynamic.h"

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

bool dynamic_segments_hold(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, ElfW(Addr) start, size_t length)
{
	for (size_t i = 0; i < phnum; i++) {
		if (phdr[i].p_type != PT_LOAD)
			continue;
		ElfW(Addr) begin = base + phdr[i].p_vaddr;
		if (start >= begin && start - begin <= phdr[i].p_memsz && length <= phdr[i].p_memsz - (start - begin))
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
	if (loaded->strtab && !dynamic_segments_hold(base, phdr, phnum, loaded->strtab, loaded->strsz))
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

const ElfW(Ehdr) *dynamic_own_header(void)
{
	extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
	return &__ehdr_start;
}

/* ---- A loaded object's symbols and relocations --------------------------------------------- */

bool dynamic_inside_load_segment(const struct dynamic_tables *tables, ElfW(Addr) address, size_t length)
{
	return dynamic_segments_hold(tables->base, tables->phdr, tables->phnum, address, length);
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
	tables->machine = dynamic_own_header()->e_machine;
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
	    !dynamic_segments_hold(base, phdr, phnum, strtab, strsz) || !table_fits(tables, symtab, 1, sizeof(ElfW(Sym)), sizeof(ElfW(Addr))))
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
	if (!address || address % sizeof(uint32_t) || !dynamic_segments_hold(base, phdr, phnum, address, 4 * sizeof(uint32_t)) || !header[2])
		return true;
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(address + 4 * sizeof(uint32_t));
	const unsigned bits = 8 * sizeof(ElfW(Addr));
	uint32_t hash = gnu_hash_of(name), words = header[2], shift = header[3];
	const ElfW(Addr) *word = &bloom[(hash / bits) % words];
	if ((ElfW(Addr))word % sizeof(uint32_t) || !dynamic_segments_hold(base, phdr, phnum, (ElfW(Addr))word, sizeof(*word)))
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

void *dynamic_defined_function(const struct dynamic_tables *tables, const char *name)
{
	size_t indexes[DYNAMIC_NAMED_SYMBOLS_MAX];
	size_t named = dynamic_hashed_symbols_named(tables, name, indexes, DYNAMIC_NAMED_SYMBOLS_MAX);
	for (size_t i = 0; i < named; i++) {
		const ElfW(Sym) *symbol = &tables->symbols[indexes[i]];
		if (symbol->st_shndx != SHN_UNDEF && DYNAMIC_SYMBOL_TYPE(symbol->st_info) == STT_FUNC)
			return (void *)(tables->base + symbol->st_value);
	}
	return NULL;
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
