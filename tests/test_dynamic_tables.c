/* The runtime's reader of a loaded object's symbols and relocations (what attaching patches):
   the relocation kinds that fill an address slot, for x86-64 and aarch64; symbols found through
   the GNU and the SysV hash and among the imports, held against the loader's own answers in this
   process; tables that lie outside the object's segments refused. */
#define _GNU_SOURCE
#include "common.h"
#include "linux/dynamic.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

struct classified {
	unsigned short machine;
	unsigned int type;
	bool fills;
};

static const struct classified relocation_kinds[] = {
	{ EM_X86_64, R_X86_64_JUMP_SLOT, true },
	{ EM_X86_64, R_X86_64_GLOB_DAT, true },
	{ EM_X86_64, R_X86_64_64, true },
	{ EM_X86_64, R_X86_64_RELATIVE, false },
	{ EM_X86_64, R_X86_64_IRELATIVE, false },
	{ EM_X86_64, R_X86_64_PC32, false },
	{ EM_X86_64, R_X86_64_32, false },
	{ EM_X86_64, R_X86_64_COPY, false },
	{ EM_X86_64, R_X86_64_TPOFF64, false },
	{ EM_X86_64, R_X86_64_DTPMOD64, false },
	{ EM_X86_64, R_AARCH64_JUMP_SLOT, false },
	{ EM_AARCH64, R_AARCH64_JUMP_SLOT, true },
	{ EM_AARCH64, R_AARCH64_GLOB_DAT, true },
	{ EM_AARCH64, R_AARCH64_ABS64, true },
	{ EM_AARCH64, R_AARCH64_RELATIVE, false },
	{ EM_AARCH64, R_AARCH64_IRELATIVE, false },
	{ EM_AARCH64, R_AARCH64_ABS32, false },
	{ EM_AARCH64, R_AARCH64_PREL64, false },
	{ EM_AARCH64, R_AARCH64_COPY, false },
	{ EM_AARCH64, R_AARCH64_TLSDESC, false },
	{ EM_AARCH64, R_X86_64_JUMP_SLOT, false },
	{ EM_386, R_386_JMP_SLOT, false },
	{ EM_RISCV, R_RISCV_JUMP_SLOT, false },
};

START_TEST(test_relocation_kinds_that_fill_an_address_slot)
{
	const struct classified *row = &relocation_kinds[_i];
	ck_assert_msg(dynamic_relocation_fills_address_slot(row->machine, row->type) == row->fills, "machine %u type %u: expected %d",
		      row->machine, row->type, row->fills);
}
END_TEST

struct found {
	ElfW(Addr) address;
	struct dynamic_tables tables;
	bool read, seen;
	ElfW(Addr) base; /* its dl_iterate_phdr view */
	const ElfW(Phdr) *phdr;
	size_t phnum;
};

/* The tables of the loaded object that holds address. */
static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found *found = arg;
	(void)size;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *load = &info->dlpi_phdr[i];
		if (load->p_type == PT_LOAD && found->address - (info->dlpi_addr + load->p_vaddr) < load->p_memsz) {
			found->seen = true;
			found->base = info->dlpi_addr;
			found->phdr = info->dlpi_phdr;
			found->phnum = info->dlpi_phnum;
			found->read = dynamic_read_tables(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &found->tables);
			return 1;
		}
	}
	return 0;
}

static struct found tables_of_object_holding(const void *address)
{
	struct found found = { .address = (ElfW(Addr))address };
	dl_iterate_phdr(find_object, &found);
	ck_assert_msg(found.seen && found.read, "the object holding %p: seen %d, read %d", address, found.seen, found.read);
	return found;
}

START_TEST(test_libc_definitions_of_dlopen_are_found_through_its_hash)
{
	/* The object that defines dlinfo defines dlopen: libc.so.6, or libdl.so.2 before glibc 2.34.
	   Found by dlinfo, which no sanitizer intercepts (AddressSanitizer's runtime defines a dlopen
	   of its own, which dlsym would find first). */
	struct found libc = tables_of_object_holding(dlsym(RTLD_DEFAULT, "dlinfo"));
	size_t indexes[8];
	size_t n = dynamic_hashed_symbols_named(&libc.tables, "dlopen", indexes, 8);
	ck_assert_uint_ge(n, 1);
	const ElfW(Sym) *first = &libc.tables.symbols[indexes[0]];
	for (size_t i = 0; i < n; i++) {
		const ElfW(Sym) *symbol = &libc.tables.symbols[indexes[i]];
		ck_assert_uint_ne(symbol->st_shndx, SHN_UNDEF);
		ck_assert_uint_eq(symbol->st_value, first->st_value);
	}
	/* Without a sanitizer the definition is the one the process binds to. */
	const char *sanitize = getenv("NVI_SANITIZE");
	if (!sanitize || !strstr(sanitize, "address"))
		ck_assert_ptr_eq((void *)(libc.tables.base + first->st_value), dlsym(RTLD_DEFAULT, "dlopen"));
	/* glibc 2.34 and later: the default version and the one from before, the same function. */
	void *old = dlvsym(RTLD_DEFAULT, "dlopen", "GLIBC_2.2.5");
	if (old && dlvsym(RTLD_DEFAULT, "dlopen", "GLIBC_2.34"))
		ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(dynamic_hashed_symbols_named(&libc.tables, "dlopen_no_such_symbol", indexes, 8), 0);
}
END_TEST

START_TEST(test_bloom_filter_never_says_no_for_a_name_defined)
{
	/* Every symbol libc defines passes its bloom filter; most names it does not define do not. */
	struct found libc = tables_of_object_holding(dlsym(RTLD_DEFAULT, "dlopen"));
	size_t defined = 0;
	for (size_t i = libc.tables.first_hashed; i < libc.tables.symbol_count; i++) {
		const char *name = libc.tables.strings + libc.tables.symbols[i].st_name;
		if (libc.tables.symbols[i].st_shndx == SHN_UNDEF)
			continue;
		defined++;
		ck_assert_msg(dynamic_may_define(libc.base, libc.phdr, libc.phnum, name), "%s", name);
	}
	ck_assert_uint_ge(defined, 100);
	size_t rejected = 0;
	for (int i = 0; i < 100; i++)
		rejected += !dynamic_may_define(libc.base, libc.phdr, libc.phnum, test_format("nvi_no_such_function_%d", i));
	ck_assert_msg(rejected >= 50, "only %zu of 100 undefined names rejected", rejected);
}
END_TEST

/* A library built now (tests/fixtures/host.c imports dlopen) with the linker's hash style, loaded
   RTLD_NOW: its import is found, and the relocation that names it fills a slot holding the
   loader's answer for dlopen. */
static void check_import_of_a_library_built_with(const char *hash_style)
{
	char *library = test_format("%s/libhost.so.77", test_tmpdir());
	test_build_library("host.c", library, "libhost.so.77", test_format("-Wl,--hash-style=%s", hash_style));
	void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(handle != NULL, "%s", dlerror());
	struct found host = tables_of_object_holding(dlsym(handle, "host_load_plugin"));
	ck_assert_msg(strcmp(hash_style, "gnu") == 0 ? host.tables.gnu_buckets != NULL : host.tables.sysv_buckets != NULL, "%s", hash_style);
	size_t indexes[8];
	size_t n = dynamic_symbols_named(&host.tables, "dlopen", indexes, 8);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(host.tables.symbols[indexes[0]].st_shndx, SHN_UNDEF);
	size_t slots = 0;
	const ElfW(Rela) *tables[] = { host.tables.relocations, host.tables.plt_relocations };
	size_t counts[] = { host.tables.relocation_count, host.tables.plt_relocation_count };
	for (size_t t = 0; t < 2; t++)
		for (size_t i = 0; i < counts[t]; i++) {
			const ElfW(Rela) *relocation = &tables[t][i];
			if (ELF64_R_SYM(relocation->r_info) != indexes[0])
				continue;
			ck_assert(dynamic_relocation_fills_address_slot(host.tables.machine, ELF64_R_TYPE(relocation->r_info)));
			ElfW(Addr) slot = host.tables.base + relocation->r_offset;
			ck_assert(dynamic_inside_load_segment(&host.tables, slot, sizeof(slot)));
			ck_assert_ptr_eq(*(void **)slot, dlsym(RTLD_DEFAULT, "dlopen"));
			slots++;
		}
	ck_assert_uint_ge(slots, 1);
	dlclose(handle);
}

START_TEST(test_import_and_its_slot_are_found_under_the_gnu_hash) { check_import_of_a_library_built_with("gnu"); }
END_TEST

START_TEST(test_import_and_its_slot_are_found_under_the_sysv_hash) { check_import_of_a_library_built_with("sysv"); }
END_TEST

/* An object laid out by hand in one buffer: a load segment over all of it, a dynamic section, a
   symbol table (the undefined symbol, dlopen, dlmopen), its strings, a GNU hash and one RELA
   relocation. Its addresses are offsets from the buffer, as the loader leaves them in a read-only
   dynamic section. */
enum { AT_DYNAMIC = 0x100, AT_SYMBOLS = 0x200, AT_STRINGS = 0x300, AT_HASH = 0x400, AT_RELA = 0x500, OBJECT_SIZE = 0x1000 };

struct made {
	_Alignas(64) unsigned char bytes[OBJECT_SIZE];
	ElfW(Phdr) phdr[2];
	ElfW(Dyn) *dynamic;
};

static uint32_t gnu_hash_of(const char *name)
{
	uint32_t hash = 5381;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		hash = hash * 33 + *s;
	return hash;
}

static void make_object(struct made *made)
{
	memset(made, 0, sizeof(*made));
	made->phdr[0] = (ElfW(Phdr)){ .p_type = PT_LOAD, .p_vaddr = 0, .p_memsz = OBJECT_SIZE, .p_flags = PF_R };
	made->phdr[1] = (ElfW(Phdr)){ .p_type = PT_DYNAMIC, .p_vaddr = AT_DYNAMIC, .p_memsz = 12 * sizeof(ElfW(Dyn)) };
	memcpy(made->bytes + AT_STRINGS, "\0dlopen\0dlmopen", 16);
	ElfW(Sym) *symbols = (ElfW(Sym) *)(made->bytes + AT_SYMBOLS);
	symbols[1] = (ElfW(Sym)){ .st_name = 1, .st_shndx = 1, .st_value = 0x800 };
	symbols[2] = (ElfW(Sym)){ .st_name = 8, .st_shndx = 1, .st_value = 0x900 };
	uint32_t *hash = (uint32_t *)(made->bytes + AT_HASH);
	hash[0] = 1; /* buckets */
	hash[1] = 1; /* the first hashed symbol */
	hash[2] = 1; /* bloom words */
	hash[3] = 0;
	uint32_t *buckets = hash + 4 + sizeof(ElfW(Addr)) / sizeof(uint32_t);
	buckets[0] = 1;
	buckets[1] = gnu_hash_of("dlopen") & ~1u;
	buckets[2] = gnu_hash_of("dlmopen") | 1u;
	ElfW(Rela) *rela = (ElfW(Rela) *)(made->bytes + AT_RELA);
	rela[0] = (ElfW(Rela)){ .r_offset = 0xa00, .r_info = ELF64_R_INFO(1, R_X86_64_GLOB_DAT) };
	made->dynamic = (ElfW(Dyn) *)(made->bytes + AT_DYNAMIC);
	const ElfW(Dyn) entries[] = {
		{ DT_SYMTAB, { AT_SYMBOLS } }, { DT_STRTAB, { AT_STRINGS } }, { DT_STRSZ, { 16 } },
		{ DT_SYMENT, { sizeof(ElfW(Sym)) } }, { DT_GNU_HASH, { AT_HASH } }, { DT_RELA, { AT_RELA } },
		{ DT_RELASZ, { sizeof(ElfW(Rela)) } }, { DT_RELAENT, { sizeof(ElfW(Rela)) } }, { DT_NULL, { 0 } },
	};
	memcpy(made->dynamic, entries, sizeof(entries));
}

static void set_entry(struct made *made, ElfW(Sxword) tag, ElfW(Xword) value)
{
	for (ElfW(Dyn) *d = made->dynamic; d->d_tag != DT_NULL; d++)
		if (d->d_tag == tag) {
			d->d_un.d_val = value;
			return;
		}
	ck_abort_msg("no entry %ld", (long)tag);
}

static bool read_made(struct made *made, struct dynamic_tables *tables)
{
	return dynamic_read_tables((ElfW(Addr))made->bytes, made->phdr, 2, tables);
}

START_TEST(test_object_laid_out_by_hand_is_read)
{
	static struct made made;
	struct dynamic_tables tables;
	make_object(&made);
	ck_assert(read_made(&made, &tables));
	ck_assert_uint_eq(tables.symbol_count, 3);
	ck_assert_uint_eq(tables.first_hashed, 1);
	ck_assert_uint_eq(tables.relocation_count, 1);
	size_t indexes[4];
	ck_assert_uint_eq(dynamic_hashed_symbols_named(&tables, "dlmopen", indexes, 4), 1);
	ck_assert_uint_eq(indexes[0], 2);
	ck_assert_uint_eq(dynamic_symbols_named(&tables, "dlopen", indexes, 4), 1);
	ck_assert_uint_eq(indexes[0], 1);
	ck_assert_uint_eq(dynamic_symbols_named(&tables, "dlope", indexes, 4), 0);
}
END_TEST

/* One way of lying about the tables, each refused. */
struct lie {
	const char *what;
	ElfW(Sxword) tag; /* the entry changed, or DT_NULL for a change made by hand */
	ElfW(Xword) value;
	int by_hand;
};

static const struct lie lies[] = {
	{ "symbol table past the segment", DT_SYMTAB, OBJECT_SIZE + 0x100, 0 },
	{ "strings past the segment", DT_STRSZ, OBJECT_SIZE, 0 },
	{ "symbol entries of another size", DT_SYMENT, 16, 0 },
	{ "relocation entries of another size", DT_RELAENT, 16, 0 },
	{ "relocations past the segment", DT_RELASZ, OBJECT_SIZE * sizeof(ElfW(Rela)), 0 },
	{ "relocations of part of an entry", DT_RELASZ, sizeof(ElfW(Rela)) + 1, 0 },
	{ "hash table past the segment", DT_GNU_HASH, OBJECT_SIZE - 8, 0 },
	{ "no buckets", DT_NULL, 0, 1 },
	{ "bloom filter past the segment", DT_NULL, 0, 2 },
	{ "a chain that never ends", DT_NULL, 0, 3 },
	{ "no symbol table", DT_SYMTAB, 0, 0 },
};

START_TEST(test_tables_that_lie_are_refused)
{
	const struct lie *lie = &lies[_i];
	static struct made made;
	struct dynamic_tables tables;
	make_object(&made);
	uint32_t *hash = (uint32_t *)(made.bytes + AT_HASH);
	if (lie->tag != DT_NULL)
		set_entry(&made, lie->tag, lie->value);
	else if (lie->by_hand == 1)
		hash[0] = 0;
	else if (lie->by_hand == 2)
		hash[2] = 0x10000000;
	else if (lie->by_hand == 3)
		for (uint32_t *chain = hash + 4 + sizeof(ElfW(Addr)) / sizeof(uint32_t) + 1; (unsigned char *)chain < made.bytes + OBJECT_SIZE; chain++)
			*chain = 2; /* even: the chain goes on */
	ck_assert_msg(!read_made(&made, &tables), "%s: read", lie->what);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("dynamic_tables");
	TCase *tc = tcase_create("dynamic_tables");
	tcase_add_loop_test(tc, test_relocation_kinds_that_fill_an_address_slot, 0, sizeof(relocation_kinds) / sizeof(relocation_kinds[0]));
	tcase_add_test(tc, test_libc_definitions_of_dlopen_are_found_through_its_hash);
	tcase_add_test(tc, test_bloom_filter_never_says_no_for_a_name_defined);
	tcase_add_test(tc, test_import_and_its_slot_are_found_under_the_gnu_hash);
	tcase_add_test(tc, test_import_and_its_slot_are_found_under_the_sysv_hash);
	tcase_add_test(tc, test_object_laid_out_by_hand_is_read);
	tcase_add_loop_test(tc, test_tables_that_lie_are_refused, 0, sizeof(lies) / sizeof(lies[0]));
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
