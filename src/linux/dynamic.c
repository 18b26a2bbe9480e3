/* A small, bounded reader of dynamic sections. It runs inside host processes, often where the
   loader holds its locks, so it allocates nothing and trusts no offset it has not checked. */
#include "dynamic.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* More entries than any real dynamic section holds: a bound for a missing DT_NULL. */
#define DYNAMIC_MAX_ENTRIES 4096

static bool inside_load_segment(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, ElfW(Addr) start, size_t length)
{
	for (size_t i = 0; i < phnum; i++) {
		if (phdr[i].p_type != PT_LOAD)
			continue;
		ElfW(Addr) begin = base + phdr[i].p_vaddr;
		ElfW(Addr) end = begin + phdr[i].p_memsz;
		if (start >= begin && start <= end && length <= end - start)
			return true;
	}
	return false;
}

bool dynamic_read_loaded(ElfW(Addr) base, const ElfW(Phdr) *phdr, size_t phnum, struct dynamic_facts *facts)
{
	memset(facts, 0, sizeof(*facts));
	const ElfW(Dyn) *dynamic = NULL;
	size_t entries = 0;
	for (size_t i = 0; phdr && i < phnum; i++)
		if (phdr[i].p_type == PT_DYNAMIC) {
			dynamic = (const ElfW(Dyn) *)(base + phdr[i].p_vaddr);
			entries = phdr[i].p_memsz / sizeof(ElfW(Dyn));
		}
	if (!dynamic)
		return false;
	if (entries > DYNAMIC_MAX_ENTRIES)
		entries = DYNAMIC_MAX_ENTRIES;

	ElfW(Addr) strtab = 0;
	size_t strsz = 0, soname = (size_t)-1;
	for (size_t i = 0; i < entries && dynamic[i].d_tag != DT_NULL; i++) {
		switch (dynamic[i].d_tag) {
		case DT_STRTAB: strtab = dynamic[i].d_un.d_ptr; break;
		case DT_STRSZ: strsz = dynamic[i].d_un.d_val; break;
		case DT_SONAME: soname = dynamic[i].d_un.d_val; break;
		case DT_RPATH: facts->has_rpath = true; break;
		case DT_RUNPATH: facts->has_runpath = true; break;
		case DT_FLAGS_1: facts->nodeflib = (dynamic[i].d_un.d_val & DF_1_NODEFLIB) != 0; break;
		}
	}
	/* glibc relocates DT_STRTAB in place where the dynamic section is writable (x86-64, aarch64),
	   not where it is read-only (the vDSO, RISC-V, MIPS): an address below the load base is still
	   an offset from it. */
	if (strtab && strtab < base)
		strtab += base;
	if (soname != (size_t)-1 && strtab && soname < strsz && inside_load_segment(base, phdr, phnum, strtab, strsz) &&
	    memchr((const char *)strtab + soname, '\0', strsz - soname))
		facts->soname = (const char *)strtab + soname;
	return true;
}

bool dynamic_has_nodeflib(const ElfW(Dyn) *dynamic)
{
	for (size_t i = 0; dynamic && i < DYNAMIC_MAX_ENTRIES && dynamic[i].d_tag != DT_NULL; i++)
		if (dynamic[i].d_tag == DT_FLAGS_1)
			return (dynamic[i].d_un.d_val & DF_1_NODEFLIB) != 0;
	return false;
}

/* The header of the running process's own objects: what a candidate must agree with. */
static const ElfW(Ehdr) *own_header(void)
{
	extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
	return &__ehdr_start;
}

bool dynamic_file_is_loadable(const char *path)
{
	ElfW(Ehdr) header;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, &header, sizeof(header), 0) == (ssize_t)sizeof(header);
	close(fd);
	if (!ok)
		return false;
	const ElfW(Ehdr) *own = own_header();
	return memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 && header.e_ident[EI_CLASS] == own->e_ident[EI_CLASS] &&
	       header.e_ident[EI_DATA] == own->e_ident[EI_DATA] && header.e_ident[EI_VERSION] == EV_CURRENT &&
	       (header.e_ident[EI_OSABI] == ELFOSABI_SYSV || header.e_ident[EI_OSABI] == ELFOSABI_GNU) &&
	       header.e_machine == own->e_machine && header.e_type == ET_DYN &&
	       header.e_phentsize == sizeof(ElfW(Phdr));
}
