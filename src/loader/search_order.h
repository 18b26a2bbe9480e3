/* The one model of glibc's search for a library name without a slash: for an asker and a kind of
   lookup, the folders the loader tries, in its order, each with the step it belongs to. The runtime
   (its bare-name and DT_NEEDED predictions, through search.c) and the inspector (its trees) both
   walk it; what a folder holds is the visitor's business. */
#pragma once

#include "loader/machine.h"
#include "platform.h"

#include <stdbool.h>
#include <stddef.h>

enum loader_step {
	LOADER_RPATH,           /* DT_RPATH of the asker, of the objects that loaded it, of the program */
	LOADER_LD_LIBRARY_PATH,
	LOADER_RUNPATH,         /* DT_RUNPATH of the asker */
	LOADER_CACHE,           /* ld.so.cache: visited once, with no folder */
	LOADER_DEFAULT,         /* the loader's system folders */
	LOADER_LISTED,          /* a list as the loader gave it (dlinfo RTLD_DI_SERINFO), see below */
};

/* One search list, its tokens expanded and its duplicates dropped, as the loader keeps it. */
struct loader_list {
	const char *const *dirs;
	size_t count;
};

/* What the search needs of one object. */
struct loader_object {
	struct loader_list rpath;   /* DT_RPATH (the loader ignores it when the object has a DT_RUNPATH) */
	struct loader_list runpath; /* DT_RUNPATH */
	bool has_runpath;           /* a DT_RUNPATH, even an empty one */
	bool nodeflib;              /* DF_1_NODEFLIB: no cache entry from the system folders, no system folders */
	const struct loader_object *loader; /* l_loader: the object whose DT_NEEDED loaded it, or NULL */
	/* The object's search as the loader listed it itself, or NULL. dlinfo RTLD_DI_SERINFO of a
	   loaded object gives every step but the cache, in order, with no mark between them. When set,
	   it is used in place of everything above and the process's lists. */
	const struct loader_list *listed;
};

/* The lists that belong to the process rather than to the asker. */
struct loader_process {
	const struct loader_object *program; /* the main program (its DT_RPATH), or NULL */
	struct loader_list library_path;      /* LD_LIBRARY_PATH */
	struct loader_list default_dirs;
};

enum loader_lookup {
	LOADER_BARE_NAME,          /* dlopen(NAME) from code in the asker */
	LOADER_NEEDED_OF_DLOPENED, /* a DT_NEEDED of an object that dlopen itself maps */
	LOADER_NEEDED,             /* a DT_NEEDED of an object loaded as another object's dependency */
};

enum loader_visit_result {
	LOADER_NEXT_FOLDER, /* nothing usable here: go on */
	LOADER_NEXT_STEP,   /* the loader gives up on this list (open_path returned): the next step */
	LOADER_STOP,        /* found, or the search stops (an error the loader does not pass over) */
};

/* Called for each folder in the loader's order (folder NULL for LOADER_CACHE). */
typedef enum loader_visit_result (*loader_visit)(const char *folder, enum loader_step step, void *arg);

/* Walks the loader's search for a name asked by asker; true when the visitor stopped it. */
bool loader_search_order(enum loader_lookup lookup, const struct loader_object *asker,
			 const struct loader_process *process, loader_visit visit, void *arg);

/* "rpath", "ld_library_path", "runpath", "cache", "default", "listed". */
const char *loader_step_name(enum loader_step step);

/* What one folder of a search list holds for name: the loader tries the machine's subfolders
   before the folder itself (glibc-hwcaps/x86-64-v3/NAME, ..., NAME). */
enum loader_folder_result {
	LOADER_FOLDER_NONE,    /* no candidate the visitor took */
	LOADER_FOLDER_TAKEN,   /* the visitor took one (returned true) */
	LOADER_FOLDER_UNKNOWN, /* subfolders the model cannot name may hold a candidate: the loader may
				  find one here (a machine whose subfolders were not asked of the loader) */
};

/* Visits each candidate file the loader tries in folder, in its order, with the subfolder it lies
   in ("" for the folder itself, always the last); stops when visit returns true. The visitor sees
   whether the file exists. Folder "" is an empty element: the working folder, and the paths stay
   relative, as the loader names them. Where the machine's subfolders are not known (machine NULL,
   or not asked of the loader), only the folder's own file is visited, and a copy of name in a
   glibc-hwcaps or legacy subfolder makes the answer unknown. identity, when the caller has it (NULL
   otherwise), may say that the folder holds no subfolder: then only its own file is visited. */
enum loader_folder_result loader_folder_files(const struct loader_machine *machine, const char *folder,
					      const struct folder_identity *identity, const char *name,
					      bool (*visit)(const char *path, const char *subdir, void *arg), void *arg);
