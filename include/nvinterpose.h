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

/* What the exit report knows (docs/event-log.md, "The exit report"): its figures, always counted,
   and its lines, kept while a report is asked for (NVINTERPOSE_REPORT) in a bounded store. */
struct nvi_report_totals {
	long long origins;       /* folders registered */
	long long supplied;      /* copies the runtime loaded, or gave the loader the path of */
	long long misses;        /* names nobody could supply, every time */
	long long mixed_origins; /* loads that kept a copy from another installation than the asker's */
	long long left_out;      /* lines the store had no room for: the list is cut */
	int kept;                /* 1 when lines are kept (a report was asked for), 0 when only counted */
};

/* One line of the report. The strings stay valid until the process forks (a forked child starts
   a report of its own); a field that does not apply is NULL. */
struct nvi_report_entry {
	const char *kind;   /* "origin", "supplied", "miss" or "mixed-origin" */
	const char *name;   /* the library's name: as loaded (origin), as asked for (the others) */
	const char *family; /* its family, NULL when the table has none */
	const char *event;  /* the event the log file has for it: "register", "redirect", "coherent",
			       "needed", "attach-load", "audit-answer", "miss", "mixed-origin" */
	const char *asker;  /* supplied, miss, mixed-origin: the object that asked, NULL when unknown */
	const char *path;   /* origin: the folder; supplied: the copy; mixed-origin: the object loaded */
	const char *reason; /* supplied: the rule that chose the copy; miss: how it was asked for;
			       mixed-origin: why the loaded copy stays */
	const char *own;    /* mixed-origin: the copy the asker's installation holds */
	const char *places; /* miss: the places looked in, "FOLDER (STEP)" one a line ("ld.so.cache"
			       for the cache), as many as the line holds ("..." when cut) */
	int place_count;    /* miss: how many places were looked in */
	long long times;    /* miss: how many times it happened; 1 for the others */
	int warning;        /* 1 when it was said at warning level (a miss of a driver library, or of a
			       more exact version beside one that is there, is said at info) */
};

/* Fills *totals (when not NULL) and up to capacity lines, in the order they were counted;
   returns how many lines are kept in all (which may exceed capacity). */
NVI_EXPORT int nvi_report(struct nvi_report_totals *totals, struct nvi_report_entry *entries, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
