/* UTF-8, the runtime's text (paths in the registry, the settings, the logs), to and from UTF-16,
   what Win32 takes. Into caller buffers: nothing here allocates, so the loader's callbacks may use it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

/* False (errno ERANGE or EILSEQ) when text does not fit in count characters or is not valid. */
bool utf16_from_utf8(const char *text, wchar_t *out, size_t count);
bool utf8_from_utf16(const wchar_t *text, char *out, size_t size);
/* The same for the first length characters of text (a UNICODE_STRING has no terminator). */
bool utf8_from_utf16_counted(const wchar_t *text, size_t length, char *out, size_t size);

/* errno's value for a Win32 error code (ENOENT for ERROR_FILE_NOT_FOUND, ...). */
int utf16_errno_from_win32(unsigned long error);
