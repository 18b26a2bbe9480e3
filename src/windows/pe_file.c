/* The loader stops at the first file of the right name, so a 32-bit copy or a stray non-DLL in a
   registered folder must be refused before it is tried; and a DLL put into a child's import table
   that cannot load stops the child from starting at all, so it is checked first: that it is a DLL,
   for which machine, and that it exports the function the import names. A load that failed is
   looked at again through the names its files import. Every field is read from a bounded buffer,
   every offset checked, so a malformed file is only "not a DLL", or a DLL without imports. */
#include "pe_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define HEADER_BYTES 4096
/* An export section larger than this is not one this check reads (the runtime's is a page). */
#define EXPORT_SECTION_MAX (4u << 20)
/* The import descriptors read at most: more DLLs than any real module imports. */
#define IMPORT_DESCRIPTORS_MAX 512

unsigned short pe_this_machine(void)
{
#if defined(_M_ARM64) || defined(__aarch64__)
	return IMAGE_FILE_MACHINE_ARM64;
#elif defined(_WIN64)
	return IMAGE_FILE_MACHINE_AMD64;
#else
	return IMAGE_FILE_MACHINE_I386;
#endif
}

const char *pe_machine_name(unsigned short machine)
{
	static char other[32];
	switch (machine) {
	case IMAGE_FILE_MACHINE_AMD64: return "x64";
	case IMAGE_FILE_MACHINE_I386: return "x86";
	case IMAGE_FILE_MACHINE_ARM64: return "ARM64";
	case IMAGE_FILE_MACHINE_ARMNT: return "ARM";
	default: snprintf(other, sizeof(other), "machine 0x%04x", machine); return other;
	}
}

static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* What the first page of a PE file gives: its header, its export and import directories, its
   section table. */
struct layout {
	struct pe_file_header header;
	uint32_t export_rva, export_size;
	uint32_t import_rva;
	size_t sections;        /* offset of the section table in the buffer */
	uint16_t section_count; /* all inside the buffer */
};

static bool parse_layout(const unsigned char *data, size_t size, struct layout *layout)
{
	if (size < 64 || u16(data) != IMAGE_DOS_SIGNATURE)
		return false;
	uint32_t nt = u32(data + 60); /* e_lfanew */
	if (nt < 64 || nt > size || size - nt < 24 + 2 || u32(data + nt) != IMAGE_NT_SIGNATURE)
		return false;
	const unsigned char *file = data + nt + 4, *optional = file + 20;
	uint16_t optional_size = u16(file + 16), magic = u16(optional);
	/* NumberOfRvaAndSizes and DataDirectory sit 16 bytes further in PE32+ (its 64-bit fields). */
	size_t directories = magic == IMAGE_NT_OPTIONAL_HDR64_MAGIC ? 112 : magic == IMAGE_NT_OPTIONAL_HDR32_MAGIC ? 96 : 0;
	if (!directories || optional_size < directories || size - (nt + 24) < optional_size)
		return false;
	layout->header.machine = u16(file);
	layout->header.dll = (u16(file + 18) & IMAGE_FILE_DLL) != 0;
	uint32_t count = u32(optional + directories - 4);
	bool has_exports = count >= 1 && optional_size >= directories + 8;
	layout->export_rva = has_exports ? u32(optional + directories) : 0;
	layout->export_size = has_exports ? u32(optional + directories + 4) : 0;
	bool has_imports = count >= 2 && optional_size >= directories + 16;
	layout->import_rva = has_imports ? u32(optional + directories + 8) : 0;
	layout->sections = nt + 24 + optional_size;
	layout->section_count = u16(file + 2);
	if ((size - layout->sections) / sizeof(IMAGE_SECTION_HEADER) < layout->section_count)
		layout->section_count = 0; /* a table past the first page: no section is looked at */
	return true;
}

bool pe_parse_header(const unsigned char *data, size_t size, struct pe_file_header *header)
{
	struct layout layout;
	if (!parse_layout(data, size, &layout))
		return false;
	*header = layout.header;
	return true;
}

bool pe_section_exports(const unsigned char *section, size_t size, unsigned long section_rva,
			unsigned long directory_rva, const char *name)
{
	/* An RVA inside the section, with length bytes after it, as an offset; else SIZE_MAX. */
#define OFFSET(rva, length)                                                                                        \
	((rva) >= section_rva && (rva) - section_rva <= size && (length) <= size - ((rva) - section_rva)               \
		 ? (size_t)((rva) - section_rva)                                                                     \
		 : SIZE_MAX)
	size_t directory = OFFSET(directory_rva, sizeof(IMAGE_EXPORT_DIRECTORY));
	if (directory == SIZE_MAX)
		return false;
	const unsigned char *d = section + directory;
	uint32_t count = u32(d + offsetof(IMAGE_EXPORT_DIRECTORY, NumberOfNames));
	uint32_t names_rva = u32(d + offsetof(IMAGE_EXPORT_DIRECTORY, AddressOfNames));
	if (count > size / 4)
		return false;
	size_t names = OFFSET(names_rva, (size_t)count * 4);
	if (names == SIZE_MAX)
		return false;
	size_t length = strlen(name);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t name_rva = u32(section + names + 4 * i);
		size_t at = OFFSET(name_rva, length + 1);
		if (at != SIZE_MAX && memcmp(section + at, name, length + 1) == 0)
			return true;
	}
	return false;
#undef OFFSET
}

static HANDLE open_disk_file(const wchar_t *path)
{
	HANDLE file = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
				  OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	if (file != INVALID_HANDLE_VALUE && GetFileType(file) != FILE_TYPE_DISK) {
		CloseHandle(file);
		return INVALID_HANDLE_VALUE;
	}
	return file;
}

static bool read_at(HANDLE file, uint64_t offset, void *out, DWORD size, DWORD *got)
{
	OVERLAPPED at = { .Offset = (DWORD)offset, .OffsetHigh = (DWORD)(offset >> 32) };
	*got = 0;
	return ReadFile(file, out, size, got, &at);
}

bool pe_file_read_header(const wchar_t *path, struct pe_file_header *header)
{
	HANDLE file = open_disk_file(path);
	if (file == INVALID_HANDLE_VALUE)
		return false;
	unsigned char data[HEADER_BYTES];
	DWORD got;
	bool ok = read_at(file, 0, data, sizeof(data), &got) && pe_parse_header(data, got, header);
	CloseHandle(file);
	return ok;
}

bool pe_file_is_loadable_dll(const wchar_t *path)
{
	struct pe_file_header header;
	return pe_file_read_header(path, &header) && header.dll && header.machine == pe_this_machine();
}

bool pe_file_exports(const wchar_t *path, const char *name)
{
	HANDLE file = open_disk_file(path);
	if (file == INVALID_HANDLE_VALUE)
		return false;
	unsigned char data[HEADER_BYTES], *section = NULL;
	DWORD got;
	struct layout layout;
	bool found = false;
	if (!read_at(file, 0, data, sizeof(data), &got) || !parse_layout(data, got, &layout) || !layout.export_rva)
		goto out;
	for (uint16_t i = 0; i < layout.section_count; i++) {
		IMAGE_SECTION_HEADER entry;
		memcpy(&entry, data + layout.sections + i * sizeof(entry), sizeof(entry));
		DWORD raw = entry.SizeOfRawData;
		if (layout.export_rva < entry.VirtualAddress || layout.export_rva - entry.VirtualAddress >= raw)
			continue;
		if (raw > EXPORT_SECTION_MAX || !(section = malloc(raw)))
			goto out;
		found = read_at(file, entry.PointerToRawData, section, raw, &got) && got == raw &&
			pe_section_exports(section, raw, entry.VirtualAddress, layout.export_rva, name);
		break;
	}
out:
	free(section);
	CloseHandle(file);
	return found;
}

/* The file offset of rva and how many bytes of the section's raw data follow it; false when no
   section of the table holds it in its raw data. */
static bool file_offset(const unsigned char *data, const struct layout *layout, uint32_t rva, uint64_t *offset, uint32_t *left)
{
	for (uint16_t i = 0; i < layout->section_count; i++) {
		IMAGE_SECTION_HEADER entry;
		memcpy(&entry, data + layout->sections + i * sizeof(entry), sizeof(entry));
		if (rva >= entry.VirtualAddress && rva - entry.VirtualAddress < entry.SizeOfRawData) {
			*offset = (uint64_t)entry.PointerToRawData + (rva - entry.VirtualAddress);
			*left = entry.SizeOfRawData - (rva - entry.VirtualAddress);
			return true;
		}
	}
	return false;
}

/* The NUL-terminated name at rva, when it fits in name (PE_IMPORT_NAME_MAX bytes) and in its section. */
static bool read_name(HANDLE file, const unsigned char *data, const struct layout *layout, uint32_t rva, char *name)
{
	uint64_t offset;
	uint32_t left;
	DWORD got;
	if (!file_offset(data, layout, rva, &offset, &left))
		return false;
	DWORD want = left < PE_IMPORT_NAME_MAX ? left : PE_IMPORT_NAME_MAX;
	if (!read_at(file, offset, name, want, &got))
		return false;
	return memchr(name, '\0', got) != NULL;
}

bool pe_file_imports(const wchar_t *path, bool (*visit)(const char *name, void *arg), void *arg)
{
	HANDLE file = open_disk_file(path);
	if (file == INVALID_HANDLE_VALUE)
		return false;
	unsigned char data[HEADER_BYTES];
	char name[PE_IMPORT_NAME_MAX];
	IMAGE_IMPORT_DESCRIPTOR *descriptors = NULL;
	DWORD got;
	struct layout layout;
	uint64_t offset;
	uint32_t left;
	bool ok = false;
	if (!read_at(file, 0, data, sizeof(data), &got) || !parse_layout(data, got, &layout))
		goto out;
	ok = true;
	if (!layout.import_rva || !file_offset(data, &layout, layout.import_rva, &offset, &left))
		goto out;
	size_t count = left / sizeof(*descriptors) < IMPORT_DESCRIPTORS_MAX ? left / sizeof(*descriptors) : IMPORT_DESCRIPTORS_MAX;
	if (!count || !(descriptors = malloc(count * sizeof(*descriptors))) ||
	    !read_at(file, offset, descriptors, (DWORD)(count * sizeof(*descriptors)), &got))
		goto out;
	/* The table ends with a descriptor of zeros; a name that cannot be read is skipped. */
	for (size_t i = 0; i < got / sizeof(*descriptors) && descriptors[i].Name; i++)
		if (read_name(file, data, &layout, descriptors[i].Name, name) && name[0] && visit(name, arg))
			break;
out:
	free(descriptors);
	CloseHandle(file);
	return ok;
}
