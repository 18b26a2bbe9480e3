/* Import address tables of loaded modules: the slots through which a module calls its imports. */
#pragma once

#include "hooks.h"

/* In the module mapped at base, replaces every import slot (the import table and the delay-load
   table) that holds one of the hooks' real functions with the hook. Returns how many slots it
   replaced. Slots are found by the address they hold, not by the name imported, so a module that
   imports through kernel32, kernelbase or an API set is patched alike; a module loaded with
   DONT_RESOLVE_DLL_REFERENCES holds no resolved slot and is left as it is. Slots whose page cannot
   be made writable (Arbitrary Code Guard, a read-only view) are reported through the log, an error
   the first time in a process and a warning after. */
int import_table_patch(void *base, const struct hook *hooks, size_t hook_count);
