/* nvinterpose: NVIDIA libraries find their dependents, whoever loaded them and in whatever order.
 *
 * The runtime works without any call from the application (LD_PRELOAD=libnvinterpose.so, or the
 * injected nvinterpose.dll on Windows). This API lets a program ask where NVIDIA libraries were
 * loaded from, add a folder of its own, and repeat the attach scan.
 *
 * Families are the runtime's names for NVIDIA libraries: "nvrtc", "nvrtc-builtins", "cublas",
 * "cublasLt", "cusparse", "nvJitLink", "cudnn", "cudnn_ops", ... (nvinterpose-inspect --families).
 * Every function returns 0 or a count on success and a negative errno value on failure. */
#ifndef NVINTERPOSE_H
#define NVINTERPOSE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define NVI_EXPORT __declspec(dllexport)
#else
#define NVI_EXPORT __attribute__((visibility("default")))
#endif

#define NVI_VERSION "0.1.0"

/* One registered origin: a folder a library of family was loaded from (or that was registered for
   it). The strings live as long as the process. */
struct nvi_origin {
	const char *family;
	const char *folder;
};

/* The version of the runtime in the process, e.g. "0.1.0". */
NVI_EXPORT const char *nvi_version(void);

/* Writes the first folder family was loaded from into folder.
   -EINVAL: unknown family or no buffer; -ENOENT: not loaded (nor registered) yet;
   -ERANGE: the buffer is too small. */
NVI_EXPORT int nvi_family_origin(const char *family, char *folder, size_t size);

/* Registers folder (absolute, existing) as an origin of family, as if a library of that family had
   been loaded from it. 0 when added or already known; -EINVAL: unknown family or relative folder;
   -ENOENT / -ENOTDIR: no such folder; -ENOSPC: the registry is full. */
NVI_EXPORT int nvi_register_folder(const char *family, const char *folder);

/* Fills up to capacity origins, of one family or of all (family NULL), in the order first seen;
   returns how many there are in all (which may exceed capacity). -EINVAL: unknown family. */
NVI_EXPORT int nvi_list_origins(const char *family, struct nvi_origin *origins, size_t capacity);

/* Fills up to capacity of the families the runtime knows (the names the functions above take), in
   the table's order; returns how many there are in all (which may exceed capacity). The strings
   live as long as the process. */
NVI_EXPORT int nvi_list_families(const char **families, size_t capacity);

/* Scans the loaded libraries again, registers their origins and, when the runtime was attached
   after them, loads the run-time dependents their loader would not find (the attach scan), and
   patches the dlopen bindings of the objects loaded since the attach that still lead to libc's
   (Linux; see nvi_list_patches). Returns the number of dependents it loaded. */
NVI_EXPORT int nvi_rescan(void);

/* What attaching changed (Linux; docs/how-it-works.md, "Attach at any time"). A runtime dlopen'ed
   into a running process points the dlopen and dlmopen bindings of the loaded objects at its
   hooks: each entry says, for one object, one function and one place, what became of the slots
   there. One preloaded, or deferring to a copy loaded earlier (whose list it then gives), patches
   nothing. The strings live as long as the process. */
struct nvi_patch {
	const char *object; /* the object's path as loaded ("" for the main program) */
	const char *symbol; /* "dlopen" or "dlmopen" */
	const char *place;  /* "got": slots its relocations fill; "dynsym": its dynamic-symbol entries
			       (libc's), which objects loaded later, lazy binding and dlsym resolve through */
	const char *state;  /* "patched": they lead to the hook now; "foreign": left alone, they hold
			       another function (another interposer's); "refused": mprotect refused */
	const char *target; /* "foreign": the object that function lies in ("" for the main program),
			       NULL when it lies in none; NULL otherwise */
	int count;          /* how many slots or entries */
	int error;          /* "refused": the errno mprotect gave */
};

/* Fills up to capacity entries, in the order they were made (at the attach, then at each
   nvi_rescan); returns how many there are in all (which may exceed capacity). */
NVI_EXPORT int nvi_list_patches(struct nvi_patch *patches, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
