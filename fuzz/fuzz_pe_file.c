/* libFuzzer target: the Windows front's PE file checks (src/windows/pe_file.c, compiled for Linux
   against fuzz/windows/windows.h): the input is the file, read through the shim at the offsets the
   code asks for. Promises: the header read from the file is the header parsed from its first page;
   when there is one, its machine and DLL flag are the file header's own fields at e_lfanew; a DLL
   for this machine is exactly a loadable DLL; an export found by name is a name the file holds,
   terminated; every import name visited is a name the file holds, terminated, shorter than
   PE_IMPORT_NAME_MAX, and the imports are readable exactly when the header is; and the section
   parser, given the input as a section at the RVAs its first eight bytes name, finds only names
   that are in it. */
#define _GNU_SOURCE
#include "pe_file.h"
#include "windows/shim.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "DllMain", "nvi_version", "LoadLibraryW", "a", "" };

/* name and its terminator, somewhere in the data. */
static bool holds(const uint8_t *data, size_t size, const char *name)
{
	return memmem(data, size, name, strlen(name) + 1) != NULL;
}

struct input {
	const uint8_t *data;
	size_t size;
};

static bool check_import(const char *name, void *arg)
{
	const struct input *input = arg;
	size_t length = strlen(name);
	if (length == 0 || length >= PE_IMPORT_NAME_MAX || !holds(input->data, input->size, name))
		abort();
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The reader gets its own copy: a read past it is AddressSanitizer's to see. */
	unsigned char *file = malloc(size ? size : 1);
	memcpy(file, data, size);
	shim_file = file;
	shim_file_size = size;
	struct pe_file_header from_file, from_page;
	bool read = pe_file_read_header(L"C:\\fuzz\\input.dll", &from_file);
	size_t page = size < 4096 ? size : 4096;
	unsigned char *first = malloc(page ? page : 1);
	memcpy(first, data, page);
	bool parsed = pe_parse_header(first, page, &from_page);
	if (read != parsed || (read && (from_file.machine != from_page.machine || from_file.dll != from_page.dll)))
		abort();
	if (parsed) {
		uint32_t nt;
		uint16_t machine, characteristics;
		memcpy(&nt, data + 60, 4);
		memcpy(&machine, data + nt + 4, 2);
		memcpy(&characteristics, data + nt + 4 + 18, 2);
		if (from_page.machine != machine || from_page.dll != ((characteristics & IMAGE_FILE_DLL) != 0))
			abort();
	}
	if (pe_file_is_loadable_dll(L"C:\\fuzz\\input.dll") != (parsed && from_page.dll && from_page.machine == pe_this_machine()))
		abort();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (pe_file_exports(L"C:\\fuzz\\input.dll", names[i]) && !holds(data, size, names[i]))
			abort();
	if (size >= 8) {
		uint32_t section_rva, directory_rva;
		memcpy(&section_rva, data, 4);
		memcpy(&directory_rva, data + 4, 4);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (pe_section_exports(file, size, section_rva % 0x10000, directory_rva % 0x10000, names[i]) && !holds(data, size, names[i]))
				abort();
	}
	struct input input = { data, size };
	if (pe_file_imports(L"C:\\fuzz\\input.dll", check_import, &input) != parsed)
		abort();
	(void)pe_machine_name(from_page.machine);
	shim_file = NULL;
	free(first);
	free(file);
	return 0;
}
