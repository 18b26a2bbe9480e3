/* The Windows front's rooms that work on other images, called directly: the checks before a DLL
 * goes into a child's import table (inject.c, pe_file.c) and the report of import slots that cannot
 * be written (import_table.c). Usage: test_inject CASE, and the mode the ACG case runs as a child. */
#include "harness.h"
#include "hooks.h"
#include "import_table.h"
#include "inject.h"
#include "log.h"
#include "pe_file.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTPUT_BYTES 65536

static wchar_t runtime_path[HARNESS_PATH_MAX], probe_path[HARNESS_PATH_MAX], builtins_path[HARNESS_PATH_MAX];
static wchar_t self_path[HARNESS_PATH_MAX];

/* ---- A child created suspended, whose output comes back through a pipe ------------------------- */

struct child {
	PROCESS_INFORMATION process;
	HANDLE output;
	unsigned char *image; /* its image base, read from its PEB as inject.c does */
	IMAGE_NT_HEADERS nt;  /* its header as created */
	DWORD nt_offset;
};

static bool start_probe(struct child *child)
{
	SECURITY_ATTRIBUTES inherit = { sizeof(inherit), NULL, TRUE };
	HANDLE write_end;
	if (!CreatePipe(&child->output, &write_end, &inherit, 0))
		return false;
	SetHandleInformation(child->output, HANDLE_FLAG_INHERIT, 0);
	STARTUPINFOW startup = { .cb = sizeof(startup), .dwFlags = STARTF_USESTDHANDLES };
	startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
	startup.hStdOutput = startup.hStdError = write_end;
	wchar_t line[HARNESS_PATH_MAX + 8];
	_snwprintf(line, HARNESS_PATH_MAX + 8, L"\"%ls\"", probe_path);
	bool started = CreateProcessW(NULL, line, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &startup, &child->process);
	CloseHandle(write_end);
	if (!started)
		return false;
	/* The image base found another way than inject.c's (the PEB): the one image in the address
	   space whose header has no IMAGE_FILE_DLL flag. */
	MEMORY_BASIC_INFORMATION region;
	unsigned char *at = NULL;
	for (unsigned char *p = (unsigned char *)0x10000; VirtualQueryEx(child->process.hProcess, p, &region, sizeof(region));
	     p = (unsigned char *)region.BaseAddress + region.RegionSize) {
		if (region.Type == MEM_IMAGE && region.AllocationBase == region.BaseAddress) {
			IMAGE_DOS_HEADER dos;
			IMAGE_NT_HEADERS nt;
			if (ReadProcessMemory(child->process.hProcess, p, &dos, sizeof(dos), NULL) &&
			    ReadProcessMemory(child->process.hProcess, p + dos.e_lfanew, &nt, sizeof(nt), NULL) &&
			    !(nt.FileHeader.Characteristics & IMAGE_FILE_DLL)) {
				at = p;
				child->nt = nt;
				child->nt_offset = (DWORD)dos.e_lfanew;
				break;
			}
		}
		if ((uintptr_t)region.BaseAddress + region.RegionSize < (uintptr_t)p)
			break;
	}
	child->image = at;
	return at != NULL;
}

/* Resumes the child, collects its output and exit code. */
static long finish_probe(struct child *child, char *output)
{
	ResumeThread(child->process.hThread);
	size_t used = 0;
	DWORD got;
	char chunk[4096];
	while (ReadFile(child->output, chunk, sizeof(chunk), &got, NULL) && got > 0) {
		size_t keep = got < OUTPUT_BYTES - 1 - used ? got : OUTPUT_BYTES - 1 - used;
		memcpy(output + used, chunk, keep);
		used += keep;
	}
	output[used] = '\0';
	CloseHandle(child->output);
	WaitForSingleObject(child->process.hProcess, INFINITE);
	DWORD code = (DWORD)-1;
	GetExitCodeProcess(child->process.hProcess, &code);
	CloseHandle(child->process.hProcess);
	CloseHandle(child->process.hThread);
	harness_print_indented(output);
	return (long)code;
}

static IMAGE_DATA_DIRECTORY remote_import_directory(const struct child *child)
{
	IMAGE_NT_HEADERS nt;
	IMAGE_DATA_DIRECTORY none = { 0, 0 };
	if (!ReadProcessMemory(child->process.hProcess, child->image + child->nt_offset, &nt, sizeof(nt), NULL))
		return none;
	return nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
}

static bool same_directory(IMAGE_DATA_DIRECTORY a, IMAGE_DATA_DIRECTORY b)
{
	return a.VirtualAddress == b.VirtualAddress && a.Size == b.Size;
}

/* ---- The cases ----------------------------------------------------------------------------------- */

/* The baseline the other cases differ from: the checks pass, the DLL goes into the import table. */
static void case_import_table(void)
{
	static char output[OUTPUT_BYTES];
	struct child child;
	if (!start_probe(&child))
		harness_skip("the probe cannot be started suspended (error %lu)", GetLastError());
	struct inject_report report;
	inject_into_child(child.process.hProcess, runtime_path, NULL, 1000, &report);
	harness_check(report.way == INJECT_IMPORT_TABLE, "a probe of this machine and the runtime: the import table (%d: %s)",
		      report.way, report.why);
	IMAGE_DATA_DIRECTORY now = remote_import_directory(&child);
	harness_check(!same_directory(now, child.nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT]) &&
			      now.VirtualAddress >= child.nt.OptionalHeader.SizeOfImage,
		      "its import directory now lies above its image (RVA 0x%lx, image 0x%lx bytes)", now.VirtualAddress,
		      child.nt.OptionalHeader.SizeOfImage);
	long code = finish_probe(&child, output);
	harness_check(code == 0 && harness_contains(output, "runtime in this process: yes") &&
			      harness_contains(output, "static initialization on the main thread: yes"),
		      "the probe ran with the runtime, loaded on its main thread (exit %ld)", code);
}

/* The child's header says it is of another machine (as an ARM64 program started from an x64
   process emulated on ARM64 would, which IsWow64Process calls "the same"): nothing is written into
   it, and it starts without the runtime. */
static void case_other_machine(void)
{
	static char output[OUTPUT_BYTES];
	struct child child;
	if (!start_probe(&child))
		harness_skip("the probe cannot be started suspended (error %lu)", GetLastError());
	unsigned char *machine = child.image + child.nt_offset + offsetof(IMAGE_NT_HEADERS, FileHeader.Machine);
	WORD other = IMAGE_FILE_MACHINE_ARM64, check = 0;
	DWORD old;
	if (!VirtualProtectEx(child.process.hProcess, machine, sizeof(other), PAGE_READWRITE, &old) ||
	    !WriteProcessMemory(child.process.hProcess, machine, &other, sizeof(other), NULL) ||
	    !ReadProcessMemory(child.process.hProcess, machine, &check, sizeof(check), NULL) || check != other) {
		TerminateProcess(child.process.hProcess, 1);
		harness_skip("the probe's header cannot be rewritten here (error %lu)", GetLastError());
	}
	struct inject_report report;
	inject_into_child(child.process.hProcess, runtime_path, NULL, 1000, &report);
	harness_check(report.way == INJECT_NONE && harness_contains(report.why, "ARM64") && harness_contains(report.why, "x64"),
		      "a child whose header says ARM64 is refused, saying so (%d: %s)", report.way, report.why);
	harness_check(same_directory(remote_import_directory(&child),
				     child.nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT]),
		      "its import directory is left as it was");
	/* Back to the truth, so that the loader starts it as what it is. */
	WORD own = child.nt.FileHeader.Machine;
	WriteProcessMemory(child.process.hProcess, machine, &own, sizeof(own), NULL);
	long code = finish_probe(&child, output);
	harness_check(code == 0 && harness_contains(output, "runtime in this process: no"), "it starts, without the runtime (exit %ld)",
		      code);
}

/* A DLL that is missing goes into no import table: the child starts without it. */
static void case_missing_dll(void)
{
	static char output[OUTPUT_BYTES];
	struct child child;
	if (!start_probe(&child))
		harness_skip("the probe cannot be started suspended (error %lu)", GetLastError());
	struct inject_report report;
	inject_into_child(child.process.hProcess, L"Z:\\no\\such\\folder\\nvinterpose.dll", NULL, 1000, &report);
	harness_check(report.way == INJECT_NONE && harness_contains(report.why, "is not there"),
		      "a missing DLL is not injected, and it is said (%d: %s)", report.way, report.why);
	harness_check(same_directory(remote_import_directory(&child),
				     child.nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT]),
		      "the child's import directory is left as it was");
	long code = finish_probe(&child, output);
	harness_check(code == 0 && harness_contains(output, "runtime in this process: no"), "the child starts without it (exit %ld)",
		      code);
}

/* A DLL that lacks the export the import would name is not put into the import table (the child
   would not start): the thread of its own loads it, and the report says why. */
static void case_dll_without_export(void)
{
	static char output[OUTPUT_BYTES];
	struct child child;
	if (!start_probe(&child))
		harness_skip("the probe cannot be started suspended (error %lu)", GetLastError());
	struct inject_report report;
	inject_into_child(child.process.hProcess, builtins_path, NULL, 30000, &report);
	harness_check(report.way == INJECT_REMOTE_THREAD && harness_contains(report.why, "does not export " INJECT_IMPORTED_EXPORT),
		      "a DLL without " INJECT_IMPORTED_EXPORT ": the fallback, saying why (%d: %s)", report.way, report.why);
	harness_check(same_directory(remote_import_directory(&child),
				     child.nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT]),
		      "the child's import directory is left as it was");
	long code = finish_probe(&child, output);
	harness_check(code == 0, "the child starts (exit %ld)", code);
}

/* The export check reads the file's own export directory. */
static void case_exports(void)
{
	harness_check(pe_file_exports(runtime_path, INJECT_IMPORTED_EXPORT), "nvinterpose.dll exports " INJECT_IMPORTED_EXPORT);
	harness_check(!pe_file_exports(runtime_path, "nvi_versio") && !pe_file_exports(runtime_path, "nvi_version2"),
		      "a prefix or a longer name is not an export");
	harness_check(!pe_file_exports(builtins_path, INJECT_IMPORTED_EXPORT) && pe_file_exports(builtins_path, "standin_value"),
		      "the stand-in exports its own function and not " INJECT_IMPORTED_EXPORT);
	struct pe_file_header header;
	harness_check(pe_file_read_header(runtime_path, &header) && header.dll && header.machine == pe_this_machine(),
		      "nvinterpose.dll is a DLL for %s", pe_machine_name(pe_this_machine()));
	harness_check(pe_file_read_header(probe_path, &header) && !header.dll, "the probe is a program, not a DLL");

	/* Malformed first pages: every one is "not a PE file", none is read past its end. */
	unsigned char page[512];
	size_t size = 0;
	FILE *file = _wfopen(runtime_path, L"rb");
	if (file) {
		size = fread(page, 1, sizeof(page), file);
		fclose(file);
	}
	harness_check(size == sizeof(page) && pe_parse_header(page, size, &header), "the DLL's first 512 bytes parse");
	static const struct {
		const char *what;
		size_t offset; /* the byte changed, or SIZE_MAX to cut the page instead */
		unsigned char value;
		size_t cut;
	} rows[] = {
		{ "no MZ", 0, 'X', 0 },
		{ "e_lfanew past the end", 61, 0x7f, 0 },
		{ "cut before the signature", SIZE_MAX, 0, 64 },
		{ "cut inside the optional header", SIZE_MAX, 0, 0x98 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned char copy[512];
		memcpy(copy, page, sizeof(copy));
		size_t length = sizeof(copy);
		if (rows[i].offset == SIZE_MAX)
			length = rows[i].cut;
		else
			copy[rows[i].offset] = rows[i].value;
		unsigned char *exact = malloc(length ? length : 1); /* the exact length, so a read past it is caught */
		memcpy(exact, copy, length);
		harness_check(!pe_parse_header(exact, length, &header), "%s: not a PE file", rows[i].what);
		free(exact);
	}
	static const unsigned char empty_directory[40] = { 0 };
	harness_check(!pe_section_exports(empty_directory, sizeof(empty_directory), 0x1000, 0x1000, "x") &&
			      !pe_section_exports(empty_directory, sizeof(empty_directory), 0x1000, 0x1010, "x") &&
			      !pe_section_exports(empty_directory, sizeof(empty_directory), 0x1000, 0x0fff, "x"),
		      "an export directory outside its section, or with no names, has no export");
}

/* ---- Arbitrary Code Guard: a write refused, reported --------------------------------------------- */

/* A module image of two pages: headers, and at 0x1000 an import descriptor whose one slot holds
   this process's LoadLibraryW (what the runtime replaces). */
static void make_image(unsigned char *image, void *slot_value)
{
	memset(image, 0, 0x2000);
	IMAGE_DOS_HEADER *dos = (IMAGE_DOS_HEADER *)image;
	dos->e_magic = IMAGE_DOS_SIGNATURE;
	dos->e_lfanew = 0x40;
	IMAGE_NT_HEADERS *nt = (IMAGE_NT_HEADERS *)(image + 0x40);
	nt->Signature = IMAGE_NT_SIGNATURE;
	nt->FileHeader.Machine = pe_this_machine();
	nt->FileHeader.SizeOfOptionalHeader = sizeof(nt->OptionalHeader);
	nt->OptionalHeader.Magic = IMAGE_NT_OPTIONAL_HDR_MAGIC;
	nt->OptionalHeader.SizeOfImage = 0x2000;
	nt->OptionalHeader.NumberOfRvaAndSizes = IMAGE_NUMBEROF_DIRECTORY_ENTRIES;
	nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT] = (IMAGE_DATA_DIRECTORY){ 0x1000, 2 * sizeof(IMAGE_IMPORT_DESCRIPTOR) };
	IMAGE_IMPORT_DESCRIPTOR *descriptor = (IMAGE_IMPORT_DESCRIPTOR *)(image + 0x1000);
	descriptor->Name = 0x1100;
	descriptor->FirstThunk = 0x1080;
	memcpy(image + 0x1080, &slot_value, sizeof(slot_value));
	strcpy((char *)image + 0x1100, "kernel32.dll");
}

static HMODULE WINAPI replacement(LPCWSTR name)
{
	(void)name;
	return NULL;
}

/* acg-child: patches the image in writable memory, then the same image mapped from a file through
   a read-only view (VirtualProtect refuses to make it writable, as under Arbitrary Code Guard),
   and prints what each returned; the runtime's log goes to stderr. */
static int mode_acg_child(const wchar_t *folder)
{
	log_set_level(LOG_WARN);
	void *real = (void *)GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryW");
	struct hook hooks[1] = { { "LoadLibraryW", (void *)replacement, { real, NULL } } };
	unsigned char *writable = VirtualAlloc(NULL, 0x2000, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
	if (!writable)
		return 1;
	make_image(writable, real);
	int patched = import_table_patch(writable, hooks, 1);
	void *slot;
	memcpy(&slot, writable + 0x1080, sizeof(slot));
	printf("writable image: %d patched, slot %s\n", patched, slot == (void *)replacement ? "replaced" : "kept");
	fflush(stdout);

	wchar_t path[HARNESS_PATH_MAX];
	harness_join(path, folder, L"image.bin");
	HANDLE file = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ, NULL, CREATE_ALWAYS, 0, NULL);
	DWORD written;
	make_image(writable, real);
	if (file == INVALID_HANDLE_VALUE || !WriteFile(file, writable, 0x2000, &written, NULL)) {
		printf("cannot write %s\n", harness_utf8(path));
		return 1;
	}
	HANDLE mapping = CreateFileMappingW(file, NULL, PAGE_READONLY, 0, 0, NULL);
	unsigned char *view = mapping ? MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0) : NULL;
	if (!view) {
		printf("cannot map %s (error %lu)\n", harness_utf8(path), GetLastError());
		return 1;
	}
	DWORD old;
	bool refused = !VirtualProtect(view + 0x1080, sizeof(void *), PAGE_READWRITE, &old);
	printf("read-only view: VirtualProtect %s\n", refused ? "refuses" : "allows");
	fflush(stdout);
	patched = import_table_patch(view, hooks, 1);
	printf("read-only view: %d patched\n", patched);
	fflush(stdout);
	patched = import_table_patch(view, hooks, 1);
	printf("read-only view again: %d patched\n", patched);
	return 0;
}

static void case_acg_reported(void)
{
	static char output[OUTPUT_BYTES];
	wchar_t folder[HARNESS_PATH_MAX], line[HARNESS_PATH_MAX * 3];
	harness_fresh_folder("acg_reported", folder);
	_snwprintf(line, HARNESS_PATH_MAX * 3, L"\"%ls\" acg-child \"%ls\"", self_path, folder);
	long code = harness_run(line, output, OUTPUT_BYTES);
	harness_print_indented(output);
	harness_check(code == 0 && harness_contains(output, "writable image: 1 patched, slot replaced"),
		      "the image is one the runtime patches when it can write (exit %ld)", code);
	if (!harness_contains(output, "VirtualProtect refuses"))
		harness_skip("this Wine lets a read-only view be made writable: a refused write cannot be simulated");
	harness_check(harness_contains(output, "read-only view: 0 patched"), "a refused write patches nothing");
	harness_check(harness_contains(output, "nvinterpose: error: ") && harness_contains(output, "1 import slot could not be made writable") &&
			      harness_contains(output, "Arbitrary Code Guard"),
		      "it is reported as an error the first time, naming the likely cause");
	harness_check(harness_contains(output, "nvinterpose: warning: ") && harness_contains(output, "read-only view again: 0 patched"),
		      "and as a warning after");
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "import_table", case_import_table },
	{ "other_machine", case_other_machine },
	{ "missing_dll", case_missing_dll },
	{ "dll_without_export", case_dll_without_export },
	{ "pe_exports", case_exports },
	{ "acg_reported", case_acg_reported },
};

int wmain(int argc, wchar_t **argv);
int wmain(int argc, wchar_t **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	GetModuleFileNameW(NULL, self_path, HARNESS_PATH_MAX);
	if (argc == 3 && wcscmp(argv[1], L"acg-child") == 0)
		return mode_acg_child(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: test_inject CASE\n");
		return 2;
	}
	harness_path_from_environment("NVI_RUNTIME", runtime_path);
	harness_path_from_environment("NVI_PROBE", probe_path);
	harness_path_from_environment("NVI_STANDIN_BUILTINS", builtins_path);
	char name[64];
	WideCharToMultiByte(CP_UTF8, 0, argv[1], -1, name, sizeof(name), NULL, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, name) == 0) {
			cases[i].run();
			return harness_result();
		}
	}
	fprintf(stderr, "test_inject: no case '%s'\n", name);
	return 2;
}
