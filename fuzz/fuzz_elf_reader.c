/* libFuzzer target: the libelf reader (src/elf/elf_reader.c) on arbitrary files. Beyond what the
   sanitizers catch, an answer must keep the reader's own promises: an error comes with a one-line
   message and empty facts; facts come within their bounds. Every search path read is also expanded,
   which takes the runtime's expansion (src/dst.c) through strings no test thought of. */
#include "elf/elf_reader.h"
#include "fuzz_file.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expand(const char *list)
{
	char *elements[32];
	int count = elf_expand_search_path(list, "/origin", "lib64", NULL, elements, 32);
	if (count < 0)
		abort();
	for (int i = 0; i < count && i < 32; i++)
		free(elements[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_facts facts;
	char message[256];
	enum elf_reader_error error = elf_read_facts(fuzz_file_of(data, size), &facts, message, sizeof(message));
	if (error != ELF_READER_OK) {
		if (error > ELF_READER_UNSUPPORTED || !message[0] || strchr(message, '\n') || facts.soname ||
		    facts.needed_count || facts.has_dynamic)
			abort();
		return 0;
	}
	if (facts.needed_count > ELF_READER_MAX_NEEDED)
		abort();
	for (size_t i = 0; i < facts.needed_count; i++)
		if (!facts.needed[i])
			abort();
	if (!facts.has_dynamic && (facts.soname || facts.rpath || facts.runpath || facts.needed_count))
		abort();
	if (facts.rpath)
		expand(facts.rpath);
	if (facts.runpath)
		expand(facts.runpath);
	struct elf_host host = elf_host_of_this_process();
	(void)elf_is_compatible(&facts, &host);
	elf_facts_free(&facts);
	return 0;
}
