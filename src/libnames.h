/* The table of NVIDIA libraries and the matching of a file name against it. */
#pragma once

#include <stdatomic.h>

#include <stdbool.h>
#include <stddef.h>

enum libname_flags {
	LIBNAME_DRIVER = 1 << 0, /* installed with the driver: recorded, never redirected */
	LIBNAME_CU13 = 1 << 1,   /* a CUDA toolkit component: CUDA 13 wheels put it in nvidia/cu13/lib */
	LIBNAME_UNVERSIONED = 1 << 2, /* its files have no version (libnvperf_host.so) */
};

struct libname_row {
	const char *family;
	const char *linux_stem;
	const char *windows_prefix;
	const char *wheel_folder;
	const char *needed;  /* families, space-separated */
	const char *runtime; /* families, space-separated; "name?" is optional */
	unsigned flags;
	size_t linux_stem_length;
	size_t windows_prefix_length;
};

/* What a matching name told about itself, beside its family. */
struct libname_match {
	int family;          /* index into the table */
	bool alt;            /* libnvrtc.alt.so.13 */
	bool hash_renamed;   /* libnvrtc-builtins-2dc4bf68.so.11.8 (auditwheel) */
	const char *version; /* after ".so." ("13.0"), "" when unversioned; Windows: the rest of the
				name after the prefix, ".dll" included ("130_0.dll") */
};

extern const struct libname_row libnames[];
extern const size_t libnames_count;

/* The first part of the stem index (libnames.c): a bit for each pair of characters that follows
   "lib" in some stem, set once before first use (libnames_index_state 2 then). */
extern unsigned long long libnames_pairs[65536 / 64];
extern _Atomic int libnames_index_state;
void libnames_build_index(void);

/* False when a basename cannot be an NVIDIA library's: a test of a few instructions that turns
   away most of the names a process loads. Inline, since every dlopen asks it first. */
static inline bool libnames_may_match_linux(const char *name)
{
	if (name[0] != 'l' || name[1] != 'i' || name[2] != 'b' || name[3] == '\0')
		return false;
	if (__builtin_expect(atomic_load_explicit(&libnames_index_state, memory_order_acquire) != 2, 0))
		libnames_build_index();
	unsigned pair = (unsigned)(unsigned char)name[3] << 8 | (unsigned char)name[4];
	return (libnames_pairs[pair >> 6] >> (pair & 63)) & 1;
}
/* Family index of a Linux soname or file name (a basename), or -1. */
int libnames_match_linux(const char *basename, struct libname_match *match);
/* Family index of a Windows DLL name (a basename, any case), or -1. */
int libnames_match_windows(const char *basename, struct libname_match *match);
/* The platform's own matcher. */
int libnames_match(const char *basename, struct libname_match *match);

int libnames_family_index(const char *family);
bool libnames_is_driver(int family);

/* Calls visit for each family named in a space-separated list; stops when it returns true. */
bool libnames_foreach_family(const char *list, bool (*visit)(int family, void *arg), void *arg);
/* The same for a runtime list, with whether each dependent is required (not marked '?'). */
bool libnames_foreach_dependent(const char *list, bool (*visit)(int family, bool required, void *arg), void *arg);

/* What a library of asker_family needs family for, by the table: LIBNAME_NEED_REQUIRED for one its
   DT_NEEDED names or its run-time list marks required (NVRTC's builtins), LIBNAME_NEED_OPTIONAL for
   one its run-time list marks optional, LIBNAME_NEED_NONE otherwise (asker_family -1 included). */
enum libname_need { LIBNAME_NEED_NONE, LIBNAME_NEED_OPTIONAL, LIBNAME_NEED_REQUIRED };
enum libname_need libnames_need(int asker_family, int family);

/* How well a file name fits as the run-time dependent of family that a library whose own name
   matched as parent asks for: -1 when it cannot be (another family, the other .alt-ness, a
   hash-renamed copy, which nobody asks for by that name, or, for a dependent of the parent's own
   component (the same wheel folder: NVRTC's builtins, cuDNN's sub-libraries), another major than
   the parent's, or any name but the unversioned one of a family whose files have none), 2 for
   such a dependent of the parent's major (or unversioned, as its files are); for another
   component's, 1 for a versioned name, 0 for an unversioned one. */
int libnames_dependent_fit(const struct libname_match *parent, int family, const char *name);

/* The part of a path after its last separator. */
const char *libnames_basename(const char *path);
