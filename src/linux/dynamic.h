/* The runtime's own small reader of dynamic sections: libc only, bounded, every offset checked. */
#pragma once

#include <link.h>
#include <stdbool.h>
#include <stddef.h>

struct dynamic_facts {
	const char *soname; /* points into the loaded object; NULL when it has none */
	bool has_rpath;
	bool has_runpath;
	bool nodeflib;      /* DF_1_NODEFLIB: the loader skips ld.so.cache and the default folders */
};

/* Facts of an object in memory, from its program headers (as dl_iterate_phdr reports them). */
bool dynamic_read_loaded(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, struct dynamic_facts *facts);

/* Whether the loader has added the load base to the DT_STRTAB (and like) values in a loaded
   object's dynamic section: glibc's rule, from the base and whether its PT_DYNAMIC is writable. */
bool dynamic_strtab_relocated(ElfW(Addr) base, bool dynamic_writable);

/* DF_1_NODEFLIB of a loaded object, from its dynamic array (a link map's l_ld). */
bool dynamic_has_nodeflib(const ElfW(Dyn) *dynamic);
/* Whether a loaded object has a DT_RUNPATH (its DT_RPATH then counts for nobody). */
bool dynamic_has_runpath(const ElfW(Dyn) *dynamic);

#define DYNAMIC_MAX_NEEDED 256
#define DYNAMIC_MAX_PHDRS 64 /* real libraries have about a dozen */
#define DYNAMIC_TEXT_BYTES 16384

/* Facts of a file about to be loaded. The strings point into text. */
struct dynamic_file {
	unsigned char elf_class, data, osabi;
	unsigned short machine, type;
	bool has_dynamic;
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

/* True when the loader would accept a file read by dynamic_read_file for this process (its class,
   byte order and version were checked by the read): an OS ABI it takes, this machine, a shared
   object with a dynamic section. */
bool dynamic_file_is_compatible(const struct dynamic_file *file);

/* True when path is a regular file whose ELF header the loader would accept for this process:
   same class, data encoding, version, machine and an OS ABI it takes, and a shared object. Reads
   one header and never blocks (a FIFO or a device is refused). */
bool dynamic_file_is_loadable(const char *path);
