/* UTF-8 and UTF-16 conversions with Win32's own converters, which reject invalid input. */
#include "utf16.h"

#include <errno.h>
#include <windows.h>

bool utf16_from_utf8(const char *text, wchar_t *out, size_t count)
{
	if (count == 0 || count > INT_MAX) {
		errno = ERANGE;
		return false;
	}
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, text, -1, out, (int)count);
	if (n == 0) {
		errno = GetLastError() == ERROR_INSUFFICIENT_BUFFER ? ERANGE : EILSEQ;
		return false;
	}
	return true;
}

bool utf8_from_utf16_counted(const wchar_t *text, size_t length, char *out, size_t size)
{
	if (size == 0 || size > INT_MAX || length >= size) {
		errno = ERANGE;
		return false;
	}
	if (length == 0) {
		out[0] = '\0';
		return true;
	}
	int n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, text, (int)length, out, (int)size - 1, NULL, NULL);
	if (n == 0) {
		errno = GetLastError() == ERROR_INSUFFICIENT_BUFFER ? ERANGE : EILSEQ;
		return false;
	}
	out[n] = '\0';
	return true;
}

bool utf8_from_utf16(const wchar_t *text, char *out, size_t size)
{
	return utf8_from_utf16_counted(text, wcslen(text), out, size);
}

int utf16_errno_from_win32(unsigned long error)
{
	switch (error) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_NAME:
	case ERROR_BAD_NETPATH:
	case ERROR_BAD_PATHNAME:
		return ENOENT;
	case ERROR_DIRECTORY:
		return ENOTDIR;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
		return EACCES;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return ENOMEM;
	case ERROR_FILENAME_EXCED_RANGE:
		return ENAMETOOLONG;
	default:
		return EIO;
	}
}
