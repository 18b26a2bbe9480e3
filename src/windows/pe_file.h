/* What a PE file on disk is, from its headers alone: the candidate check of the Windows front, and
   the checks before a DLL is put into a child's import table. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

/* The machine this code runs as (IMAGE_FILE_MACHINE_AMD64 in the x64 build). */
unsigned short pe_this_machine(void);
/* "x64", "x86", "ARM64", "ARM" or "machine 0xNNNN" (a static buffer for the last). */
const char *pe_machine_name(unsigned short machine);

struct pe_file_header {
	unsigned short machine; /* IMAGE_FILE_HEADER.Machine */
	bool dll;               /* IMAGE_FILE_DLL */
};

/* Reads the headers of the PE file at path (UTF-16). False when it is no PE image, cannot be read,
   or is not a file on disk (a device, a pipe or a folder is refused without a read). */
bool pe_file_read_header(const wchar_t *path, struct pe_file_header *header);

/* True when path is a DLL for this process's machine. */
bool pe_file_is_loadable_dll(const wchar_t *path);

/* True when the PE file at path exports name (by name, in its export directory). */
bool pe_file_exports(const wchar_t *path, const char *name);

/* The longest DLL name an import is read with, its NUL included (a longer one is skipped). */
#define PE_IMPORT_NAME_MAX 256
/* Calls visit with each DLL name the PE file at path imports through its import directory, in the
   table's order, until visit returns true. Not its delay-load imports: the loader maps those later,
   when the DLL's own helper asks for them. A name not terminated inside its section, or longer than
   PE_IMPORT_NAME_MAX, is skipped. False when the file cannot be read or is no PE image; true for
   one without imports. */
bool pe_file_imports(const wchar_t *path, bool (*visit)(const char *name, void *arg), void *arg);

/* The checks themselves, on bytes already read (bounded: every offset is checked against size).
   pe_parse_header reads the first bytes of a file; pe_section_exports the raw bytes of the section
   whose first byte has RVA section_rva and that holds the export directory at directory_rva. */
bool pe_parse_header(const unsigned char *data, size_t size, struct pe_file_header *header);
bool pe_section_exports(const unsigned char *section, size_t size, unsigned long section_rva,
			unsigned long directory_rva, const char *name);
