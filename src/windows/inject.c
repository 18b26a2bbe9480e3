/* Children get the runtime through their import table, the way Detours' DetourUpdateProcessWithDll
 * does it: while the child is suspended, before its loader has run, a block of memory is put into
 * it above its image holding a copy of its import descriptors with one more in front, naming
 * nvinterpose.dll by full path and importing INJECT_IMPORTED_EXPORT; its header's import directory
 * then points at that copy (the bound-import directory, which would name the old list, is cleared).
 * The child's own loader then loads the runtime on the main thread during normal start-up, before
 * the initialization of the program's other DLLs, and nothing waits in the parent. The block starts
 * with a record of the header's original data directories, which the runtime's DllMain in the child
 * puts back (inject_restore_imports).
 *
 * An import that cannot be satisfied fails the child's start (STATUS_DLL_NOT_FOUND), so every check
 * comes first, and a child that fails one runs without the runtime, or gets the old way in: a
 * remote thread running LoadLibraryW, which runs the child's DLL initialization on that thread. */
#include "inject.h"

#include "pe_file.h"

#include <psapi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <winternl.h>

#define WIDE_PATH_MAX 4352
#define NARROW_PATH_MAX 1024
/* More descriptors than any program has: a header that claims more is not read further. */
#define DESCRIPTORS_MAX 4096
#define RECORD_MAGIC "nvi-imp1"

/* PEB.ImageBaseAddress: on Windows and on Wine, at 0x10 in a 64-bit PEB and 0x08 in a 32-bit one. */
#ifdef _WIN64
#define PEB_IMAGE_BASE_OFFSET 0x10
#else
#define PEB_IMAGE_BASE_OFFSET 0x08
#endif

/* At the start of the block put into the child. */
struct import_record {
	char magic[8];
	ULONG_PTR image_base;  /* the image whose header was changed */
	DWORD directory_count; /* its NumberOfRvaAndSizes */
	DWORD descriptors;     /* the new import descriptors, from the start of the record */
	IMAGE_DATA_DIRECTORY directories[IMAGE_NUMBEROF_DIRECTORY_ENTRIES]; /* as the header had them */
};

static void say(struct inject_report *report, enum inject_way way, DWORD error, const char *format, ...)
	__attribute__((format(gnu_printf, 4, 5)));
static void say(struct inject_report *report, enum inject_way way, DWORD error, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	report->way = way;
	report->error = error;
	vsnprintf(report->why, sizeof(report->why), format, args);
	va_end(args);
}

static bool read_remote(HANDLE process, const void *address, void *out, size_t size)
{
	SIZE_T got = 0;
	return ReadProcessMemory(process, address, out, size, &got) && got == size;
}

/* ---- The child's image, read from its memory ---------------------------------------------------- */

struct child_image {
	unsigned char *base; /* in the child */
	DWORD nt_offset;
	unsigned short machine;
	IMAGE_NT_HEADERS nt; /* valid only when machine is this process's */
};

/* The image base from the PEB, then the headers there. IsWow64Process cannot tell an x64 program
   emulated on ARM64 from a native one (both are "not WOW64"), nor can IsWow64Process2 tell x64
   emulation from native ARM64: the header's Machine field can. */
static DWORD read_child_image(HANDLE process, struct child_image *child)
{
	LONG(NTAPI * query)(HANDLE, PROCESSINFOCLASS, void *, ULONG, ULONG *) =
		(LONG(NTAPI *)(HANDLE, PROCESSINFOCLASS, void *, ULONG, ULONG *))(void (*)(void))GetProcAddress(
			GetModuleHandleW(L"ntdll.dll"), "NtQueryInformationProcess");
	PROCESS_BASIC_INFORMATION basic;
	ULONG got;
	if (!query || query(process, ProcessBasicInformation, &basic, sizeof(basic), &got) != 0 || !basic.PebBaseAddress)
		return ERROR_INVALID_FUNCTION;
	IMAGE_DOS_HEADER dos;
	if (!read_remote(process, (unsigned char *)basic.PebBaseAddress + PEB_IMAGE_BASE_OFFSET, &child->base,
			 sizeof(child->base)) ||
	    !read_remote(process, child->base, &dos, sizeof(dos)))
		return GetLastError() ? GetLastError() : ERROR_PARTIAL_COPY;
	if (dos.e_magic != IMAGE_DOS_SIGNATURE || dos.e_lfanew < (LONG)sizeof(dos) || dos.e_lfanew > 4096)
		return ERROR_BAD_EXE_FORMAT;
	child->nt_offset = (DWORD)dos.e_lfanew;
	struct {
		DWORD signature;
		IMAGE_FILE_HEADER file;
	} start;
	if (!read_remote(process, child->base + child->nt_offset, &start, sizeof(start)))
		return GetLastError();
	if (start.signature != IMAGE_NT_SIGNATURE)
		return ERROR_BAD_EXE_FORMAT;
	child->machine = start.file.Machine;
	if (child->machine != pe_this_machine())
		return 0;
	if (!read_remote(process, child->base + child->nt_offset, &child->nt, sizeof(child->nt)))
		return GetLastError();
	return child->nt.OptionalHeader.Magic == IMAGE_NT_OPTIONAL_HDR_MAGIC ? 0 : ERROR_BAD_EXE_FORMAT;
}

static IMAGE_DATA_DIRECTORY directory(const struct child_image *child, int index)
{
	IMAGE_DATA_DIRECTORY none = { 0, 0 };
	return child->nt.OptionalHeader.NumberOfRvaAndSizes > (DWORD)index ? child->nt.OptionalHeader.DataDirectory[index]
									   : none;
}

/* ---- The parent's half: the import table ------------------------------------------------------- */

/* The DLL's path as the import descriptor holds it: in ASCII, which every loader reads alike (the
   name is an ANSI string), else its short (8.3) name when that is ASCII. */
static bool ascii_path(const wchar_t *dll, char *out, size_t size)
{
	wchar_t short_path[WIDE_PATH_MAX];
	const wchar_t *path = dll;
	for (int attempt = 0; attempt < 2; attempt++) {
		size_t n = 0;
		for (; path[n] && path[n] < 0x80 && n + 1 < size; n++)
			out[n] = (char)path[n];
		if (!path[n]) {
			out[n] = '\0';
			return true;
		}
		DWORD length = GetShortPathNameW(dll, short_path, WIDE_PATH_MAX);
		if (length == 0 || length >= WIDE_PATH_MAX)
			return false;
		path = short_path;
	}
	return false;
}

/* Free memory above the image, within 4 GiB of its base: the descriptors' fields are 32-bit RVAs. */
static unsigned char *allocate_above(HANDLE process, const struct child_image *child, size_t size)
{
	SYSTEM_INFO system;
	GetSystemInfo(&system);
	uint64_t granularity = system.dwAllocationGranularity ? system.dwAllocationGranularity : 0x10000;
	uint64_t base = (uint64_t)(uintptr_t)child->base;
	uint64_t at = (base + child->nt.OptionalHeader.SizeOfImage + granularity - 1) & ~(granularity - 1);
	uint64_t limit = base + UINT32_MAX - size;
	while (at < limit) {
		MEMORY_BASIC_INFORMATION region;
		if (!VirtualQueryEx(process, (void *)(uintptr_t)at, &region, sizeof(region)))
			break;
		uint64_t end = (uint64_t)(uintptr_t)region.BaseAddress + region.RegionSize;
		if (region.State == MEM_FREE && at + size <= end) {
			void *block = VirtualAllocEx(process, (void *)(uintptr_t)at, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
			if (block)
				return block;
		}
		if (end <= at)
			break;
		at = (end + granularity - 1) & ~(granularity - 1);
	}
	return NULL;
}

/* The program's import descriptors, up to the zero one that ends them (malloc'd; NULL when they
   cannot be read or do not end). */
static IMAGE_IMPORT_DESCRIPTOR *read_descriptors(HANDLE process, const struct child_image *child, size_t *count)
{
	IMAGE_DATA_DIRECTORY imports = directory(child, IMAGE_DIRECTORY_ENTRY_IMPORT);
	IMAGE_IMPORT_DESCRIPTOR *list = calloc(64, sizeof(*list));
	*count = 0;
	if (!imports.VirtualAddress || !list)
		return list;
	for (size_t n = 0; n < DESCRIPTORS_MAX; n++) {
		if (n && n % 64 == 0) {
			IMAGE_IMPORT_DESCRIPTOR *bigger = realloc(list, (n + 64) * sizeof(*list));
			if (!bigger)
				break;
			list = bigger;
		}
		if (!read_remote(process, child->base + imports.VirtualAddress + n * sizeof(*list), &list[n], sizeof(*list)))
			break;
		if (list[n].Name == 0) {
			*count = n;
			return list;
		}
	}
	free(list);
	return NULL;
}

/* When the header names no IAT, the loader finds the section that holds the import directory to
   make the slots writable; the new directory lies in no section, so the old one's is named. */
static IMAGE_DATA_DIRECTORY import_section(HANDLE process, const struct child_image *child, DWORD rva)
{
	IMAGE_DATA_DIRECTORY found = { 0, 0 };
	const unsigned char *sections = child->base + child->nt_offset + offsetof(IMAGE_NT_HEADERS, OptionalHeader) +
					child->nt.FileHeader.SizeOfOptionalHeader;
	for (WORD i = 0; rva && i < child->nt.FileHeader.NumberOfSections && i < 96; i++) {
		IMAGE_SECTION_HEADER section;
		if (!read_remote(process, sections + i * sizeof(section), &section, sizeof(section)))
			break;
		DWORD size = section.Misc.VirtualSize ? section.Misc.VirtualSize : section.SizeOfRawData;
		if (rva >= section.VirtualAddress && rva - section.VirtualAddress < size)
			return (IMAGE_DATA_DIRECTORY){ section.VirtualAddress, size };
	}
	return found;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Where each part of the block lies: the record, the descriptors (ours, the program's, the zero
   one), our lookup and address thunks (the import, then zero), the import's hint and name, the
   DLL's path. */
struct block_layout {
	size_t descriptors, thunks, hint_name, path, size;
};

static struct block_layout lay_out(size_t old_count, const char *dll)
{
	struct block_layout at;
	at.descriptors = align8(sizeof(struct import_record));
	at.thunks = align8(at.descriptors + (old_count + 2) * sizeof(IMAGE_IMPORT_DESCRIPTOR));
	at.hint_name = at.thunks + 4 * sizeof(IMAGE_THUNK_DATA);
	at.path = at.hint_name + sizeof(WORD) + sizeof(INJECT_IMPORTED_EXPORT);
	at.size = at.path + strlen(dll) + 1;
	return at;
}

/* The block as it will lie at rva in the child: the record of what was there before, our
   descriptor first, then the program's. */
static void fill_block(unsigned char *block, const struct block_layout *at, DWORD rva, const struct child_image *child,
		       const IMAGE_IMPORT_DESCRIPTOR *old, size_t old_count, const char *dll)
{
	DWORD directory_count = child->nt.OptionalHeader.NumberOfRvaAndSizes;
	struct import_record *record = (struct import_record *)block;
	memcpy(record->magic, RECORD_MAGIC, sizeof(record->magic));
	record->image_base = (ULONG_PTR)child->base;
	record->directory_count = directory_count;
	record->descriptors = (DWORD)at->descriptors;
	memcpy(record->directories, child->nt.OptionalHeader.DataDirectory, directory_count * sizeof(IMAGE_DATA_DIRECTORY));

	IMAGE_IMPORT_DESCRIPTOR *list = (IMAGE_IMPORT_DESCRIPTOR *)(block + at->descriptors);
	IMAGE_THUNK_DATA *lookup = (IMAGE_THUNK_DATA *)(block + at->thunks), *address = lookup + 2;
	lookup[0].u1.AddressOfData = address[0].u1.AddressOfData = rva + at->hint_name; /* by name: the high bit clear */
	memcpy(block + at->hint_name + sizeof(WORD), INJECT_IMPORTED_EXPORT, sizeof(INJECT_IMPORTED_EXPORT));
	strcpy((char *)block + at->path, dll);
	list[0].OriginalFirstThunk = rva + (DWORD)at->thunks;
	list[0].FirstThunk = rva + (DWORD)(at->thunks + 2 * sizeof(IMAGE_THUNK_DATA));
	list[0].Name = rva + (DWORD)at->path;
	memcpy(list + 1, old, old_count * sizeof(*old));
}

/* The child's data directories with the imports in the block, no bound imports (their addresses
   would be stale), and an IAT directory the loader can make writable while it binds. */
static void point_directories(HANDLE process, const struct child_image *child, const struct block_layout *at, DWORD rva,
			      size_t old_count, IMAGE_DATA_DIRECTORY *directories)
{
	memcpy(directories, child->nt.OptionalHeader.DataDirectory, IMAGE_NUMBEROF_DIRECTORY_ENTRIES * sizeof(*directories));
	IMAGE_DATA_DIRECTORY old_imports = directories[IMAGE_DIRECTORY_ENTRY_IMPORT];
	directories[IMAGE_DIRECTORY_ENTRY_IMPORT] =
		(IMAGE_DATA_DIRECTORY){ rva + (DWORD)at->descriptors, (DWORD)((old_count + 2) * sizeof(IMAGE_IMPORT_DESCRIPTOR)) };
	directories[IMAGE_DIRECTORY_ENTRY_BOUND_IMPORT] = (IMAGE_DATA_DIRECTORY){ 0, 0 };
	if (directories[IMAGE_DIRECTORY_ENTRY_IAT].VirtualAddress == 0) {
		directories[IMAGE_DIRECTORY_ENTRY_IAT] = import_section(process, child, old_imports.VirtualAddress);
		if (directories[IMAGE_DIRECTORY_ENTRY_IAT].VirtualAddress == 0)
			directories[IMAGE_DIRECTORY_ENTRY_IAT] =
				(IMAGE_DATA_DIRECTORY){ rva + (DWORD)(at->thunks + 2 * sizeof(IMAGE_THUNK_DATA)), 2 * sizeof(IMAGE_THUNK_DATA) };
	}
}

/* Writes size bytes at address in the child, making the page writable meanwhile (keeping it
   executable when it was). */
static DWORD write_protected(HANDLE process, void *address, const void *data, size_t size)
{
	MEMORY_BASIC_INFORMATION page;
	DWORD old, writable = PAGE_READWRITE;
	if (VirtualQueryEx(process, address, &page, sizeof(page)) == sizeof(page) &&
	    (page.Protect & (PAGE_EXECUTE | PAGE_EXECUTE_READ | PAGE_EXECUTE_READWRITE | PAGE_EXECUTE_WRITECOPY)))
		writable = PAGE_EXECUTE_READWRITE;
	if (!VirtualProtectEx(process, address, size, writable, &old))
		return GetLastError();
	DWORD error = WriteProcessMemory(process, address, data, size, NULL) ? 0 : GetLastError();
	VirtualProtectEx(process, address, size, old, &old);
	return error;
}

static bool rewrite_imports(HANDLE process, const struct child_image *child, const char *dll, struct inject_report *report)
{
	DWORD directory_count = child->nt.OptionalHeader.NumberOfRvaAndSizes;
	if (directory_count <= IMAGE_DIRECTORY_ENTRY_IAT || directory_count > IMAGE_NUMBEROF_DIRECTORY_ENTRIES) {
		say(report, INJECT_NONE, 0, "its header has %lu data directories", directory_count);
		return false;
	}
	size_t old_count;
	IMAGE_IMPORT_DESCRIPTOR *old = read_descriptors(process, child, &old_count);
	if (!old) {
		say(report, INJECT_NONE, GetLastError(), "its import descriptors cannot be read");
		return false;
	}
	struct block_layout at = lay_out(old_count, dll);
	unsigned char *block = calloc(1, at.size), *remote = NULL;
	bool done = false;
	if (!block) {
		say(report, INJECT_NONE, ERROR_NOT_ENOUGH_MEMORY, "out of memory");
		goto out;
	}
	remote = allocate_above(process, child, at.size);
	if (!remote) {
		say(report, INJECT_NONE, GetLastError(), "no free memory within 4 GiB above its image");
		goto out;
	}
	DWORD rva = (DWORD)(remote - child->base);
	fill_block(block, &at, rva, child, old, old_count, dll);
	IMAGE_DATA_DIRECTORY directories[IMAGE_NUMBEROF_DIRECTORY_ENTRIES];
	point_directories(process, child, &at, rva, old_count, directories);
	if (!WriteProcessMemory(process, remote, block, at.size, NULL)) {
		say(report, INJECT_NONE, GetLastError(), "the new import table could not be written into it");
		goto out;
	}
	/* The last write, and one: until it lands the child's header is its own. */
	DWORD error = write_protected(process, child->base + child->nt_offset + offsetof(IMAGE_NT_HEADERS, OptionalHeader.DataDirectory),
				      directories, directory_count * sizeof(IMAGE_DATA_DIRECTORY));
	if (error) {
		say(report, INJECT_NONE, error,
		    "its header could not be written (error %lu: a write policy such as Arbitrary Code Guard, or a protected process)",
		    error);
		goto out;
	}
	report->way = INJECT_IMPORT_TABLE;
	done = true;
out:
	if (!done && remote)
		VirtualFreeEx(process, remote, 0, MEM_RELEASE);
	free(block);
	free(old);
	return done;
}

/* ---- The fallback: a thread of its own --------------------------------------------------------- */

/* Whether process has a module loaded from path: the thread's exit code holds only the low half of
   the HMODULE, which is zero for a module at a multiple of 4 GiB. */
static bool has_module(HANDLE process, const wchar_t *path)
{
	HMODULE modules[1024];
	DWORD needed = 0;
	if (!EnumProcessModulesEx(process, modules, sizeof(modules), &needed, LIST_MODULES_ALL))
		return false;
	for (DWORD i = 0; i < needed / sizeof(HMODULE) && i < 1024; i++) {
		wchar_t name[MAX_PATH * 2];
		if (GetModuleFileNameExW(process, modules[i], name, MAX_PATH * 2) && _wcsicmp(name, path) == 0)
			return true;
	}
	return false;
}

/* A remote thread whose start routine is LoadLibraryW and whose argument is the DLL's path, written
   into the process. kernel32 lies at the same address in every process of a session (it is
   relocated once per boot), so this process's LoadLibraryW is the other process's too. In a
   process created suspended the thread runs the process's own initialization first (its imports
   and their DllMain), then loads the DLL, before the program's entry point. */
static DWORD load_with_thread(HANDLE process, const wchar_t *dll, DWORD timeout_ms)
{
	LPTHREAD_START_ROUTINE load_library =
		(LPTHREAD_START_ROUTINE)(void (*)(void))GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryW");
	if (!load_library)
		return GetLastError();
	size_t bytes = (wcslen(dll) + 1) * sizeof(wchar_t);
	void *remote = VirtualAllocEx(process, NULL, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
	if (!remote)
		return GetLastError();
	DWORD result = 0;
	HANDLE thread = NULL;
	if (!WriteProcessMemory(process, remote, dll, bytes, NULL) ||
	    !(thread = CreateRemoteThread(process, NULL, 0, load_library, remote, 0, NULL))) {
		result = GetLastError();
		goto out;
	}
	DWORD waited = WaitForSingleObject(thread, timeout_ms);
	DWORD module = 0; /* the low half of the HMODULE: zero only when LoadLibraryW failed */
	if (waited != WAIT_OBJECT_0)
		result = waited == WAIT_TIMEOUT ? WAIT_TIMEOUT : GetLastError();
	else if (!GetExitCodeThread(thread, &module))
		result = GetLastError();
	else if (module == 0 && !has_module(process, dll))
		result = ERROR_MOD_NOT_FOUND;
out:
	if (thread)
		CloseHandle(thread);
	/* A thread still running reads the path: leave the page to it. */
	if (result != WAIT_TIMEOUT)
		VirtualFreeEx(process, remote, 0, MEM_RELEASE);
	return result;
}

/* ---- The parent's half: the checks, then one way or the other ---------------------------------- */

/* The attributes that change nothing about which DLLs the child may load: its parent, the handles
   it inherits, its processors, its pseudo console. */
#define BIT(number) (1ul << ((number) & PROC_THREAD_ATTRIBUTE_NUMBER))
#define ATTRIBUTE_PSEUDO_CONSOLE 22 /* ProcThreadAttributePseudoConsole, Windows 10 1809 */
#define HARMLESS_ATTRIBUTES                                                                                       \
	(BIT(ProcThreadAttributeParentProcess) | BIT(ProcThreadAttributeHandleList) |                              \
	 BIT(ProcThreadAttributeGroupAffinity) | BIT(ProcThreadAttributePreferredNode) |                           \
	 BIT(ProcThreadAttributeIdealProcessor) | BIT(ATTRIBUTE_PSEUDO_CONSOLE))

/* The first attribute in a caller's list that could forbid the DLL (a mitigation or signature
   policy, an AppContainer, a protection level, a machine type, one unknown), or -1. A
   PROC_THREAD_ATTRIBUTE_LIST starts with the bit mask of the attributes it holds, one bit per
   attribute number: its layout since Windows Vista, and Wine's. Python's subprocess passes a
   handle list whenever it redirects a child's output, which keeps the import table's way. */
static int attribute_that_may_forbid(const void *attributes)
{
	if (!attributes)
		return -1;
	DWORD present;
	memcpy(&present, attributes, sizeof(present));
	for (int number = 0; number < 32; number++)
		if ((present & ~HARMLESS_ATTRIBUTES) & (1ul << number))
			return number;
	return -1;
}

static const char *attribute_name(int number)
{
	static char other[32];
	switch (number) {
	case ProcThreadAttributeMitigationPolicy: return "a mitigation policy";
	case ProcThreadAttributeSecurityCapabilities: return "AppContainer capabilities";
	case ProcThreadAttributeProtectionLevel: return "a protection level";
	case ProcThreadAttributeChildProcessPolicy: return "a child process policy";
	default: snprintf(other, sizeof(other), "attribute %d", number); return other;
	}
}

void inject_into_child(HANDLE process, const wchar_t *dll, const void *attributes, DWORD thread_timeout_ms,
		       struct inject_report *report)
{
	memset(report, 0, sizeof(*report));
	char narrow[NARROW_PATH_MAX];
	struct pe_file_header header;
	if (!pe_file_read_header(dll, &header)) {
		DWORD file_attributes = GetFileAttributesW(dll);
		char path[NARROW_PATH_MAX * 3];
		if (!WideCharToMultiByte(CP_UTF8, 0, dll, -1, path, sizeof(path), NULL, NULL))
			strcpy(path, "?");
		if (file_attributes == INVALID_FILE_ATTRIBUTES)
			say(report, INJECT_NONE, GetLastError(), "%s is not there", path);
		else
			say(report, INJECT_NONE, ERROR_BAD_EXE_FORMAT, "%s is not a DLL", path);
		return;
	}
	if (!header.dll || header.machine != pe_this_machine()) {
		say(report, INJECT_NONE, ERROR_BAD_EXE_FORMAT, "the file is not a DLL for %s", pe_machine_name(pe_this_machine()));
		return;
	}
	struct child_image child = { 0 };
	DWORD error = read_child_image(process, &child);
	if (error) {
		say(report, INJECT_NONE, error, "its image cannot be read (error %lu)", error);
		return;
	}
	if (child.machine != header.machine) {
		say(report, INJECT_NONE, ERROR_NOT_SUPPORTED, "the program is for %s and nvinterpose.dll for %s",
		    pe_machine_name(child.machine), pe_machine_name(header.machine));
		return;
	}

	int attribute = attribute_that_may_forbid(attributes);
	if (attribute >= 0)
		say(report, INJECT_REMOTE_THREAD, 0, "its creator's attribute list holds %s, which may forbid the DLL",
		    attribute_name(attribute));
	else if (directory(&child, IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR).VirtualAddress)
		say(report, INJECT_REMOTE_THREAD, 0, "it is a .NET program");
	else if (!pe_file_exports(dll, INJECT_IMPORTED_EXPORT))
		say(report, INJECT_REMOTE_THREAD, 0, "the DLL does not export " INJECT_IMPORTED_EXPORT);
	else if (!ascii_path(dll, narrow, sizeof(narrow)))
		say(report, INJECT_REMOTE_THREAD, 0, "the DLL's path has no ASCII form for an import table");
	else if (rewrite_imports(process, &child, narrow, report))
		return;
	else
		report->way = INJECT_REMOTE_THREAD; /* rewrite_imports said why */

	error = load_with_thread(process, dll, thread_timeout_ms);
	if (error) {
		size_t used = strlen(report->why);
		snprintf(report->why + used, sizeof(report->why) - used, "%sthe thread that loads it failed too (error %lu)",
			 used ? "; " : "", error);
		report->way = INJECT_NONE;
		report->error = error;
	}
}

/* ---- The child's half ---------------------------------------------------------------------------- */

static bool readable(const void *address, size_t size, MEMORY_BASIC_INFORMATION *region)
{
	return VirtualQuery(address, region, sizeof(*region)) == sizeof(*region) && region->State == MEM_COMMIT &&
	       (region->Protect & (PAGE_READONLY | PAGE_READWRITE | PAGE_EXECUTE_READ | PAGE_EXECUTE_READWRITE)) &&
	       !(region->Protect & PAGE_GUARD) &&
	       (uintptr_t)address + size <= (uintptr_t)region->BaseAddress + region->RegionSize;
}

enum inject_restore inject_restore_imports(unsigned long *error)
{
	*error = 0;
	unsigned char *base = (unsigned char *)GetModuleHandleW(NULL);
	IMAGE_NT_HEADERS *nt = (IMAGE_NT_HEADERS *)(base + ((IMAGE_DOS_HEADER *)base)->e_lfanew);
	if (nt->OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_IAT ||
	    nt->OptionalHeader.NumberOfRvaAndSizes > IMAGE_NUMBEROF_DIRECTORY_ENTRIES ||
	    !nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT].VirtualAddress)
		return INJECT_RESTORE_NONE;
	/* The import directory lies in private memory that starts with a record of ours, made for
	   this image, or it is the program's own. */
	const unsigned char *descriptors = base + nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT].VirtualAddress;
	MEMORY_BASIC_INFORMATION region;
	if (!readable(descriptors, sizeof(IMAGE_IMPORT_DESCRIPTOR), &region) || region.Type != MEM_PRIVATE)
		return INJECT_RESTORE_NONE;
	const struct import_record *record = region.AllocationBase;
	if (!readable(record, sizeof(*record), &region) || memcmp(record->magic, RECORD_MAGIC, sizeof(record->magic)) != 0 ||
	    record->image_base != (ULONG_PTR)base || (const unsigned char *)record + record->descriptors != descriptors ||
	    record->directory_count != nt->OptionalHeader.NumberOfRvaAndSizes)
		return INJECT_RESTORE_NONE;

	IMAGE_DATA_DIRECTORY *directories = nt->OptionalHeader.DataDirectory;
	size_t size = record->directory_count * sizeof(IMAGE_DATA_DIRECTORY);
	DWORD old;
	if (!VirtualProtect(directories, size, PAGE_READWRITE, &old)) {
		*error = GetLastError();
		return INJECT_RESTORE_REFUSED;
	}
	memcpy(directories, record->directories, size);
	VirtualProtect(directories, size, old, &old);
	return INJECT_RESTORE_DONE;
}
