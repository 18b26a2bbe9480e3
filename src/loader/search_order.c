/* glibc's search for a name without a slash, step by step, after elf/dl-load.c
   (_dl_map_new_object, cache_rpath, _dl_rtld_di_serinfo). */
#include "loader/search_order.h"

#include "path.h"

#include "platform.h"

#include <limits.h>
#include <stdatomic.h>
#include <string.h>

const char *loader_step_name(enum loader_step step)
{
	static const char *const names[] = {
		[LOADER_RPATH] = "rpath",
		[LOADER_LD_LIBRARY_PATH] = "ld_library_path",
		[LOADER_RUNPATH] = "runpath",
		[LOADER_CACHE] = "cache",
		[LOADER_DEFAULT] = "default",
		[LOADER_LISTED] = "listed",
	};
	return names[step];
}

/* open_path over one list: true when the visitor stopped the whole search. */
static bool search_list(const struct loader_list *list, enum loader_step step, loader_visit visit, void *arg)
{
	for (size_t i = 0; list && i < list->count; i++)
		switch (visit(list->dirs[i], step, arg)) {
		case LOADER_NEXT_FOLDER: break;
		case LOADER_NEXT_STEP: return false;
		case LOADER_STOP: return true;
		}
	return false;
}

bool loader_search_order(enum loader_lookup lookup, const struct loader_object *asker,
			 const struct loader_process *process, loader_visit visit, void *arg)
{
	const struct loader_object *program = process->program;
	/* 0. A loaded object whose search the loader listed itself: those folders, then the cache
	      (which RTLD_DI_SERINFO leaves out; it comes before the system folders at the end). */
	if (asker->listed)
		return search_list(asker->listed, LOADER_LISTED, visit, arg) || visit(NULL, LOADER_CACHE, arg) == LOADER_STOP;

	/* 1. DT_RPATH, only when the asker has no DT_RUNPATH (an object with a RUNPATH has no RPATH for
	      the loader, and neither do the objects above it in the chain that have one): the asker's
	      own, then that of the object that loaded it, and so on up; then the program's, unless the
	      chain passed it. An object that dlopen maps has no loader (dl-open.c maps it with
	      __RTLD_CALLMAP, and the caller is forgotten once its own search is done): its
	      dependencies never see the dlopen caller's RPATH or RUNPATH. */
	if (!asker->has_runpath) {
		bool did_program = false;
		for (const struct loader_object *o = asker; o;
		     o = lookup == LOADER_NEEDED_OF_DLOPENED && o == asker ? NULL : o->loader) {
			if (o->has_runpath || o->rpath.count == 0)
				continue;
			if (search_list(&o->rpath, LOADER_RPATH, visit, arg))
				return true;
			did_program |= o == program;
		}
		if (!did_program && program && !program->has_runpath &&
		    search_list(&program->rpath, LOADER_RPATH, visit, arg))
			return true;
	}
	/* 2. LD_LIBRARY_PATH. */
	if (search_list(&process->library_path, LOADER_LD_LIBRARY_PATH, visit, arg))
		return true;
	/* 3. The asker's DT_RUNPATH (never its loaders'). */
	if (search_list(&asker->runpath, LOADER_RUNPATH, visit, arg))
		return true;
	/* 4. ld.so.cache. */
	if (visit(NULL, LOADER_CACHE, arg) == LOADER_STOP)
		return true;
	/* 5. The system folders, unless the asker has DF_1_NODEFLIB. */
	return !asker->nodeflib && search_list(&process->default_dirs, LOADER_DEFAULT, visit, arg);
}

/* folder/subdir/name (subdir "" for none) into path, as open_path writes it (path.h). False when it
   does not fit. */
static bool join(char *path, size_t size, const char *folder, const char *subdir, const char *name)
{
	if (!subdir[0])
		return path_join(path, size, folder, '/', name);
	return path_join(path, size, folder, '/', subdir) && path_join(path, size, path, '/', name);
}

static bool is_folder(const char *folder, const char *subdir)
{
	char path[PATH_MAX];
	struct folder_identity identity;
	return join(path, sizeof(path), folder, "", subdir) && platform_folder_identity(path, &identity);
}

static bool is_file_in(const char *folder, const char *subdir, const char *name)
{
	char path[PATH_MAX];
	return join(path, sizeof(path), folder, subdir, name) && platform_is_file(path);
}

/* Whether some glibc-hwcaps subfolder of folder holds name. */
static bool copy_in_hwcaps(const char *folder, const char *name)
{
	char hwcaps[PATH_MAX];
	char **names = NULL;
	bool found = false;
	if (!is_folder(folder, "glibc-hwcaps"))
		return false;
	int n = join(hwcaps, sizeof(hwcaps), folder, "", "glibc-hwcaps") ? platform_list_folder(hwcaps, &names) : -1;
	for (int i = 0; i < n && !found; i++) {
		char subdir[PATH_MAX];
		found = join(subdir, sizeof(subdir), "glibc-hwcaps", "", names[i]) && is_file_in(folder, subdir, name);
	}
	platform_free_names(names, n);
	return found;
}

/* glibc's legacy subfolders nest the names they are made of (tls/x86_64/x86_64), at most this deep. */
#define LEGACY_DEPTH 4

/* Whether a legacy subfolder of folder (a nesting of the legacy names below subdir) holds name. */
static bool copy_in_legacy(const char *folder, const char *subdir, const char *name, const char *const *legacy, size_t count,
			   int depth)
{
	for (size_t i = 0; i < count && depth < LEGACY_DEPTH; i++) {
		char next[PATH_MAX];
		if (!join(next, sizeof(next), subdir, "", legacy[i]) || !is_folder(folder, next))
			continue;
		if (is_file_in(folder, next, name) || copy_in_legacy(folder, next, name, legacy, count, depth + 1))
			return true;
	}
	return false;
}

/* Folders found to hold none of the glibc-hwcaps and legacy subfolders the loader may try, as they
   were then (identity and change time: creating a subfolder changes the folder's; only settled
   folders). The system folders are walked on every miss of a name, and each candidate subfolder
   costs a stat. Taken with a try-lock, never waited for: a busy table only costs those stats. */
#define PLAIN_FOLDERS 32
static struct folder_identity plain_folders[PLAIN_FOLDERS];
static size_t plain_next;
static atomic_flag plain_lock = ATOMIC_FLAG_INIT;

static bool known_plain(const struct folder_identity *identity)
{
	bool known = false;
	if (!identity || !identity->changed_ns || atomic_flag_test_and_set_explicit(&plain_lock, memory_order_acquire))
		return false;
	for (size_t i = 0; i < PLAIN_FOLDERS && !known; i++)
		known = platform_folder_unchanged(&plain_folders[i], identity);
	atomic_flag_clear_explicit(&plain_lock, memory_order_release);
	return known;
}

static void note_plain(const struct folder_identity *identity)
{
	if (!identity || !identity->settled || atomic_flag_test_and_set_explicit(&plain_lock, memory_order_acquire))
		return;
	plain_folders[plain_next] = *identity;
	plain_next = (plain_next + 1) % PLAIN_FOLDERS;
	atomic_flag_clear_explicit(&plain_lock, memory_order_release);
}

/* Whether any subfolder the loader may try in folder exists (glibc-hwcaps, or a first legacy level). */
static bool has_candidate_subfolders(const char *folder, const char *const *legacy, size_t count)
{
	if (is_folder(folder, "glibc-hwcaps"))
		return true;
	for (size_t i = 0; i < count; i++)
		if (is_folder(folder, legacy[i]))
			return true;
	return false;
}

enum loader_folder_result loader_folder_files(const struct loader_machine *machine, const char *folder,
					      const struct folder_identity *identity, const char *name,
					      bool (*visit)(const char *path, const char *subdir, void *arg), void *arg)
{
	char path[PATH_MAX];
	if (identity && identity->no_subfolders) /* no subfolder to try: the folder's own file only */
		goto own_file;
	if (machine && machine->subdirs_known) {
		for (size_t i = 0; i < machine->subdir_count; i++)
			if (join(path, sizeof(path), folder, machine->subdirs[i], name) && visit(path, machine->subdirs[i], arg))
				return LOADER_FOLDER_TAKEN;
		return LOADER_FOLDER_NONE;
	}
	/* Not asked of the loader: it tries the glibc-hwcaps subfolders its CPU supports, in an order
	   this model does not know, and before glibc 2.37 legacy ones (nestings of tls, the platform
	   and hwcap names), before the folder itself. A copy of name in any of them may be the one it
	   takes, or none: unknown. Subfolders without one change nothing. */
	if (known_plain(identity))
		goto own_file;
	const char *legacy[16];
	size_t n = !machine || machine->legacy_possible ? loader_machine_legacy_names(machine, legacy, sizeof(legacy) / sizeof(legacy[0])) : 0;
	if (!has_candidate_subfolders(folder, legacy, n)) {
		note_plain(identity);
		goto own_file;
	}
	if (copy_in_hwcaps(folder, name) || copy_in_legacy(folder, "", name, legacy, n, 0))
		return LOADER_FOLDER_UNKNOWN;
own_file:
	return join(path, sizeof(path), folder, "", name) && visit(path, "", arg) ? LOADER_FOLDER_TAKEN : LOADER_FOLDER_NONE;
}
