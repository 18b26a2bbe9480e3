/* Matching file names against the table of NVIDIA libraries.
 *
 * Linux: STEM [".alt"] ["-" 8 hex digits] ".so" ("." digits)*. That covers sonames
 * (libnvrtc.so.13), full versions (libcudart.so.13.0.96), the toolkit's .alt variants, auditwheel's
 * hash-renamed copies and unversioned development links (libnvrtc.so), and nothing else:
 * libnvrtc-fake.so, libnvrtc.so.13.bak and libcudart_static.a do not match.
 * Windows: PREFIX [0-9_.]* ".dll", compared without case, as the Windows loader compares names. */
#include "libnames.h"

#include <string.h>
#include <strings.h>

#define NVI_LIBRARY(family, stem, prefix, wheel, needed, runtime, flags) \
	{ family, stem, prefix, wheel, needed, runtime, flags, sizeof(stem) - 1, sizeof(prefix) - 1 },
const struct libname_row libnames[] = {
#include "libnames.def"
};
#undef NVI_LIBRARY
const size_t libnames_count = sizeof(libnames) / sizeof(libnames[0]);

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

/* ".so" followed by nothing or by groups of "." digits. */
static bool is_so_suffix(const char *s, const char **version)
{
	if (strncmp(s, ".so", 3) != 0)
		return false;
	s += 3;
	*version = *s == '.' ? s + 1 : s;
	while (*s) {
		if (s[0] != '.' || !is_digit(s[1]))
			return false;
		for (s++; is_digit(*s); s++)
			;
	}
	return true;
}

static bool match_linux_tail(const char *tail, struct libname_match *match)
{
	match->alt = strncmp(tail, ".alt.", 5) == 0;
	if (match->alt)
		tail += 4;
	match->hash_renamed = false;
	if (tail[0] == '-') {
		for (int i = 1; i <= 8; i++)
			if (!is_hex(tail[i]))
				return false;
		match->hash_renamed = true;
		tail += 9;
	}
	return is_so_suffix(tail, &match->version);
}

int libnames_match_linux(const char *name, struct libname_match *match)
{
	struct libname_match scratch;
	if (!match)
		match = &scratch;
	/* Every stem starts with "lib" and is longer than four characters: a cheap first cut for the
	   many names that are not NVIDIA's. */
	if (!name || strncmp(name, "lib", 3) != 0 || name[3] == '\0')
		return -1;
	for (size_t i = 0; i < libnames_count; i++) {
		const struct libname_row *row = &libnames[i];
		if (row->linux_stem[3] != name[3] || strncmp(name, row->linux_stem, row->linux_stem_length) != 0)
			continue;
		if (match_linux_tail(name + row->linux_stem_length, match)) {
			match->family = (int)i;
			return (int)i;
		}
	}
	return -1;
}

int libnames_match_windows(const char *name, struct libname_match *match)
{
	struct libname_match scratch;
	if (!match)
		match = &scratch;
	if (!name)
		return -1;
	for (size_t i = 0; i < libnames_count; i++) {
		const struct libname_row *row = &libnames[i];
		size_t n = row->windows_prefix_length;
		if (n == 0 || strncasecmp(name, row->windows_prefix, n) != 0)
			continue;
		const char *s = name + n;
		while (is_digit(*s) || *s == '_' || *s == '.') {
			if (strcasecmp(s, ".dll") == 0)
				break;
			s++;
		}
		if (strcasecmp(s, ".dll") == 0) {
			match->family = (int)i;
			match->alt = false;
			match->hash_renamed = false;
			match->version = name + n;
			return (int)i;
		}
	}
	return -1;
}

int libnames_match(const char *name, struct libname_match *match)
{
#ifdef _WIN32
	return libnames_match_windows(name, match);
#else
	return libnames_match_linux(name, match);
#endif
}

int libnames_family_index(const char *family)
{
	for (size_t i = 0; family && i < libnames_count; i++)
		if (strcmp(libnames[i].family, family) == 0)
			return (int)i;
	return -1;
}

bool libnames_is_driver(int family)
{
	return family >= 0 && (size_t)family < libnames_count && (libnames[family].flags & LIBNAME_DRIVER);
}

bool libnames_foreach_family(const char *list, bool (*visit)(int family, void *arg), void *arg)
{
	const char *s = list;
	while (s && *s) {
		while (*s == ' ')
			s++;
		size_t n = strcspn(s, " ");
		for (size_t i = 0; n && i < libnames_count; i++) {
			if (strlen(libnames[i].family) == n && strncmp(libnames[i].family, s, n) == 0) {
				if (visit((int)i, arg))
					return true;
				break;
			}
		}
		s += n;
	}
	return false;
}

const char *libnames_basename(const char *path)
{
	const char *base = path;
	for (const char *s = path; s && *s; s++)
		if (*s == '/'
#ifdef _WIN32
		    || *s == '\\' || *s == ':'
#endif
		)
			base = s + 1;
	return base;
}
