/* The runtime's own small reader of dynamic sections: libc only, bounded, every offset checked. */
#pragma once

#include <link.h>
#include <stdbool.h>
#include <stddef.h>

struct dynamic_facts {
	const char *soname; /* points into the loaded object; NULL when it has none */
	bool has_rpath;
	bool has_runpath;
	bool nodeflib;      /* DF_1_NODEFLIB: the loader skips ld.so.cache and the default folders */
};

/* Facts of an object in memory, from its program headers (as dl_iterate_phdr reports them). */
bool dynamic_read_loaded(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, struct dynamic_facts *facts);

/* DF_1_NODEFLIB of a loaded object, from its dynamic array (a link map's l_ld). */
bool dynamic_has_nodeflib(const ElfW(Dyn) *dynamic);

/* True when path is a regular file whose ELF header the loader would accept for this process:
   same class, data encoding, version, machine and an OS ABI it takes, and a shared object. Reads
   one header and never blocks (a FIFO or a device is refused). */
bool dynamic_file_is_loadable(const char *path);
