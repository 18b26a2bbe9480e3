/* Matching file names against the table of NVIDIA libraries.
 *
 * Linux: STEM ["-" 8 hex digits] [".alt"] ".so" ("." digits)*. That covers sonames
 * (libnvrtc.so.13), full versions (libcudart.so.13.0.96), the toolkit's .alt variants, auditwheel's
 * hash-renamed copies (it inserts "-HASH" before the first '.': libnvrtc-2dc4bf68.alt.so.13) and
 * unversioned development links (libnvrtc.so), and nothing else:
 * libnvrtc-fake.so, libnvrtc.so.13.bak and libcudart_static.a do not match.
 * Windows: PREFIX [0-9_.]* ".dll", compared without case, as the Windows loader compares names. */
#include "libnames.h"

#include "platform.h"

#include <stdatomic.h>
#include <stdint.h>
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
	match->hash_renamed = false;
	if (tail[0] == '-') {
		for (int i = 1; i <= 8; i++)
			if (!is_hex(tail[i]))
				return false;
		match->hash_renamed = true;
		tail += 9;
	}
	match->alt = strncmp(tail, ".alt.", 5) == 0;
	if (match->alt)
		tail += 4;
	return is_so_suffix(tail, &match->version);
}

/* An index of the stems: a bit for each pair of characters that follows "lib" in some stem (most
   names a process loads are not NVIDIA's and stop there: libm., libz., libpy, libcr, libst), and a
   hash table from stem to row. A name's stem is what comes before its first '.', less an auditwheel
   "-HASH"; the row then checks the rest. Built once, before first use: by the constructor, or by the
   first call that comes before it (a dlopen from another library's constructor); a call meanwhile
   waits the few microseconds the build takes. */
#define STEM_SLOTS 256 /* a power of two, well above the number of rows */

struct stem_index {
	unsigned short slots[STEM_SLOTS]; /* row + 1; 0 is empty */
};
static struct stem_index built;
unsigned long long libnames_pairs[65536 / 64]; /* bit (first << 8 | second) of the two characters */
_Atomic int libnames_index_state;              /* 0 none, 1 being built, 2 ready */

static uint32_t hash_stem(const char *s, size_t length)
{
	uint32_t hash = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < length; i++)
		hash = (hash ^ (unsigned char)s[i]) * 16777619u;
	return hash;
}

static inline unsigned pair_of(const char *after_lib)
{
	return (unsigned)(unsigned char)after_lib[0] << 8 | (unsigned char)after_lib[1];
}

static void build_stem_index(void)
{
	for (size_t i = 0; i < libnames_count; i++) {
		unsigned pair = pair_of(libnames[i].linux_stem + 3);
		libnames_pairs[pair >> 6] |= 1ull << (pair & 63);
		uint32_t slot = hash_stem(libnames[i].linux_stem, libnames[i].linux_stem_length) & (STEM_SLOTS - 1);
		while (built.slots[slot])
			slot = (slot + 1) & (STEM_SLOTS - 1);
		built.slots[slot] = (unsigned short)(i + 1);
	}
}

void libnames_build_index(void)
{
	int expected = 0;
	if (atomic_compare_exchange_strong(&libnames_index_state, &expected, 1)) {
		build_stem_index();
		atomic_store_explicit(&libnames_index_state, 2, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&libnames_index_state, memory_order_acquire) != 2)
		platform_yield();
}

static inline const struct stem_index *stem_index(void)
{
	if (__builtin_expect(atomic_load_explicit(&libnames_index_state, memory_order_acquire) != 2, 0))
		libnames_build_index();
	return &built;
}

__attribute__((constructor)) static void build_stem_index_early(void) { stem_index(); }

static int find_stem(const struct stem_index *index, const char *stem, size_t length)
{
	uint32_t slot = hash_stem(stem, length) & (STEM_SLOTS - 1);
	for (; index->slots[slot]; slot = (slot + 1) & (STEM_SLOTS - 1)) {
		const struct libname_row *row = &libnames[index->slots[slot] - 1];
		if (row->linux_stem_length == length && memcmp(row->linux_stem, stem, length) == 0)
			return index->slots[slot] - 1;
	}
	return -1;
}

int libnames_match_linux(const char *name, struct libname_match *match)
{
	struct libname_match unused;
	if (!match)
		match = &unused;
	if (!name || !libnames_may_match_linux(name)) /* every stem starts with "lib" and two more */
		return -1;
	const struct stem_index *index = stem_index();
	const char *dot = strchr(name, '.');
	if (!dot)
		return -1;
	size_t length = (size_t)(dot - name);
	if (length > 9 && name[length - 9] == '-') {
		bool hashed = true;
		for (size_t i = length - 8; i < length && hashed; i++)
			hashed = is_hex(name[i]);
		if (hashed)
			length -= 9;
	}
	int row = find_stem(index, name, length);
	if (row < 0 || !match_linux_tail(name + libnames[row].linux_stem_length, match))
		return -1;
	match->family = row;
	return row;
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

bool libnames_foreach_dependent(const char *list, bool (*visit)(int family, bool required, void *arg), void *arg)
{
	const char *s = list;
	while (s && *s) {
		while (*s == ' ')
			s++;
		size_t n = strcspn(s, " "), length = n;
		bool required = !(n && s[n - 1] == '?');
		if (!required)
			length--;
		for (size_t i = 0; length && i < libnames_count; i++) {
			if (strlen(libnames[i].family) == length && strncmp(libnames[i].family, s, length) == 0) {
				if (visit((int)i, required, arg))
					return true;
				break;
			}
		}
		s += n;
	}
	return false;
}

struct family_visit {
	bool (*visit)(int family, void *arg);
	void *arg;
};

static bool visit_family(int family, bool required, void *arg)
{
	(void)required;
	struct family_visit *v = arg;
	return v->visit(family, v->arg);
}

bool libnames_foreach_family(const char *list, bool (*visit)(int family, void *arg), void *arg)
{
	struct family_visit v = { visit, arg };
	return libnames_foreach_dependent(list, visit_family, &v);
}

struct need_search {
	int family;
	enum libname_need need;
};

static bool note_need(int family, bool required, void *arg)
{
	struct need_search *search = arg;
	if (family != search->family)
		return false;
	search->need = required ? LIBNAME_NEED_REQUIRED : LIBNAME_NEED_OPTIONAL;
	return true;
}

enum libname_need libnames_need(int asker_family, int family)
{
	struct need_search search = { family, LIBNAME_NEED_REQUIRED };
	if (asker_family < 0 || family < 0)
		return LIBNAME_NEED_NONE;
	if (libnames_foreach_dependent(libnames[asker_family].needed, note_need, &search))
		return LIBNAME_NEED_REQUIRED; /* a DT_NEEDED: the loader fails the load without it */
	return libnames_foreach_dependent(libnames[asker_family].runtime, note_need, &search) ? search.need : LIBNAME_NEED_NONE;
}

int libnames_dependent_fit(const struct libname_match *parent, int family, const char *name)
{
	struct libname_match match;
	if (libnames_match_linux(name, &match) != family || match.alt != parent->alt || match.hash_renamed)
		return -1;
	size_t major = strcspn(parent->version, ".");
	bool same_major = major && strncmp(match.version, parent->version, major) == 0 &&
			  (match.version[major] == '.' || match.version[major] == '\0');
	/* One component's libraries come from one release: NVRTC 13 asks for its builtins 13.0, cuDNN 9
	   for its sub-libraries .9, never another major's. */
	const char *own = libnames[parent->family].wheel_folder, *theirs = libnames[family].wheel_folder;
	if (own[0] && strcmp(own, theirs) == 0) {
		if (libnames[family].flags & LIBNAME_UNVERSIONED)
			return match.version[0] ? -1 : 2;
		return same_major ? 2 : -1;
	}
	/* Another component's major says nothing: cuFFT 12 of CUDA 13 asks for NVRTC 13. */
	return match.version[0] ? 1 : 0;
}

const char *libnames_basename(const char *path)
{
	if (!path)
		return NULL;
	const char *slash = strrchr(path, '/');
#ifdef _WIN32
	const char *backslash = strrchr(path, '\\');
	if (!slash || (backslash && backslash > slash))
		slash = backslash;
	if (!slash && path[0] && path[1] == ':')
		slash = path + 1;
#endif
	return slash ? slash + 1 : path;
}
