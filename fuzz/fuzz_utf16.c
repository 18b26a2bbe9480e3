/* libFuzzer target: the UTF-8 and UTF-16 conversions of the Windows front (src/windows/utf16.c,
   compiled for Linux against fuzz/windows/windows.h). The conversions themselves are Win32's
   (MultiByteToWideChar, WideCharToMultiByte, with their error flags); here they are the shim's,
   which keeps Win32's documented contract, so what is fuzzed is utf16.c's own part: buffer sizes,
   terminators, the counted form and its errors. The first byte sizes the buffers; the rest is
   text, as UTF-8 and, read in 16-bit units, as UTF-16. Promises: a true answer is terminated
   within its buffer and converts back to the same text; false sets ERANGE or EILSEQ. */
#include "utf16.h"
#include "windows/shim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t room = data[0];
	data++, size--;
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	wchar_t *wide = malloc((room ? room : 1) * sizeof(wchar_t));
	errno = 0;
	if (utf16_from_utf8(text, wide, room)) {
		size_t units = fuzz_wcslen16(wide);
		if (units >= room)
			abort();
		char *back = malloc(strlen(text) + 1);
		if (!utf8_from_utf16(wide, back, strlen(text) + 1) || strcmp(back, text) != 0)
			abort();
		free(back);
	} else if (errno != ERANGE && errno != EILSEQ) {
		abort();
	}
	free(wide);
	/* The same bytes as UTF-16 units, counted (a UNICODE_STRING has no terminator). */
	size_t units = size / 2;
	wchar_t *counted = malloc((units ? units : 1) * sizeof(wchar_t));
	memcpy(counted, data, units * sizeof(wchar_t));
	char *out = malloc(room ? room : 1);
	errno = 0;
	if (utf8_from_utf16_counted(counted, units, out, room)) {
		if (!memchr(out, '\0', room))
			abort();
	} else if (errno != ERANGE && errno != EILSEQ) {
		abort();
	}
	free(out);
	free(counted);
	free(text);
	return 0;
}
