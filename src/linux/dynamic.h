/* The runtime's own small reader of dynamic sections: libc only, bounded, every offset checked.
   Loaded objects are read in memory (dynamic.c), files about to be loaded with pread (dynamic_file.c). */
#pragma once

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dynamic_facts {
	const char *soname; /* points into the loaded object; NULL when it has none */
	bool has_rpath;
	bool has_runpath;
	bool nodeflib;      /* DF_1_NODEFLIB: the loader skips ld.so.cache and the default folders */
};

/* Facts of an object in memory, from its program headers (as dl_iterate_phdr reports them). */
bool dynamic_read_loaded(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, struct dynamic_facts *facts);

/* True when the object in memory has name among its DT_NEEDED entries. */
bool dynamic_loaded_needs(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, const char *name);

/* Whether the loader has added the load base to the DT_STRTAB (and like) values in a loaded
   object's dynamic section: glibc's rule, from the base and whether its PT_DYNAMIC is writable. */
bool dynamic_strtab_relocated(ElfW(Addr) base, bool dynamic_writable);

/* DF_1_NODEFLIB of a loaded object, from its dynamic array (a link map's l_ld). */
bool dynamic_has_nodeflib(const ElfW(Dyn) *dynamic);
/* Whether a loaded object has a DT_RUNPATH (its DT_RPATH then counts for nobody). */
bool dynamic_has_runpath(const ElfW(Dyn) *dynamic);

/* The ELF header of the runtime's own object: the class, byte order and machine of every object
   the loader maps into this process. */
const ElfW(Ehdr) *dynamic_own_header(void);

/* True when length bytes from start lie inside the memory of one of the PT_LOAD segments of phdr
   (each at base + p_vaddr; base 0 for a file's own addresses). */
bool dynamic_segments_hold(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, ElfW(Addr) start, size_t length);

/* More entries than any real dynamic section holds: a bound for a missing DT_NULL. */
#define DYNAMIC_MAX_ENTRIES 4096
#define DYNAMIC_MAX_NEEDED 256
#define DYNAMIC_MAX_PHDRS 64 /* real libraries have about a dozen */
#define DYNAMIC_TEXT_BYTES 16384

/* A file as a read found it: what dynamic_file_unchanged compares with the file there now. */
struct dynamic_file_identity {
	unsigned long long device, inode;
	long long size;
	long long changed_ns; /* its status change time: a write or a truncation sets it */
};

/* Facts of a file about to be loaded. The strings point into text. */
struct dynamic_file {
	unsigned char elf_class, data, osabi;
	unsigned short machine, type;
	bool has_dynamic;
	/* The loader can map it whole. Every PT_LOAD's file image lies inside the file, and what the
	   loader reads in memory lies inside the load segments. That is the dynamic section, the TLS
	   image, the notes, the program headers, and each table the dynamic section names (strings,
	   symbols, hashes, relocations, versions, initializers). A file that is not would be a SIGBUS
	   or a SIGSEGV in the loader or after it. */
	bool whole;
	struct dynamic_file_identity identity;
	const char *interp;  /* PT_INTERP, or NULL */
	const char *soname;  /* DT_SONAME, or NULL */
	const char *rpath;   /* DT_RPATH as written, or NULL */
	const char *runpath; /* DT_RUNPATH as written, or NULL */
	bool nodeflib;
	size_t needed_count;
	const char *needed[DYNAMIC_MAX_NEEDED];
	size_t text_used;
	char text[DYNAMIC_TEXT_BYTES];
	ElfW(Phdr) phdrs[DYNAMIC_MAX_PHDRS]; /* the reader's copy of the program headers */
};

/* Reads a file of this process's class and byte order: its header, PT_INTERP and the dynamic
   section found through PT_DYNAMIC, with DT_STRTAB translated to a file offset through the load
   segments (section headers are never used). The file is read with pread, a piece at a time, never
   mapped or read whole; every offset is checked against the file's size. Returns 0, or a negative
   errno: -ENOENT and the like from open, -EISDIR / -EINVAL for something that is not a regular file,
   -ENOEXEC for a file that is not an ELF of this class and byte order or whose headers lie, -E2BIG
   past the reader's bounds, -EIO for a file that got shorter while it was read. */
int dynamic_read_file(const char *path, struct dynamic_file *file);

/* True when the file at path is still the one a read found (the same file, size and change time):
   glibc opens a library again by its path, so a copy is checked again just before it is given
   to the loader. */
bool dynamic_file_unchanged(const char *path, const struct dynamic_file_identity *identity);

/* True when the loader would accept a file read by dynamic_read_file for this process (its class,
   byte order and version were checked by the read): an OS ABI it takes, this machine, a shared
   object with a dynamic section. */
bool dynamic_file_is_compatible(const struct dynamic_file *file);

/* True when path is a regular file whose ELF header the loader would accept for this process:
   same class, data encoding, version, machine and an OS ABI it takes, and a shared object (what
   glibc's open_verify checks before it takes a file it found; it may still be cut short). Reads
   one header and never blocks (a FIFO or a device is refused). */
bool dynamic_file_is_loadable(const char *path);

/* ---- A loaded object's symbols and relocations (what attaching patches) ---------------------- */

/* The tables of a loaded object, each one checked to lie inside one of its load segments. Only
   RELA relocations are read (the x86-64 and aarch64 ABIs use no others). */
struct dynamic_tables {
	ElfW(Addr) base;
	const ElfW(Phdr) *phdr;
	size_t phnum;
	unsigned short machine; /* the process's own: the loader maps no other */
	const ElfW(Sym) *symbols;
	size_t symbol_count; /* as the hash table counts them (or as many as the segment holds) */
	size_t first_hashed; /* DT_GNU_HASH leaves out the symbols below (undefined and local ones) */
	const char *strings;
	size_t strings_size;
	const uint32_t *gnu_buckets, *gnu_chains;
	uint32_t gnu_bucket_count;
	const ElfW(Word) *sysv_buckets, *sysv_chains;
	ElfW(Word) sysv_bucket_count;
	const ElfW(Rela) *relocations; /* DT_RELA: the first relative_count are R_*_RELATIVE */
	size_t relocation_count, relative_count;
	const ElfW(Rela) *plt_relocations; /* DT_JMPREL */
	size_t plt_relocation_count;
};

/* Reads the tables of an object in memory from its program headers (as dl_iterate_phdr reports
   them). False when it has no dynamic section, no symbol table or a table that lies outside its
   segments; a missing relocation table is an empty one. Allocates nothing, so it may run where
   the loader holds its locks. */
bool dynamic_read_tables(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, struct dynamic_tables *tables);

/* False when the GNU hash's bloom filter of an object in memory says it defines nothing named
   name: a quick answer for most objects. True when it may, or when it cannot tell. */
bool dynamic_may_define(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, const char *name);

/* A symbol's type (STT_FUNC, ...), for this machine's ELF class. */
#if __ELF_NATIVE_CLASS == 64
#define DYNAMIC_SYMBOL_TYPE ELF64_ST_TYPE
#else
#define DYNAMIC_SYMBOL_TYPE ELF32_ST_TYPE
#endif

/* How many dynamic-symbol entries of one name a caller asks for: the default version, the old
   ones and the imports. */
#define DYNAMIC_NAMED_SYMBOLS_MAX 8

/* Writes the indexes of up to capacity symbols named name found through the hash table into
   indexes (any version; the definitions, and under DT_HASH the undefined symbols too: check
   st_shndx); returns how many it wrote. */
size_t dynamic_hashed_symbols_named(const struct dynamic_tables *tables, const char *name, size_t *indexes, size_t capacity);

/* The address of the function named name that the object defines (the first of its versions the
   hash table lists), or NULL. */
void *dynamic_defined_function(const struct dynamic_tables *tables, const char *name);

/* The same for every symbol named name, defined or not: the hashed ones and, by a walk, those the
   GNU hash leaves out (the imports). */
size_t dynamic_symbols_named(const struct dynamic_tables *tables, const char *name, size_t *indexes, size_t capacity);

/* True when a relocation of this type, for this machine, stores the symbol's address plus its
   addend in one pointer-sized slot: R_X86_64_JUMP_SLOT, _GLOB_DAT and _64; R_AARCH64_JUMP_SLOT,
   _GLOB_DAT and _ABS64. */
bool dynamic_relocation_fills_address_slot(unsigned short machine, unsigned int type);

/* True when length bytes from address lie inside one of the object's load segments. */
bool dynamic_inside_load_segment(const struct dynamic_tables *tables, ElfW(Addr) address, size_t length);
