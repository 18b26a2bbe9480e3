/* libFuzzer target: the loader machine-facts parser (src/loader/machine.c), on arbitrary text as
   the loader's LD_DEBUG=libs output (given by length, not terminated) and as one expanded element.
   Promises: true only with the facts the text held, bounded and terminated, the folder itself last
   among the subfolders and $PLATFORM one folder name; false leaves the machine as it was. */
#include "fuzz_text.h"
#include "loader/machine.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct loader_machine *machine)
{
	if (!memchr(machine->platform, '\0', LOADER_FACT_MAX) || !memchr(machine->lib, '\0', LOADER_FACT_MAX) ||
	    strchr(machine->platform, '/') || machine->subdir_count > LOADER_MAX_SUBDIRS)
		abort();
	for (size_t i = 0; i < machine->subdir_count; i++)
		if (!memchr(machine->subdirs[i], '\0', LOADER_FACT_MAX))
			abort();
	const char *names[LOADER_MAX_SUBDIRS];
	size_t hwcaps = loader_machine_hwcaps(machine, names, LOADER_MAX_SUBDIRS);
	for (size_t i = 0; i < hwcaps && i < LOADER_MAX_SUBDIRS; i++)
		if (strchr(names[i], '/'))
			abort();
	size_t legacy = loader_machine_legacy_names(machine, names, LOADER_MAX_SUBDIRS);
	if (legacy > LOADER_MAX_SUBDIRS)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct loader_machine machine, before;
	memset(&machine, 0x5a, sizeof(machine)); /* what false must leave alone */
	before = machine;
	char *text = fuzz_bytes(data, size);
	if (loader_machine_from_debug_output(text, size, &machine)) {
		if (!machine.subdirs_known || !machine.tokens_known || machine.subdir_count == 0 ||
		    machine.subdirs[machine.subdir_count - 1][0] != '\0')
			abort();
		check(&machine);
	} else if (memcmp(&machine, &before, sizeof(machine)) != 0) {
		abort();
	}
	free(text);
	struct fuzz_parts parts;
	fuzz_parts_of(data, size, 1, &parts);
	memset(&machine, 0, sizeof(machine));
	if (loader_machine_from_element(parts.part[0], &machine)) {
		if (!machine.tokens_known || !machine.platform_known)
			abort();
		check(&machine);
	}
	fuzz_parts_free(&parts);
	return 0;
}
