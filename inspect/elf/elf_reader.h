/* The libelf reader (elfutils): the full facts of an ELF file for the inspector, and the oracle the
   runtime's own reader (src/linux/dynamic.c) is tested against. Never part of libnvinterpose.so. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_READER_MAX_NEEDED 256

enum elf_reader_error {
	ELF_READER_OK = 0,
	ELF_READER_IO,          /* cannot open or read: a missing path, a directory, a FIFO, ... */
	ELF_READER_NOT_ELF,     /* not an ELF file at all */
	ELF_READER_MALFORMED,   /* an ELF file whose headers or dynamic section cannot be trusted */
	ELF_READER_UNSUPPORTED, /* a valid ELF the reader does not handle */
};

struct elf_facts {
	unsigned char elf_class; /* ELFCLASS32 / ELFCLASS64 */
	unsigned char data;      /* ELFDATA2LSB / ELFDATA2MSB */
	unsigned char osabi;
	uint16_t machine;
	uint16_t type;           /* ET_DYN, ET_EXEC, ... */
	bool has_dynamic;        /* a PT_DYNAMIC was found and read */
	/* The loader can map it whole: every PT_LOAD's file image inside the file; the dynamic
	   section, the TLS image, the notes and the program headers (what the loader reads in memory)
	   inside the load segments, and so the tables the dynamic section names (strings, symbols,
	   hashes, relocations, versions, initializers). The runtime uses no copy that is not
	   (src/linux/dynamic.h, whole; this reader is its oracle). */
	bool whole;
	char *interp;            /* PT_INTERP, or NULL */
	char *soname;            /* DT_SONAME, or NULL */
	char *rpath;             /* DT_RPATH as written (tokens unexpanded), or NULL */
	char *runpath;           /* DT_RUNPATH as written, or NULL */
	bool nodeflib;           /* DF_1_NODEFLIB in DT_FLAGS_1 */
	size_t needed_count;
	char *needed[ELF_READER_MAX_NEEDED]; /* DT_NEEDED, in order */
};

/* Reads the facts of the file at path: the dynamic section from PT_DYNAMIC, its string table found
   through the load segments (so files with stripped or damaged section headers still read). Never
   reads the whole file, never blocks on a FIFO, never allocates more than the file's own counts
   allow. On failure returns the error and writes a one-line message into message. */
enum elf_reader_error elf_read_facts(const char *path, struct elf_facts *facts, char *message, size_t size);

/* Frees what elf_read_facts allocated; the struct may be read again after a new elf_read_facts. */
void elf_facts_free(struct elf_facts *facts);

/* The running process's own class, data, machine and OS ABI, for elf_is_compatible. */
struct elf_host {
	unsigned char elf_class, data, osabi;
	uint16_t machine;
};
struct elf_host elf_host_of_this_process(void);

/* True when the loader would accept a file with these facts for a process of host: same class,
   data encoding and machine, an OS ABI it takes (SYSV, or GNU/Linux), and a shared object. */
bool elf_is_compatible(const struct elf_facts *facts, const struct elf_host *host);

/* Expands the loader's dynamic string tokens in one search-path list (RPATH or RUNPATH, ':'
   separated) by glibc's rules: $ORIGIN and ${ORIGIN} (origin), $LIB and ${LIB} (lib), $PLATFORM
   and ${PLATFORM} (platform). An unknown $ token stays literal; an element whose known token has no
   value (NULL) is dropped; an empty element stays (it means the current folder). Writes the
   expanded elements, each a malloc'd string, into elements (at most capacity); returns how many
   there are in all, or -1 on allocation failure. */
int elf_expand_search_path(const char *list, const char *origin, const char *lib, const char *platform,
			   char **elements, size_t capacity);
