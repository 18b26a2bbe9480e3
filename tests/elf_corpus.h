/* Broken ELF files for the readers' tests and the fuzzer's seeds, written at run time from a valid
   source file (never committed): truncations, bit flips at fixed seeds, header and dynamic fields
   that lie, and files that are not ELF at all. libc only, and its own ELF walking: it must not
   share the mistakes of the readers it is used against. */
#pragma once

#include <stddef.h>

/* What a reader must answer for a file, beyond never crashing, hanging or allocating without bound. */
enum elf_corpus_expect {
	ELF_CORPUS_ANY,          /* an error or valid facts */
	ELF_CORPUS_ERROR,        /* an error: something the loader needs is missing or points outside */
	ELF_CORPUS_SAME_FACTS,   /* the source's facts, exactly: the damage is where a reader must not look */
	ELF_CORPUS_SAME_DYNAMIC, /* the source's interpreter and dynamic facts; the header was converted
	                            (another class or byte order) */
};

struct elf_corpus_file {
	char *path;
	char *name; /* what was done to the source: "truncated-63", "e_phoff-max", ... */
	enum elf_corpus_expect expect;
};

/* Writes the variants of source into folder (which must exist). A source larger than 16 MiB (a
   real library) is first reduced with elf_corpus_write_compact, and the variants are made from that.
   Returns how many files there are, each in (*files)[i] (free them with elf_corpus_free); 0 with
   *files NULL when the source cannot be read, is too large and not an ELF file this generator can
   walk, or a file cannot be written. A small source that is not such an ELF file gets the variants
   that need no ELF knowledge. */
size_t elf_corpus_write(const char *source, const char *folder, struct elf_corpus_file **files);
void elf_corpus_free(struct elf_corpus_file *files, size_t count);

/* Writes to path a small ELF file with the facts of source: its ELF header, one load segment, its
   interpreter, its dynamic section and only the strings that section names, so a 540 MB library
   becomes a few kilobytes. Returns 0, or -1 when source is not an ELF file it can walk or path
   cannot be written. */
int elf_corpus_write_compact(const char *source, const char *path);
