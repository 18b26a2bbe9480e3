/* The loader's facts about this process. Each is asked of the loader (dlinfo, dladdr1, an
   RTLD_NOLOAD dlopen) or read where the loader reads it (ld.so.cache, /proc/self/cmdline), never
   assumed. */
#define _GNU_SOURCE
#include "loader_facts.h"

#include "dynamic.h"
#include "loader/dst.h"
#include "loader/ld_cache.h"
#include "real.h"
#include "start.h"
#include "walk.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

struct loader_facts_list {
	struct loader_list list;
	Dl_serinfo *info; /* what list points into */
};

void loader_facts_free_list(struct loader_facts_list *listed)
{
	if (!listed)
		return;
	free((void *)listed->list.dirs);
	free(listed->info);
	free(listed);
}

struct loader_facts_list *loader_facts_search_list(struct link_map *object)
{
	Dl_serinfo size;
	struct loader_facts_list *listed = calloc(1, sizeof(*listed));
	if (!listed || real_dlinfo(object, RTLD_DI_SERINFOSIZE, &size) != 0)
		goto fail;
	/* An empty list (an object with NODEFLIB and no list of its own, no LD_LIBRARY_PATH) has a
	   size smaller than Dl_serinfo itself, which declares one entry. */
	Dl_serinfo *info = malloc(size.dls_size > sizeof(Dl_serinfo) ? size.dls_size : sizeof(Dl_serinfo));
	const char **dirs = calloc(size.dls_cnt ? size.dls_cnt : 1, sizeof(*dirs));
	listed->info = info;
	listed->list.dirs = dirs;
	if (!info || !dirs)
		goto fail;
	info->dls_size = size.dls_size;
	info->dls_cnt = size.dls_cnt;
	if (real_dlinfo(object, RTLD_DI_SERINFO, info) != 0)
		goto fail;
	for (unsigned i = 0; i < info->dls_cnt && i < size.dls_cnt; i++)
		dirs[listed->list.count++] = info->dls_serpath[i].dls_name;
	return listed;
fail:
	loader_facts_free_list(listed);
	return NULL;
}

const struct loader_list *loader_facts_list_of(const struct loader_facts_list *list) { return &list->list; }

struct link_map *loader_facts_object_at(const void *address)
{
	Dl_info info;
	struct link_map *object = NULL;
	if (address && real_dladdr1(address, &info, (void **)&object, RTLD_DL_LINKMAP) && object)
		return object;
	return _r_debug.r_map;
}

/* ---- the machine ----
   $PLATFORM and $LIB come from the runtime's own search list. Its RUNPATH starts with
   LOADER_PROBE_PATH, which the loader lists expanded. Whether this glibc may search legacy hwcap
   subfolders (before 2.37) comes from the running libc's version. */
static struct loader_machine machine;
static struct walk_once machine_once = WALK_ONCE_INIT;

/* ld.so run as a command, with --inhibit-cache among its options. The kernel then maps no
   interpreter (AT_BASE is 0), and /proc/self/cmdline still holds the loader's options ahead of
   the program's own arguments. */
static bool started_with_inhibit_cache(void)
{
	char text[4096];
	if (getauxval(AT_BASE) != 0)
		return false;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	/* The loader's options come before the program. Those that take a value skip it. */
	static const char *const with_value[] = { "--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0",
						  "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask" };
	for (const char *arg = text + strlen(text) + 1; arg < text + n && strncmp(arg, "--", 2) == 0; arg += strlen(arg) + 1) {
		if (strcmp(arg, "--inhibit-cache") == 0)
			return true;
		for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
			if (strcmp(arg, with_value[i]) == 0 && arg + strlen(arg) + 1 < text + n)
				arg += strlen(arg) + 1;
	}
	return false;
}

static void learn_machine(void)
{
	struct loader_facts_list *own = loader_facts_search_list(loader_facts_object_at((const void *)learn_machine));
	for (size_t i = 0; own && i < own->list.count; i++)
		if (loader_machine_from_element(own->list.dirs[i], &machine))
			break;
	loader_facts_free_list(own);
	machine.legacy_possible = !start_glibc_at_least(2, 37);
	machine.cache_inhibited = started_with_inhibit_cache();
}

const struct loader_machine *loader_facts_machine(void)
{
	walk_once(&machine_once, learn_machine);
	return &machine;
}

bool loader_facts_runtime_element(const char *folder)
{
	struct loader_machine probe;
	return strcmp(folder, LOADER_PROBE_KEEPER) == 0 || loader_machine_from_element(folder, &probe);
}

bool loader_facts_expand(const char *list, const char *origin, char ***elements, int *count)
{
	const struct loader_machine *facts = loader_facts_machine();
	*elements = NULL;
	*count = 0;
	if (!list)
		return true;
	if (!facts->tokens_known && (dst_uses_token(list, "LIB") || dst_uses_token(list, "PLATFORM")))
		return false;
	const char *lib = facts->tokens_known ? facts->lib : NULL;
	const char *platform = facts->platform_known ? facts->platform : NULL;
	int n = dst_expand_search_path(list, origin, lib, platform, NULL, 0);
	if (n < 0 || !(*elements = calloc((size_t)n + 1, sizeof(char *))))
		return false;
	*count = dst_expand_search_path(list, origin, lib, platform, *elements, (size_t)n);
	return *count == n;
}

/* ---- the process's lists ----
   The loader lists them only inside an object's whole search (dlinfo RTLD_DI_SERINFO, no mark
   between the parts), so they are read off two such lists. The runtime's own list holds
   LD_LIBRARY_PATH, then its RUNPATH, then the system folders. Its RUNPATH is the probe element,
   which marks where LD_LIBRARY_PATH ends, and LOADER_PROBE_KEEPER. The program's list holds its
   RPATH, LD_LIBRARY_PATH, its RUNPATH and the system folders (unless it has NODEFLIB). The
   program's RPATH is what that list holds before the parts the runtime's list shows. */
struct loader_facts_process {
	struct loader_facts_list *own, *program;
	struct loader_object program_model;
	struct loader_process process;
};

static bool same_dirs(const struct loader_list *list, size_t at, const char *const *dirs, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (at + i >= list->count || strcmp(list->dirs[at + i], dirs[i]) != 0)
			return false;
	return true;
}

/* LD_LIBRARY_PATH and the system folders, from the runtime's own list. */
static bool read_own_parts(struct loader_facts_process *lists)
{
	const struct loader_list *own = &lists->own->list;
	struct loader_machine scratch = { 0 };
	size_t probe = 0;
	while (probe < own->count && !loader_machine_from_element(own->dirs[probe], &scratch))
		probe++;
	if (probe == own->count)
		return false;
	size_t first_default = probe + 1;
	if (first_default < own->count && strcmp(own->dirs[first_default], LOADER_PROBE_KEEPER) == 0)
		first_default++;
	lists->process = (struct loader_process){
		.program = &lists->program_model,
		.library_path = { own->dirs, probe },
		.default_dirs = { own->dirs + first_default, own->count - first_default },
	};
	return true;
}

/* The program's RPATH: its list without the parts the runtime's list shows. */
static bool read_program_rpath(struct loader_facts_process *lists, struct link_map *program)
{
	lists->program_model = (struct loader_object){ .has_runpath = dynamic_has_runpath(program->l_ld) };
	if (lists->program_model.has_runpath)
		return true;
	const struct loader_list *listed = &lists->program->list;
	size_t end = listed->count;
	const struct loader_list *defaults = &lists->process.default_dirs, *library_path = &lists->process.library_path;
	if (!dynamic_has_nodeflib(program->l_ld)) {
		if (end < defaults->count || !same_dirs(listed, end - defaults->count, defaults->dirs, defaults->count))
			return false;
		end -= defaults->count;
	}
	if (end < library_path->count || !same_dirs(listed, end - library_path->count, library_path->dirs, library_path->count))
		return false;
	end -= library_path->count;
	lists->program_model.rpath = (struct loader_list){ listed->dirs, end };
	return true;
}

struct loader_facts_process *loader_facts_process_lists(void)
{
	struct link_map *program = _r_debug.r_map;
	struct loader_facts_process *lists = calloc(1, sizeof(*lists));
	if (!lists || !program)
		goto fail;
	lists->own = loader_facts_search_list(loader_facts_object_at((const void *)loader_facts_process_lists));
	lists->program = loader_facts_search_list(program);
	if (lists->own && lists->program && read_own_parts(lists) && read_program_rpath(lists, program))
		return lists;
fail:
	loader_facts_free_process(lists);
	return NULL;
}

const struct loader_process *loader_facts_process_of(const struct loader_facts_process *lists) { return &lists->process; }

void loader_facts_free_process(struct loader_facts_process *lists)
{
	if (!lists)
		return;
	loader_facts_free_list(lists->own);
	loader_facts_free_list(lists->program);
	free(lists);
}

/* ---- the loader's answers ---- */

bool loader_facts_finds_by_name(const char *name)
{
	/* A file it finds gives NULL with no error; one it finds nowhere leaves an error. */
	real_dlerror();
	void *handle = real_dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	if (handle) {
		real_dlclose(handle);
		return true;
	}
	return real_dlerror() == NULL;
}

bool loader_facts_loaded_by_name(const char *name)
{
	void *handle = real_dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	if (handle)
		real_dlclose(handle);
	return handle != NULL;
}

bool loader_facts_cache_entry(const char *name, char *path, size_t size)
{
	struct ld_cache cache;
	char message[256];
	struct ld_cache_entry entries[8];
	bool found = false;
	if (loader_facts_machine()->cache_inhibited || ld_cache_read("/etc/ld.so.cache", &cache, message, sizeof(message)) != 0)
		return false;
	size_t n = ld_cache_lookup(&cache, name, entries, sizeof(entries) / sizeof(entries[0]));
	if (n > 0 && strlen(entries[0].path) < size) {
		strcpy(path, entries[0].path);
		found = true;
	}
	ld_cache_free(&cache);
	return found;
}
