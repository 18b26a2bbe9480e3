/* Seeds for the fuzzers: for each source file, the broken-ELF corpus of tests/elf_corpus.c in its
   own folder under OUT. A source over the fuzzers' input limit is first reduced to its compact copy
   (headers, dynamic section, strings), so its variants are whole inputs and not cut tails.
   Usage: make_seeds OUT SOURCE... */
#include "elf_corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* fuzz/run.sh's -max_len. */
#define MAX_INPUT (128 * 1024)

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT SOURCE...\n", argv[0]);
		return 2;
	}
	size_t total = 0;
	for (int i = 2; i < argc; i++) {
		const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		char folder[4096];
		snprintf(folder, sizeof(folder), "%s/%03d-%s", argv[1], i - 1, base);
		if (mkdir(folder, 0755) != 0) {
			perror(folder);
			return 1;
		}
		const char *source = argv[i];
		char compact[4200];
		struct stat st;
		if (stat(source, &st) == 0 && st.st_size > MAX_INPUT) {
			snprintf(compact, sizeof(compact), "%s/compact-source", folder);
			if (elf_corpus_write_compact(source, compact) == 0)
				source = compact;
		}
		struct elf_corpus_file *files = NULL;
		size_t count = elf_corpus_write(source, folder, &files);
		if (count == 0)
			fprintf(stderr, "make_seeds: no seeds from %s\n", argv[i]);
		total += count;
		elf_corpus_free(files, count);
	}
	printf("%zu seed files in %s\n", total, argv[1]);
	return total > 0 ? 0 : 1;
}
