#include "carried_names.h"

#include "libnames.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

/* strings(1)'s idea of a character of text, and its shortest run. */
static bool is_text(unsigned char c) { return (c >= 0x20 && c < 0x7f) || c == '\t'; }
#define SHORTEST_RUN 4

static bool carried_already(const struct family_names *names, const char *name)
{
	for (size_t i = 0; i < names->count; i++)
		if (strcmp(names->names[i], name) == 0)
			return true;
	return false;
}

static void add_run(struct family_names *names, const char *run, size_t length)
{
	char name[256];
	if (length < SHORTEST_RUN || length >= sizeof(name) || strncmp(run, "lib", 3) != 0)
		return;
	memcpy(name, run, length);
	name[length] = '\0';
	int family = libnames_match_linux(name, NULL);
	if (family >= 0 && !carried_already(names, name))
		family_names_add(names, name, family);
}

static void scan(struct family_names *names, const char *bytes, size_t size)
{
	size_t start = 0;
	for (size_t i = 0; i <= size; i++)
		if (i == size || !is_text((unsigned char)bytes[i])) {
			add_run(names, bytes + start, i - start);
			start = i + 1;
		}
}

/* Read-only data a person's strings(1) would show: allocated, neither written nor run, and not
   the GPU code. */
static bool holds_text(const GElf_Shdr *header, const char *name)
{
	return header->sh_type == SHT_PROGBITS && (header->sh_flags & SHF_ALLOC) && !(header->sh_flags & (SHF_WRITE | SHF_EXECINSTR)) &&
	       (!name || strncmp(name, ".nv", 3) != 0);
}

bool carried_names_read(const char *path, struct family_names *names)
{
	bool read = false;
	size_t strings_index;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		goto out;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &strings_index) != 0) {
		elf_end(elf);
		goto out;
	}
	for (Elf_Scn *section = NULL; (section = elf_nextscn(elf, section));) {
		GElf_Shdr header;
		if (!gelf_getshdr(section, &header))
			continue;
		read = true;
		if (!holds_text(&header, elf_strptr(elf, strings_index, header.sh_name)))
			continue;
		Elf_Data *data = elf_rawdata(section, NULL);
		if (data && data->d_buf)
			scan(names, data->d_buf, data->d_size);
	}
	elf_end(elf);
out:
	if (fd >= 0)
		close(fd);
	return read;
}
