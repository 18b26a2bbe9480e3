/* Mixed origins: an NVIDIA library that gets an NVIDIA dependency from another installation than its
   own (a wheel's cusparse with a system nvJitLink), the cause of "undefined symbol ..., version
   libnvJitLink.so.12" and of cuDNN's sub-library version mismatches. */
#pragma once

#include "file_probe.h"
#include "tree.h"

/* Adds a warning to the tree for each such dependency, naming the copy its own installation holds. */
void mixed_origin_check(struct tree *tree, struct file_probe *probe);
