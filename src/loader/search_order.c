/* glibc's search for a name without a slash, step by step, after elf/dl-load.c
   (_dl_map_new_object, cache_rpath, _dl_rtld_di_serinfo). */
#include "loader/search_order.h"

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
		if (!process->listed && !did_program && program && !program->has_runpath &&
		    search_list(&program->rpath, LOADER_RPATH, visit, arg))
			return true;
	}
	/* The program's RPATH, LD_LIBRARY_PATH and the system folders as the loader listed them. */
	if (process->listed && search_list(process->listed, LOADER_LISTED, visit, arg))
		return true;
	/* 2. LD_LIBRARY_PATH. */
	if (!process->listed && search_list(&process->library_path, LOADER_LD_LIBRARY_PATH, visit, arg))
		return true;
	/* 3. The asker's DT_RUNPATH (never its loaders'). */
	if (search_list(&asker->runpath, LOADER_RUNPATH, visit, arg))
		return true;
	/* 4. ld.so.cache. */
	if (visit(NULL, LOADER_CACHE, arg) == LOADER_STOP)
		return true;
	/* 5. The system folders, unless the asker has DF_1_NODEFLIB. */
	return !process->listed && !asker->nodeflib && search_list(&process->default_dirs, LOADER_DEFAULT, visit, arg);
}
