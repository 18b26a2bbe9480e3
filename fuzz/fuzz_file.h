/* The fuzzers' input as a file: the readers under test take a path, so each input is written to a
   memory-backed file (memfd: a regular file that needs no disk) named by /proc/self/fd/N. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The path of a file holding exactly data; valid until the next call. Aborts when the file cannot
   be made: a fuzzer that silently tests nothing is worse than one that stops. */
const char *fuzz_file_of(const uint8_t *data, size_t size);
