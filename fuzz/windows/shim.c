/* The Win32 functions of fuzz/windows/windows.h, for the fuzzers of the Windows parsers on Linux. */
#include "shim.h"

#include "../fuzz_text.h"

#include <string.h>

const unsigned char *shim_file;
size_t shim_file_size;
DWORD shim_page_protection = PAGE_READWRITE;
static DWORD last_error;
static int file_handle;

HANDLE CreateFileW(LPCWSTR name, DWORD access, DWORD share, void *security, DWORD disposition, DWORD flags, HANDLE template_file)
{
	(void)name, (void)access, (void)share, (void)security, (void)disposition, (void)flags, (void)template_file;
	return shim_file ? &file_handle : INVALID_HANDLE_VALUE;
}

DWORD GetFileType(HANDLE file) { return file == &file_handle ? FILE_TYPE_DISK : 0; }

/* Reads at the OVERLAPPED's offset (a synchronous handle: the read is done when it returns). */
BOOL ReadFile(HANDLE file, void *buffer, DWORD size, DWORD *got, void *overlapped)
{
	const OVERLAPPED *at = overlapped;
	uint64_t offset = at ? (uint64_t)at->OffsetHigh << 32 | at->Offset : 0;
	if (file != &file_handle)
		return FALSE;
	size_t n = offset >= shim_file_size ? 0 : shim_file_size - (size_t)offset;
	if (n > size)
		n = size;
	memcpy(buffer, shim_file + offset, n);
	*got = (DWORD)n;
	return TRUE;
}

/* No module has a file name here: the callers fall back to the module's address. */
DWORD GetModuleFileNameW(HMODULE module, wchar_t *name, DWORD size)
{
	(void)module, (void)name, (void)size;
	return 0;
}

BOOL CloseHandle(HANDLE handle) { return handle == &file_handle; }

SIZE_T VirtualQuery(const void *address, MEMORY_BASIC_INFORMATION *info, SIZE_T size)
{
	memset(info, 0, sizeof(*info));
	info->BaseAddress = (void *)address;
	info->Protect = shim_page_protection;
	return size;
}

BOOL VirtualProtect(void *address, SIZE_T size, DWORD protect, DWORD *old)
{
	(void)address, (void)size, (void)protect;
	*old = shim_page_protection;
	return TRUE;
}

DWORD GetLastError(void) { return last_error; }

size_t fuzz_wcslen16(const wchar_t *text)
{
	size_t n = 0;
	while (text[n])
		n++;
	return n;
}

/* Win32's contract: length -1 converts through the terminator, which counts; count 0 asks for
   the size; too small a buffer fails with ERROR_INSUFFICIENT_BUFFER; with MB_ERR_INVALID_CHARS an
   invalid sequence fails with ERROR_NO_UNICODE_TRANSLATION. */
int MultiByteToWideChar(unsigned code_page, DWORD flags, LPCSTR text, int length, wchar_t *out, int count)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t total = length < 0 ? strlen(text) + 1 : (size_t)length;
	int written = 0;
	if (code_page != CP_UTF8 || !(flags & MB_ERR_INVALID_CHARS) || count < 0) {
		last_error = ERROR_INVALID_NAME;
		return 0;
	}
	for (size_t i = 0; i < total;) {
		size_t used;
		long code = fuzz_utf8_decode((const char *)s + i, total - i, &used);
		if (code < 0) {
			last_error = ERROR_NO_UNICODE_TRANSLATION;
			return 0;
		}
		int units = code >= 0x10000 ? 2 : 1;
		if (count) {
			if (written + units > count) {
				last_error = ERROR_INSUFFICIENT_BUFFER;
				return 0;
			}
			if (units == 2) {
				out[written] = (wchar_t)(0xd800 + ((code - 0x10000) >> 10));
				out[written + 1] = (wchar_t)(0xdc00 + ((code - 0x10000) & 0x3ff));
			} else {
				out[written] = (wchar_t)code;
			}
		}
		written += units;
		i += used;
	}
	return written;
}

int WideCharToMultiByte(unsigned code_page, DWORD flags, LPCWSTR text, int length, char *out, int size, LPCSTR default_char,
			BOOL *used_default)
{
	size_t total = length < 0 ? fuzz_wcslen16(text) + 1 : (size_t)length;
	int written = 0;
	if (code_page != CP_UTF8 || !(flags & WC_ERR_INVALID_CHARS) || size < 0 || default_char || used_default) {
		last_error = ERROR_INVALID_NAME;
		return 0;
	}
	for (size_t i = 0; i < total; i++) {
		unsigned long code = (uint16_t)text[i];
		if (code >= 0xd800 && code <= 0xdbff && i + 1 < total && (uint16_t)text[i + 1] >= 0xdc00 && (uint16_t)text[i + 1] <= 0xdfff)
			code = 0x10000 + ((code - 0xd800) << 10) + ((uint16_t)text[++i] - 0xdc00);
		else if (code >= 0xd800 && code <= 0xdfff) {
			last_error = ERROR_NO_UNICODE_TRANSLATION;
			return 0;
		}
		unsigned char bytes[4];
		int n;
		if (code < 0x80)
			bytes[0] = (unsigned char)code, n = 1;
		else if (code < 0x800)
			bytes[0] = (unsigned char)(0xc0 | code >> 6), bytes[1] = (unsigned char)(0x80 | (code & 0x3f)), n = 2;
		else if (code < 0x10000)
			bytes[0] = (unsigned char)(0xe0 | code >> 12), bytes[1] = (unsigned char)(0x80 | ((code >> 6) & 0x3f)),
			bytes[2] = (unsigned char)(0x80 | (code & 0x3f)), n = 3;
		else
			bytes[0] = (unsigned char)(0xf0 | code >> 18), bytes[1] = (unsigned char)(0x80 | ((code >> 12) & 0x3f)),
			bytes[2] = (unsigned char)(0x80 | ((code >> 6) & 0x3f)), bytes[3] = (unsigned char)(0x80 | (code & 0x3f)), n = 4;
		if (size) {
			if (written + n > size) {
				last_error = ERROR_INSUFFICIENT_BUFFER;
				return 0;
			}
			memcpy(out + written, bytes, (size_t)n);
		}
		written += n;
	}
	return written;
}
