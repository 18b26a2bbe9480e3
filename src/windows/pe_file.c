/* The candidate check of the Windows front: the loader stops at the first file of the right name,
   so a 32-bit copy or a stray non-DLL in a registered folder must be refused before it is tried. */
#include "pe_file.h"

#include <string.h>
#include <windows.h>

#if defined(_M_ARM64) || defined(__aarch64__)
#define THIS_MACHINE IMAGE_FILE_MACHINE_ARM64
#elif defined(_WIN64)
#define THIS_MACHINE IMAGE_FILE_MACHINE_AMD64
#else
#define THIS_MACHINE IMAGE_FILE_MACHINE_I386
#endif

bool pe_file_is_loadable_dll(const wchar_t *path)
{
	HANDLE file = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
				  OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	if (file == INVALID_HANDLE_VALUE)
		return false;
	unsigned char header[4096];
	DWORD got = 0;
	bool ok = GetFileType(file) == FILE_TYPE_DISK && ReadFile(file, header, sizeof(header), &got, NULL);
	CloseHandle(file);
	if (!ok || got < sizeof(IMAGE_DOS_HEADER))
		return false;
	IMAGE_DOS_HEADER dos;
	memcpy(&dos, header, sizeof(dos));
	if (dos.e_magic != IMAGE_DOS_SIGNATURE || dos.e_lfanew < 0 ||
	    (DWORD)dos.e_lfanew + sizeof(DWORD) + sizeof(IMAGE_FILE_HEADER) > got)
		return false;
	DWORD signature;
	IMAGE_FILE_HEADER file_header;
	memcpy(&signature, header + dos.e_lfanew, sizeof(signature));
	memcpy(&file_header, header + dos.e_lfanew + sizeof(signature), sizeof(file_header));
	return signature == IMAGE_NT_SIGNATURE && file_header.Machine == THIS_MACHINE &&
	       (file_header.Characteristics & IMAGE_FILE_DLL);
}
