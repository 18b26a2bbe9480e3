/* The import walk (imports.h).
 *
 * A walk starts at the first file of a load and follows its import table. For each DLL it imports:
 *   - an API set (api-ms-*, ext-ms-*) is the loader's to map to Windows' own DLLs, and left alone;
 *   - a name that is not NVIDIA's is the loader's: a module of that name loaded is bound, and a file
 *     of that name in the load's search path is walked in turn (its imports may be NVIDIA's), but
 *     not one in Windows' own folder, whose DLLs import no NVIDIA DLL but the driver's;
 *   - an NVIDIA name is decided (decide.h): a file the loader finds is walked in turn, a copy the
 *     policy names is loaded by full path, its own imports first, and a name nobody has is a miss.
 * Each file is walked once (a copy being loaded further up is not loaded again: cycles end there),
 * no deeper than POLICY_NEEDED_MAX_DEPTH below the first, and what the runtime loaded is held
 * until the load it was for is over. */
#include "imports.h"

#include "config.h"
#include "decide.h"
#include "hooks.h"
#include "libnames.h"
#include "loader_path.h"
#include "modules.h"
#include "pe_file.h"
#include "policy.h"
#include "utf16.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define WALK_FILES_MAX 64
#define WALK_HELD_MAX 64
#define IMPORT_NAMES_MAX 256
#define SEARCH_FLAGS                                                                                               \
	(LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_APPLICATION_DIR | LOAD_LIBRARY_SEARCH_USER_DIRS |   \
	 LOAD_LIBRARY_SEARCH_SYSTEM32 | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)

struct imports_walk {
	DWORD flags;        /* the caller's: the copies' flags are made from them */
	DWORD loader_error; /* the failed load's error, for the misses' reason; 0 before the load */
	size_t file_count;
	wchar_t *files[WALK_FILES_MAX]; /* walked, or being loaded, once each */
	size_t held_count;
	HMODULE held[WALK_HELD_MAX];
};

/* One file as an asker of its imports, and the names it imports. */
struct file_imports {
	char path[DECIDE_PATH_MAX * 3];
	char folder[CONFIG_FOLDER_MAX];
	bool nvidia;
	size_t count;
	char names[IMPORT_NAMES_MAX][PE_IMPORT_NAME_MAX];
};

static void walk_file(struct imports_walk *walk, const wchar_t *file, const wchar_t *search_path, int depth);

DWORD imports_flags_for_full_path(DWORD flags)
{
	return flags & SEARCH_FLAGS ? flags | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR : flags | LOAD_WITH_ALTERED_SEARCH_PATH;
}

static bool walked(const struct imports_walk *walk, const wchar_t *file)
{
	for (size_t i = 0; i < walk->file_count; i++)
		if (_wcsicmp(walk->files[i], file) == 0)
			return true;
	return false;
}

/* Notes file as walked; false when it was, or the walk is as long as it may be. */
static bool note_file(struct imports_walk *walk, const wchar_t *file)
{
	if (walked(walk, file) || walk->file_count == WALK_FILES_MAX)
		return false;
	return (walk->files[walk->file_count] = _wcsdup(file)) && ++walk->file_count;
}

static bool add_name(const char *name, void *arg)
{
	struct file_imports *imports = arg;
	strcpy(imports->names[imports->count++], name);
	return imports->count == IMPORT_NAMES_MAX;
}

/* The file's imports and what it is as their asker; NULL when it cannot be read. */
static struct file_imports *read_imports(const wchar_t *file)
{
	struct file_imports *imports = malloc(sizeof(*imports));
	char base[96];
	size_t length = wcslen(file);
	if (!imports)
		return NULL;
	imports->count = 0;
	if (!pe_file_imports(file, add_name, imports) || !utf8_from_utf16(file, imports->path, sizeof(imports->path))) {
		free(imports);
		return NULL;
	}
	imports->nvidia = modules_family_of_name(file, base, sizeof(base)) >= 0 &&
			  modules_folder_of_path(file, length, imports->folder, sizeof(imports->folder));
	return imports;
}

/* A copy loaded by full path: under coherent its imports first (it is an NVIDIA DLL), otherwise
   the loader first, and its imports after a failure, with one retry. */
static HMODULE load_copy(struct imports_walk *walk, const wchar_t *copy, int depth)
{
	DWORD flags = imports_flags_for_full_path(walk->flags);
	wchar_t *search_path = loader_path_for(copy, flags);
	bool before = config_get()->policy == POLICY_COHERENT;
	size_t held = walk->held_count;
	if (before)
		walk_file(walk, copy, search_path, depth);
	HMODULE module = hooks_load_by_path(copy, flags);
	DWORD error = GetLastError();
	if (!module && !before && error == ERROR_MOD_NOT_FOUND) {
		DWORD outer = walk->loader_error;
		walk->loader_error = error;
		walk_file(walk, copy, search_path, depth);
		walk->loader_error = outer;
		if (walk->held_count > held)
			module = hooks_load_by_path(copy, flags);
	}
	free(search_path);
	if (!module)
		SetLastError(error);
	return module;
}

static void supply(struct imports_walk *walk, const struct decision *decision, int depth)
{
	if (walked(walk, decision->copy) || walk->held_count == WALK_HELD_MAX)
		return; /* a copy being loaded further up (a cycle), or as many held as may be */
	HMODULE module = load_copy(walk, decision->copy, depth);
	if (!module) {
		decide_report_not_loaded(decision, GetLastError());
		return;
	}
	walk->held[walk->held_count++] = module;
	decide_report_loaded(decision);
}

/* An import that is not NVIDIA's: the file the loader takes, unless it is loaded or Windows' own. */
static void walk_other(struct imports_walk *walk, const wchar_t *name, const wchar_t *search_path, int depth)
{
	wchar_t *found = malloc(DECIDE_PATH_MAX * sizeof(wchar_t));
	if (found && !GetModuleHandleW(name) && loader_path_find(search_path, name, found, DECIDE_PATH_MAX) &&
	    !loader_path_is_windows_own(found))
		walk_file(walk, found, search_path, depth + 1);
	free(found);
}

static void walk_import(struct imports_walk *walk, const struct file_imports *asker, const char *name, const wchar_t *search_path,
			int depth)
{
	wchar_t wide[PE_IMPORT_NAME_MAX];
	if (_strnicmp(name, "api-", 4) == 0 || _strnicmp(name, "ext-", 4) == 0 || !utf16_from_utf8(name, wide, PE_IMPORT_NAME_MAX))
		return;
	int family = libnames_match_windows(name, NULL);
	if (family < 0) {
		walk_other(walk, wide, search_path, depth);
		return;
	}
	struct decide_request request = { .name = name, .wide_name = wide, .family = family, .request = POLICY_NEEDED,
					  .asker = asker->path, .asker_folder = asker->nvidia ? asker->folder : NULL,
					  .search_path = search_path, .loader_error = walk->loader_error };
	struct decision *decision = decide(&request);
	if (!decision)
		return;
	switch (decision->answer.action) {
	case POLICY_USE_LOADED: decide_check_mixed_origin(decision, GetModuleHandleW(wide)); break;
	case POLICY_LOAD_OWN:
	case POLICY_LOAD_FALLBACK: supply(walk, decision, depth + 1); break;
	default:
		if (decision->answer.miss)
			decide_report_miss(decision);
		else if (decision->loader_found)
			walk_file(walk, decision->loader_file, search_path, depth + 1);
	}
	decide_free(decision);
}

static void walk_file(struct imports_walk *walk, const wchar_t *file, const wchar_t *search_path, int depth)
{
	if (depth > POLICY_NEEDED_MAX_DEPTH || !note_file(walk, file))
		return;
	struct file_imports *imports = read_imports(file);
	for (size_t i = 0; imports && i < imports->count; i++)
		walk_import(walk, imports, imports->names[i], search_path, depth);
	free(imports);
}

struct imports_walk *imports_walk(const wchar_t *file, const wchar_t *search_path, DWORD flags, DWORD loader_error)
{
	struct imports_walk *walk = calloc(1, sizeof(*walk));
	if (!walk)
		return NULL;
	walk->flags = flags;
	walk->loader_error = loader_error;
	walk_file(walk, file, search_path, 0);
	if (walk->held_count)
		return walk;
	imports_release(walk);
	return NULL;
}

void imports_release(struct imports_walk *walk)
{
	if (!walk)
		return;
	DWORD saved = GetLastError();
	while (walk->held_count)
		FreeLibrary(walk->held[--walk->held_count]);
	for (size_t i = 0; i < walk->file_count; i++)
		free(walk->files[i]);
	free(walk);
	SetLastError(saved);
}

HMODULE imports_load_copy(const wchar_t *copy, DWORD caller_flags)
{
	struct imports_walk *walk = calloc(1, sizeof(*walk));
	if (!walk)
		return hooks_load_by_path(copy, imports_flags_for_full_path(caller_flags));
	walk->flags = caller_flags;
	HMODULE module = load_copy(walk, copy, 0);
	imports_release(walk);
	return module;
}
