/* The loader's machine facts from what the loader itself printed or listed. Every input is text a
   tool or a host process got from elsewhere: each piece is bounded and checked. */
#include "loader/machine.h"

#include <string.h>

#define MARK_PLATFORM "/nvinterpose-probe-P/"
#define MARK_LIB "/nvinterpose-probe-L/"
#define MARK_END "/nvinterpose-probe-E"
#define HWCAPS_PREFIX "glibc-hwcaps/"

/* needle in the length bytes at s (memmem, which not every C library has). */
static const char *find(const char *s, size_t length, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; n <= length && i <= length - n; i++)
		if (s[i] == needle[0] && memcmp(s + i, needle, n) == 0)
			return s + i;
	return NULL;
}

/* The pieces of one expanded probe element: its $PLATFORM, $LIB and the subfolder after the end
   mark ("" for the folder itself). */
struct element {
	const char *platform, *lib, *subdir;
	size_t platform_length, lib_length, subdir_length;
};

static bool split_element(const char *s, size_t length, struct element *e)
{
	const char *end = s + length;
	const char *p = find(s, length, MARK_PLATFORM);
	if (!p)
		return false;
	e->platform = p + strlen(MARK_PLATFORM);
	const char *l = find(e->platform, (size_t)(end - e->platform), MARK_LIB);
	if (!l)
		return false;
	e->platform_length = (size_t)(l - e->platform);
	e->lib = l + strlen(MARK_LIB);
	const char *m = find(e->lib, (size_t)(end - e->lib), MARK_END);
	if (!m)
		return false;
	e->lib_length = (size_t)(m - e->lib);
	e->subdir = m + strlen(MARK_END);
	e->subdir_length = (size_t)(end - e->subdir);
	if (e->subdir_length && e->subdir[0] != '/')
		return false; /* the end mark is part of a longer name: not ours */
	if (e->subdir_length) {
		e->subdir++;
		e->subdir_length--;
	}
	/* $PLATFORM is one folder name; $LIB may hold a slash ("lib/x86_64-linux-gnu"). */
	return e->platform_length < LOADER_FACT_MAX && !memchr(e->platform, '/', e->platform_length) &&
	       e->lib_length < LOADER_FACT_MAX && e->subdir_length < LOADER_FACT_MAX;
}

static void set_tokens(const struct element *e, struct loader_machine *machine)
{
	memcpy(machine->platform, e->platform, e->platform_length);
	machine->platform[e->platform_length] = '\0';
	memcpy(machine->lib, e->lib, e->lib_length);
	machine->lib[e->lib_length] = '\0';
	machine->tokens_known = true;
	machine->platform_known = true;
}

bool loader_machine_from_element(const char *element, struct loader_machine *machine)
{
	struct element e;
	if (!element || !split_element(element, strlen(element), &e) || e.subdir_length)
		return false;
	set_tokens(&e, machine);
	return true;
}

bool loader_machine_from_debug_output(const char *text, size_t length, struct loader_machine *machine)
{
	/* "      search path=A:B:...:Z		(LD_LIBRARY_PATH)": the first such line is the probe's. */
	static const char key[] = "search path=";
	const char *end = text + length;
	for (const char *line = text; line && line < end;) {
		const char *line_end = memchr(line, '\n', (size_t)(end - line));
		if (!line_end)
			line_end = end;
		const char *at = find(line, (size_t)(line_end - line), key);
		const char *tail = at ? find(at, (size_t)(line_end - at), "(LD_LIBRARY_PATH)") : NULL;
		if (tail) {
			const char *list = at + strlen(key);
			const char *list_end = tail;
			while (list_end > list && (list_end[-1] == '\t' || list_end[-1] == ' '))
				list_end--;
			struct loader_machine found = { 0 };
			for (const char *s = list; s < list_end;) {
				const char *colon = memchr(s, ':', (size_t)(list_end - s));
				size_t n = colon ? (size_t)(colon - s) : (size_t)(list_end - s);
				struct element e;
				if (!split_element(s, n, &e) || found.subdir_count == LOADER_MAX_SUBDIRS)
					return false;
				if (!found.tokens_known)
					set_tokens(&e, &found);
				memcpy(found.subdirs[found.subdir_count], e.subdir, e.subdir_length);
				found.subdirs[found.subdir_count++][e.subdir_length] = '\0';
				s = colon ? colon + 1 : list_end;
			}
			/* The folder itself is the last candidate: a list that does not end there is not one. */
			if (found.subdir_count == 0 || found.subdirs[found.subdir_count - 1][0] != '\0')
				return false;
			found.subdirs_known = true;
			*machine = found;
			return true;
		}
		line = line_end < end ? line_end + 1 : NULL;
	}
	return false;
}

size_t loader_machine_hwcaps(const struct loader_machine *machine, const char **names, size_t capacity)
{
	size_t count = 0;
	for (size_t i = 0; machine->subdirs_known && i < machine->subdir_count; i++) {
		const char *subdir = machine->subdirs[i];
		if (strncmp(subdir, HWCAPS_PREFIX, strlen(HWCAPS_PREFIX)) != 0 || strchr(subdir + strlen(HWCAPS_PREFIX), '/'))
			continue;
		if (count < capacity)
			names[count] = subdir + strlen(HWCAPS_PREFIX);
		count++;
	}
	return count;
}

size_t loader_machine_legacy_names(const struct loader_machine *machine, const char **names, size_t capacity)
{
	/* glibc's legacy subfolders are combinations of "tls", the platform and the important hwcap
	   names (dl-hwcaps.c, dl-procinfo.h of each architecture); the first level is one of these. */
	static const char *const fixed[] = {
		"tls",
#if defined(__x86_64__)
		"x86_64", "haswell", "xeon_phi", "avx512_1",
#elif defined(__i386__)
		"i386", "i486", "i586", "i686", "avx512_1",
#elif defined(__aarch64__)
		"aarch64",
#elif defined(__powerpc64__)
		"power8", "power9", "power10", "altivec", "vsx",
#elif defined(__s390x__)
		"z13", "z14", "z15", "vx",
#endif
	};
	size_t count = 0;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (count < capacity)
			names[count++] = fixed[i];
	if (machine && machine->platform_known && machine->platform[0] && count < capacity)
		names[count++] = machine->platform;
	return count;
}
