/* The few Win32 declarations src/windows/pe_file.c, import_table.c and utf16.c use, with Windows'
   own layouts (fixed-width types: LONG is 32 bits there, not 64 as on Linux), so that those files
   compile unchanged for Linux in the fuzzers (fuzz/run.sh builds them with -fshort-wchar: wchar_t is
   a UTF-16 unit, as on Windows). The functions are fuzz/windows/shim.c's: a file is the fuzzer's
   input, memory protection always succeeds, and the UTF-8 converters keep Win32's documented
   contract. Only for the fuzzers: never part of a build. */
#pragma once

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

typedef uint8_t BYTE;
typedef uint16_t WORD;
typedef uint32_t DWORD;
typedef int32_t LONG;
typedef uint64_t ULONGLONG;
typedef int BOOL;
typedef void *HANDLE;
typedef const wchar_t *LPCWSTR;
typedef const char *LPCSTR;
typedef size_t SIZE_T;
typedef uintptr_t ULONG_PTR;

#define TRUE 1
#define FALSE 0
#define INVALID_HANDLE_VALUE ((HANDLE)(intptr_t)-1)

/* ---- PE headers (winnt.h) ---- */
#define IMAGE_DOS_SIGNATURE 0x5A4D
#define IMAGE_NT_SIGNATURE 0x00004550
#define IMAGE_NT_OPTIONAL_HDR_MAGIC 0x20b
#define IMAGE_NT_OPTIONAL_HDR64_MAGIC 0x20b
#define IMAGE_NT_OPTIONAL_HDR32_MAGIC 0x10b
#define IMAGE_FILE_MACHINE_ARMNT 0x01c4
#define IMAGE_FILE_MACHINE_I386 0x014c
#define IMAGE_FILE_MACHINE_AMD64 0x8664
#define IMAGE_FILE_MACHINE_ARM64 0xAA64
#define IMAGE_FILE_DLL 0x2000
#define IMAGE_NUMBEROF_DIRECTORY_ENTRIES 16
#define IMAGE_DIRECTORY_ENTRY_IMPORT 1
#define IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT 13

typedef struct {
	WORD e_magic, e_cblp, e_cp, e_crlc, e_cparhdr, e_minalloc, e_maxalloc, e_ss, e_sp, e_csum, e_ip, e_cs, e_lfarlc, e_ovno;
	WORD e_res[4];
	WORD e_oemid, e_oeminfo;
	WORD e_res2[10];
	LONG e_lfanew;
} IMAGE_DOS_HEADER;

typedef struct {
	WORD Machine, NumberOfSections;
	DWORD TimeDateStamp, PointerToSymbolTable, NumberOfSymbols;
	WORD SizeOfOptionalHeader, Characteristics;
} IMAGE_FILE_HEADER;

typedef struct {
	DWORD VirtualAddress, Size;
} IMAGE_DATA_DIRECTORY;

typedef struct {
	WORD Magic;
	BYTE MajorLinkerVersion, MinorLinkerVersion;
	DWORD SizeOfCode, SizeOfInitializedData, SizeOfUninitializedData, AddressOfEntryPoint, BaseOfCode;
	ULONGLONG ImageBase;
	DWORD SectionAlignment, FileAlignment;
	WORD MajorOperatingSystemVersion, MinorOperatingSystemVersion, MajorImageVersion, MinorImageVersion,
		MajorSubsystemVersion, MinorSubsystemVersion;
	DWORD Win32VersionValue, SizeOfImage, SizeOfHeaders, CheckSum;
	WORD Subsystem, DllCharacteristics;
	ULONGLONG SizeOfStackReserve, SizeOfStackCommit, SizeOfHeapReserve, SizeOfHeapCommit;
	DWORD LoaderFlags, NumberOfRvaAndSizes;
	IMAGE_DATA_DIRECTORY DataDirectory[IMAGE_NUMBEROF_DIRECTORY_ENTRIES];
} IMAGE_OPTIONAL_HEADER64;

typedef struct {
	DWORD Signature;
	IMAGE_FILE_HEADER FileHeader;
	IMAGE_OPTIONAL_HEADER64 OptionalHeader;
} IMAGE_NT_HEADERS64, IMAGE_NT_HEADERS;

typedef struct {
	union {
		DWORD Characteristics;
		DWORD OriginalFirstThunk;
	};
	DWORD TimeDateStamp, ForwarderChain, Name, FirstThunk;
} IMAGE_IMPORT_DESCRIPTOR;

typedef struct {
	union {
		DWORD AllAttributes;
		struct {
			DWORD RvaBased : 1;
			DWORD ReservedAttributes : 31;
		};
	} Attributes;
	DWORD DllNameRVA, ModuleHandleRVA, ImportAddressTableRVA, ImportNameTableRVA, BoundImportAddressTableRVA,
		UnloadInformationTableRVA, TimeDateStamp;
} IMAGE_DELAYLOAD_DESCRIPTOR;

typedef struct {
	BYTE Name[8];
	union {
		DWORD PhysicalAddress;
		DWORD VirtualSize;
	} Misc;
	DWORD VirtualAddress, SizeOfRawData, PointerToRawData, PointerToRelocations, PointerToLinenumbers;
	WORD NumberOfRelocations, NumberOfLinenumbers;
	DWORD Characteristics;
} IMAGE_SECTION_HEADER;

typedef struct {
	DWORD Characteristics, TimeDateStamp;
	WORD MajorVersion, MinorVersion;
	DWORD Name, Base, NumberOfFunctions, NumberOfNames, AddressOfFunctions, AddressOfNames, AddressOfNameOrdinals;
} IMAGE_EXPORT_DIRECTORY;

_Static_assert(sizeof(IMAGE_DOS_HEADER) == 64, "IMAGE_DOS_HEADER");
_Static_assert(sizeof(IMAGE_SECTION_HEADER) == 40, "IMAGE_SECTION_HEADER");
_Static_assert(sizeof(IMAGE_EXPORT_DIRECTORY) == 40, "IMAGE_EXPORT_DIRECTORY");
_Static_assert(sizeof(IMAGE_FILE_HEADER) == 20, "IMAGE_FILE_HEADER");
_Static_assert(sizeof(IMAGE_OPTIONAL_HEADER64) == 240, "IMAGE_OPTIONAL_HEADER64");
_Static_assert(sizeof(IMAGE_NT_HEADERS64) == 264, "IMAGE_NT_HEADERS64");
_Static_assert(sizeof(IMAGE_IMPORT_DESCRIPTOR) == 20, "IMAGE_IMPORT_DESCRIPTOR");
_Static_assert(sizeof(IMAGE_DELAYLOAD_DESCRIPTOR) == 32, "IMAGE_DELAYLOAD_DESCRIPTOR");
_Static_assert(sizeof(wchar_t) == 2, "build with -fshort-wchar: wchar_t is a UTF-16 unit on Windows");

/* ---- files ---- */
#define GENERIC_READ 0x80000000u
#define FILE_SHARE_READ 1
#define FILE_SHARE_WRITE 2
#define FILE_SHARE_DELETE 4
#define OPEN_EXISTING 3
#define FILE_ATTRIBUTE_NORMAL 0x80
#define FILE_TYPE_DISK 1
#define MAX_PATH 260
typedef void *HMODULE;
typedef struct {
	ULONG_PTR Internal, InternalHigh;
	DWORD Offset, OffsetHigh;
	HANDLE hEvent;
} OVERLAPPED;
HANDLE CreateFileW(LPCWSTR name, DWORD access, DWORD share, void *security, DWORD disposition, DWORD flags, HANDLE template_file);
DWORD GetFileType(HANDLE file);
BOOL ReadFile(HANDLE file, void *buffer, DWORD size, DWORD *got, void *overlapped);
BOOL CloseHandle(HANDLE handle);
DWORD GetModuleFileNameW(HMODULE module, wchar_t *name, DWORD size);

/* ---- memory ---- */
#define PAGE_READWRITE 0x04
#define PAGE_EXECUTE 0x10
#define PAGE_EXECUTE_READ 0x20
#define PAGE_EXECUTE_READWRITE 0x40
#define PAGE_EXECUTE_WRITECOPY 0x80
typedef struct {
	void *BaseAddress, *AllocationBase;
	DWORD AllocationProtect;
	SIZE_T RegionSize;
	DWORD State, Protect, Type;
} MEMORY_BASIC_INFORMATION;
SIZE_T VirtualQuery(const void *address, MEMORY_BASIC_INFORMATION *info, SIZE_T size);
BOOL VirtualProtect(void *address, SIZE_T size, DWORD protect, DWORD *old);
#define YieldProcessor() ((void)0)

/* ---- text ---- */
#define CP_UTF8 65001
#define MB_ERR_INVALID_CHARS 0x08
#define WC_ERR_INVALID_CHARS 0x80
int MultiByteToWideChar(unsigned code_page, DWORD flags, LPCSTR text, int length, wchar_t *out, int count);
int WideCharToMultiByte(unsigned code_page, DWORD flags, LPCWSTR text, int length, char *out, int size, LPCSTR default_char,
			BOOL *used_default);
DWORD GetLastError(void);
size_t fuzz_wcslen16(const wchar_t *text);
#define wcslen fuzz_wcslen16

#define ERROR_FILE_NOT_FOUND 2
#define ERROR_PATH_NOT_FOUND 3
#define ERROR_ACCESS_DENIED 5
#define ERROR_NOT_ENOUGH_MEMORY 8
#define ERROR_OUTOFMEMORY 14
#define ERROR_SHARING_VIOLATION 32
#define ERROR_BAD_NETPATH 53
#define ERROR_INSUFFICIENT_BUFFER 122
#define ERROR_INVALID_NAME 123
#define ERROR_BAD_PATHNAME 161
#define ERROR_FILENAME_EXCED_RANGE 206
#define ERROR_DIRECTORY 267
#define ERROR_NO_UNICODE_TRANSLATION 1113
