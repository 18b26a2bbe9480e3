/* Mixed origins: an NVIDIA library that gets an NVIDIA dependency from another installation than its
   own (a wheel's cusparse with a system nvJitLink), the cause of "undefined symbol ..., version
   libnvJitLink.so.12" and of cuDNN's sub-library version mismatches. */
#pragma once

#include "file_probe.h"
#include "tree.h"

/* Adds a warning to the tree for each such dependency, naming the copy its own installation holds. */
void mixed_origin_check(struct tree *tree, struct file_probe *probe);

/* The installation a folder belongs to, by its real path: for a wheel folder
   (site-packages/nvidia/PKG/lib, the CUDA 13 wheels' nvidia/cu13/lib included) the nvidia folder
   holding all its components, else the folder itself. Malloc'd. */
char *mixed_origin_installation(const char *folder);
