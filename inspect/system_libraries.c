#include "system_libraries.h"

#include "libnames.h"

#include <string.h>

bool system_library(const char *name)
{
	/* glibc's own libraries and GCC's runtime libraries, by the file name before ".so". */
	static const char *const stems[] = {
		"libc", "libm", "libdl", "libpthread", "librt", "libutil", "libresolv", "libanl", "libmvec",
		"libnsl", "libBrokenLocale", "libgcc_s", "libstdc++", "libatomic", "ld-linux", "ld-linux-x86-64",
		"ld-linux-aarch64", "ld-linux-armhf", "ld64",
	};
	const char *base = libnames_basename(name);
	if (!base)
		return false;
	size_t length = strcspn(base, ".");
	if (strncmp(base + length, ".so", 3) != 0)
		return false;
	for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++)
		if (strlen(stems[i]) == length && strncmp(base, stems[i], length) == 0)
			return true;
	return false;
}
