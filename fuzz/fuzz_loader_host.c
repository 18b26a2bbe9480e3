/* libFuzzer target: the inspector's reading of the loader's output (inspect/loader_host.c over
   src/loader/machine.c): the input is the text the loader printed for the probe (LD_DEBUG=libs),
   then a search list and an origin, cut at NUL bytes. The facts found become the host's, as
   loader_host_hwcaps makes them, and the list is split and expanded with them as the inspector
   does for RPATH, RUNPATH and LD_LIBRARY_PATH. Promises: elements without trailing slashes (but a
   lone "/"), no more than the separators allow, -1 only when memory runs out. */
#include "fuzz_text.h"
#include "loader_host.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_parts parts;
	fuzz_parts_of(data, size, 3, &parts);
	struct loader_host *host = calloc(1, sizeof(*host));
	if (!host)
		abort();
	/* Known, so that no loader is ever run: the facts come from the text, or there are none. */
	host->hwcaps_knowledge = HWCAPS_KNOWN;
	if (loader_machine_from_debug_output(parts.part[0], parts.length[0], &host->machine)) {
		host->lib = strdup(host->machine.lib);
		host->platform = host->machine.platform_known ? strdup(host->machine.platform) : NULL;
		host->hwcaps_count = loader_machine_hwcaps(&host->machine, host->hwcaps, LOADER_MAX_SUBDIRS);
		if (host->hwcaps_count > LOADER_MAX_SUBDIRS)
			abort();
	}
	const char *list = parts.count > 1 ? parts.part[1] : "", *origin = parts.count > 2 ? parts.part[2] : "/origin";
	static const char *const separators[] = { ":", ":;" };
	for (size_t k = 0; k < 2; k++) {
		char **dirs = NULL;
		int count = loader_host_expand(host, list, separators[k], origin, &dirs);
		if (count < 0)
			abort();
		size_t limit = 1;
		for (const char *s = list; *s; s++)
			limit += strchr(separators[k], *s) != NULL;
		if ((size_t)count > limit)
			abort();
		for (int i = 0; i < count; i++) {
			size_t n = strlen(dirs[i]);
			if (n > 1 && dirs[i][n - 1] == '/')
				abort();
		}
		loader_host_free_dirs(dirs, (size_t)count);
	}
	free(host->lib);
	free(host->platform);
	free(host);
	fuzz_parts_free(&parts);
	return 0;
}
