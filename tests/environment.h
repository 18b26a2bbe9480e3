/* The environment every test process, and every child a test starts, begins from. An allow-list:
   what the test runner sets on purpose passes, and nothing else of the shell that started the run
   (no LD_*, NVINTERPOSE_*, CUDA_HOME, CUDA_PATH, conda or virtualenv, PYTHON*, PIP_*, PYTEST_*, CC or
   CFLAGS, locale, TMPDIR, XDG_*, GLIBC_TUNABLES, QEMU_*, WINE*, NO_COLOR, nor a variable nobody has
   thought of yet). The default test setup runs every test through tests/clean_env.c, which builds
   the test's environment here; tests/common.c builds each child's here. Used outside Check too. */
#pragma once

#include <stdbool.h>

/* Which kept variables a caller wants: the test process's own, or a child's (which needs neither
   the build's NVI_* settings nor Check's CK_* ones). */
enum test_environment_for { TEST_ENVIRONMENT_TEST, TEST_ENVIRONMENT_CHILD };

/* True when the entry ("NAME=VALUE") is one the tests keep from the environment they got. */
bool test_environment_keeps(const char *entry, enum test_environment_for who);

/* A new NULL-terminated environment (malloc'd; the strings are the caller's or from): the entries
   of from that are kept for who, then those of extra ("NAME=VALUE", NULL-terminated; may be NULL),
   an entry of extra replacing one of the same name, "NAME=" leaving NAME out. NULL when out of
   memory. */
char **test_environment_build(char *const *from, enum test_environment_for who, const char *const *extra);
