/* A program started as a child by the Windows suite: it imports standin-startup.dll and prints what
   its start-up looked like, one "what: answer" line each, then exits 0 (it started). */
#include "standin_startup.h"

#include <stdio.h>
#include <string.h>
#include <windows.h>

/* The import, bound-import and IAT directories in memory against the program's file. */
static const char *directories_as_in_file(void)
{
	wchar_t path[MAX_PATH * 4];
	unsigned char header[4096];
	DWORD got = 0;
	if (!GetModuleFileNameW(NULL, path, MAX_PATH * 4))
		return "unknown (no path)";
	HANDLE file = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0, NULL);
	bool read = file != INVALID_HANDLE_VALUE && ReadFile(file, header, sizeof(header), &got, NULL);
	if (file != INVALID_HANDLE_VALUE)
		CloseHandle(file);
	if (!read || got < sizeof(header))
		return "unknown (file not read)";
	const IMAGE_NT_HEADERS *on_disk = (const IMAGE_NT_HEADERS *)(header + ((const IMAGE_DOS_HEADER *)header)->e_lfanew);
	const unsigned char *base = (const unsigned char *)GetModuleHandleW(NULL);
	const IMAGE_NT_HEADERS *in_memory = (const IMAGE_NT_HEADERS *)(base + ((const IMAGE_DOS_HEADER *)base)->e_lfanew);
	static const int checked[] = { IMAGE_DIRECTORY_ENTRY_IMPORT, IMAGE_DIRECTORY_ENTRY_BOUND_IMPORT, IMAGE_DIRECTORY_ENTRY_IAT };
	for (int i = 0; i < 3; i++)
		if (memcmp(&on_disk->OptionalHeader.DataDirectory[checked[i]], &in_memory->OptionalHeader.DataDirectory[checked[i]],
			   sizeof(IMAGE_DATA_DIRECTORY)) != 0)
			return "no";
	return "yes";
}

int main(void)
{
	const struct standin_startup *seen = standin_startup_report();
	printf("runtime in this process: %s\n", GetModuleHandleW(L"nvinterpose.dll") ? "yes" : "no");
	printf("static initialization on the main thread: %s\n", seen->thread == GetCurrentThreadId() ? "yes" : "no");
	printf("runtime loaded before static initialization: %s\n", seen->runtime_loaded ? "yes" : "no");
	printf("hooks in place at static initialization: %s\n", seen->hooks_in_place ? "yes" : "no");
	printf("threads started before main: %d\n", seen->threads_attached);
	printf("import directory as in the file: %s\n", directories_as_in_file());
	fflush(stdout);
	return 0;
}
