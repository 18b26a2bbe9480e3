/* The NVIDIA library names a file carries in its read-only data, as `strings` shows them: the
   names it can dlopen by name once it runs (libnvrtc.so.13 in cuBLASLt 13, libnvrtc.so in cuBLASLt
   11, libnvrtc-builtins.so.13.0 in NVRTC 13; nothing of nvJitLink in Debian's cuFFT 10). The
   table says which families a library may load at run time; the file says which it does, by what
   name. */
#pragma once

#include "family_files.h"

#include <stdbool.h>

struct file_probe;
/* The names (each run of printable characters, as strings(1) cuts them, that starts with the stem
   of a family the table says a library of family may load at run time, and that the table
   recognizes as an NVIDIA library's file name) in the sections of the ELF file at path where
   string literals lie (.rodata, .lrodata), each name once; read once a run for each path (a tree
   of cuSOLVER and one of cuBLAS both hold cuBLASLt, whose read-only data is tens of megabytes).
   NULL when the file or its section headers cannot be read: then nothing is known. */
const struct family_names *carried_names_of(struct file_probe *probe, const char *path, int family);
/* Frees an entry of the probe's map. */
void carried_names_free(void *entry);
