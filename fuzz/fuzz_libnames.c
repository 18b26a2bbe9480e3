/* libFuzzer target: the one name matcher (src/libnames.c) on arbitrary names, Linux and Windows.
   Its promises: a family index in the table or -1; the fast filter never turns away a name the
   matcher takes; a version that lies inside the name; Windows names match in any case; the
   basename is the name's tail; a family list is walked within its bounds. */
#include "fuzz_text.h"
#include "libnames.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool inside(const char *p, const char *s, size_t length) { return p >= s && p <= s + length; }

static bool count_family(int family, void *arg)
{
	if (family < 0 || (size_t)family >= libnames_count)
		abort();
	++*(size_t *)arg;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_parts parts;
	fuzz_parts_of(data, size, 1, &parts);
	char *name = parts.part[0];
	size_t length = strlen(name);
	struct libname_match match;
	int family = libnames_match_linux(name, &match);
	if (family < -1 || family >= (int)libnames_count || (family >= 0 && (match.family != family || !inside(match.version, name, length))))
		abort();
	if (family >= 0 && !libnames_may_match_linux(name))
		abort();
	if (libnames_match_linux(name, NULL) != family)
		abort();
	int windows = libnames_match_windows(name, &match);
	if (windows < -1 || windows >= (int)libnames_count || (windows >= 0 && !inside(match.version, name, length)))
		abort();
	/* Windows compares names without case: the name in another case is the same family. */
	char *other_case = strdup(name);
	for (char *s = other_case; *s; s++)
		*s = (char)(islower((unsigned char)*s) ? toupper((unsigned char)*s) : tolower((unsigned char)*s));
	if (libnames_match_windows(other_case, NULL) != windows)
		abort();
	free(other_case);
	const char *base = libnames_basename(name);
	if (!inside(base, name, length) || strchr(base, '/'))
		abort();
	size_t families = 0;
	libnames_foreach_family(name, count_family, &families);
	if (families > length)
		abort();
	int index = libnames_family_index(name);
	if (index < -1 || index >= (int)libnames_count || (index >= 0 && strcmp(libnames[index].family, name) != 0))
		abort();
	fuzz_parts_free(&parts);
	return 0;
}
