#include "real.h"

#include "dynamic.h"
#include "libnames.h"
#include "walk.h"

#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

/* Weak (glibc_compat.h gives their versions): NULL where nothing in the global scope defined them
   when the runtime was loaded. Only this file refers to them, so no other reference makes them
   strong. */
#pragma weak dlsym
#pragma weak dlerror
#pragma weak dlclose
#pragma weak dlinfo
#pragma weak dladdr1

void *(*real_dlopen)(const char *file, int mode);
void *(*real_dlmopen)(Lmid_t namespace, const char *file, int mode);

struct loader_functions {
	void *(*dlsym)(void *handle, const char *name);
	char *(*dlerror)(void);
	int (*dlclose)(void *handle);
	int (*dlinfo)(void *handle, int request, void *arg);
	int (*dladdr1)(const void *address, Dl_info *info, void **extra, int flags);
	void *(*dlopen)(const char *file, int mode);
	void *(*dlmopen)(Lmid_t namespace, const char *file, int mode);
};

/* Filled once, by whichever thread gets there first; ready says it is whole. */
static struct loader_functions functions;
static _Atomic bool ready;

/* Before glibc 2.34: libdl.so.2's own definitions, read from its dynamic symbols. */
static int find_in_libdl(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loader_functions *found = arg;
	struct dynamic_tables tables;
	(void)size;
	if (!info->dlpi_name || strcmp(libnames_basename(info->dlpi_name), "libdl.so.2") != 0 ||
	    !dynamic_read_tables(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &tables))
		return 0;
	found->dlsym = (void *(*)(void *, const char *))dynamic_defined_function(&tables, "dlsym");
	found->dlerror = (char *(*)(void))dynamic_defined_function(&tables, "dlerror");
	found->dlclose = (int (*)(void *))dynamic_defined_function(&tables, "dlclose");
	found->dlinfo = (int (*)(void *, int, void *))dynamic_defined_function(&tables, "dlinfo");
	found->dladdr1 = (int (*)(const void *, Dl_info *, void **, int))dynamic_defined_function(&tables, "dladdr1");
	found->dlopen = (void *(*)(const char *, int))dynamic_defined_function(&tables, "dlopen");
	found->dlmopen = (void *(*)(Lmid_t, const char *, int))dynamic_defined_function(&tables, "dlmopen");
	return 1;
}

static bool resolve(void)
{
	if (atomic_load_explicit(&ready, memory_order_acquire))
		return true;
	struct loader_functions found = { 0 };
	if (dlsym) {
		found = (struct loader_functions){ dlsym, dlerror, dlclose, dlinfo, dladdr1, NULL, NULL };
		/* RTLD_NEXT: the definitions after the runtime, not the hooks (the caller is this file). */
		found.dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
		found.dlmopen = (void *(*)(Lmid_t, const char *, int))dlsym(RTLD_NEXT, "dlmopen");
	}
	/* Before 2.34 a runtime dlopen'ed late has no libdl in its own scope, where RTLD_NEXT looks,
	   and one preloaded may load before libdl: libdl's own definitions, wherever it is. */
	if (!found.dlopen || !found.dlmopen)
		walk_loaded_objects(find_in_libdl, &found);
	if (!found.dlsym || !found.dlerror || !found.dlclose || !found.dlinfo || !found.dladdr1 || !found.dlopen || !found.dlmopen)
		return false;
	/* Each field is written whole with the same value by every thread that gets here. */
	functions = found;
	atomic_store_explicit(&ready, true, memory_order_release);
	return true;
}

void real_resolve(void)
{
	if (!real_dlopen && resolve()) {
		real_dlmopen = functions.dlmopen;
		real_dlopen = functions.dlopen;
	}
}

void *real_dlsym(void *handle, const char *name) { return resolve() ? functions.dlsym(handle, name) : NULL; }

char *real_dlerror(void) { return resolve() ? functions.dlerror() : NULL; }

int real_dlclose(void *handle) { return resolve() ? functions.dlclose(handle) : -1; }

int real_dlinfo(void *handle, int request, void *arg) { return resolve() ? functions.dlinfo(handle, request, arg) : -1; }

int real_dladdr1(const void *address, Dl_info *info, void **extra, int flags)
{
	return resolve() ? functions.dladdr1(address, info, extra, flags) : 0;
}
