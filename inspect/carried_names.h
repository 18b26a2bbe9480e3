/* The NVIDIA library names a file carries in its read-only data, as `strings` shows them: the
   names it can dlopen by name once it runs (libnvrtc.so.13 in cuBLASLt 13, libnvrtc.so in cuBLASLt
   11, libnvrtc-builtins.so.13.0 in NVRTC 13; nothing of nvJitLink in Debian's cuFFT 10). The
   table says which families a library may load at run time; the file says which it does, by what
   name. */
#pragma once

#include "family_files.h"

#include <stdbool.h>

/* Reads the names (each a run of printable characters that the table recognizes as an NVIDIA
   library's file name) from the allocated, read-only, non-executable sections of the ELF file at
   path, the GPU code (.nv_fatbin) left out. Each name once, in the order met. False when the file
   or its section headers cannot be read: then nothing is known. */
bool carried_names_read(const char *path, struct family_names *names);
