/* libFuzzer target: the runtime's own reader (src/linux/dynamic_file.c) against the libelf reader
   on arbitrary files. The runtime's reader must never crash, hang or read out of bounds, and where
   the libelf reader reads a file of this process's class and byte order it must give the same
   facts, whether the loader can map it whole among them (or say the file is past its bounds); where
   libelf refuses a file, so must it. A disagreement aborts, so the fuzzer keeps the input. */
#include "elf/elf_reader.h"
#include "fuzz_file.h"
#include "linux/dynamic.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dynamic_file ours;
	const char *path = fuzz_file_of(data, size);
	int error = dynamic_read_file(path, &ours);
	(void)dynamic_file_is_loadable(path);
	struct elf_facts oracle;
	char message[256];
	enum elf_reader_error oracle_error = elf_read_facts(path, &oracle, message, sizeof(message));
	bool own_class = oracle.elf_class == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
			 oracle.data == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
	if (error == 0 && ours.needed_count > DYNAMIC_MAX_NEEDED)
		abort();
	if (oracle_error == ELF_READER_OK && own_class) {
		if (error != 0 && error != -E2BIG)
			abort();
		if (error == 0) {
			if (ours.has_dynamic != oracle.has_dynamic || ours.whole != oracle.whole || ours.nodeflib != oracle.nodeflib ||
			    !same(ours.interp, oracle.interp) ||
			    !same(ours.soname, oracle.soname) || !same(ours.rpath, oracle.rpath) || !same(ours.runpath, oracle.runpath) ||
			    ours.needed_count != oracle.needed_count)
				abort();
			for (size_t i = 0; i < ours.needed_count; i++)
				if (!same(ours.needed[i], oracle.needed[i]))
					abort();
		}
	} else if (oracle_error != ELF_READER_OK && error == 0) {
		abort();
	}
	if (oracle_error == ELF_READER_OK)
		elf_facts_free(&oracle);
	return 0;
}
