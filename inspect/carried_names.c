#define _GNU_SOURCE
#include "carried_names.h"

#include "file_probe.h"
#include "libnames.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
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

/* The stems to look for: those of the families a library of the row may load at run time. */
struct stems {
	const char *stem[32];
	size_t count;
};

static bool add_stem(int family, bool required, void *arg)
{
	struct stems *stems = arg;
	(void)required;
	if (stems->count < sizeof(stems->stem) / sizeof(stems->stem[0]))
		stems->stem[stems->count++] = libnames[family].linux_stem;
	return false;
}

/* The runs of text that start with a stem: each place the stem is found (memmem, quick over the
   tens of megabytes cuBLASLt holds with a needle of some length) that starts a run, to the run's
   end. */
static void scan(struct family_names *names, const char *bytes, size_t size, const struct stems *stems)
{
	const char *end = bytes + size;
	for (size_t s = 0; s < stems->count; s++) {
		size_t length = strlen(stems->stem[s]);
		for (const char *at = bytes; at < end && (at = memmem(at, (size_t)(end - at), stems->stem[s], length)); at += length) {
			if (at > bytes && is_text((unsigned char)at[-1]))
				continue;
			const char *stop = at;
			while (stop < end && is_text((unsigned char)*stop))
				stop++;
			add_run(names, at, (size_t)(stop - at));
		}
	}
}

/* Where a compiler puts string literals: .rodata (and .rodata.str1.1 and the like), .lrodata in
   the large code model. The rest of a big library's read-only data (unwind tables, the GPU code)
   holds no names, and is a hundred megabytes in cuBLASLt. */
static bool holds_text(const GElf_Shdr *header, const char *name)
{
	return header->sh_type == SHT_PROGBITS && (header->sh_flags & SHF_ALLOC) && !(header->sh_flags & (SHF_WRITE | SHF_EXECINSTR)) &&
	       name && (strncmp(name, ".rodata", 7) == 0 || strncmp(name, ".lrodata", 8) == 0);
}

/* The names carried_names_of gives, read from the file; false when it cannot be read. */
static bool read_names(const char *path, int family, struct family_names *names)
{
	bool read = false;
	size_t strings_index;
	struct stems stems = { .count = 0 };
	libnames_foreach_dependent(family >= 0 ? libnames[family].runtime : "", add_stem, &stems);
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
			scan(names, data->d_buf, data->d_size, &stems);
	}
	elf_end(elf);
out:
	if (fd >= 0)
		close(fd);
	return read;
}

/* An entry of the map: the names, and whether they could be read. */
struct carried {
	struct family_names names;
	bool known;
};

void carried_names_free(void *entry)
{
	struct carried *carried = entry;
	family_names_free(&carried->names);
	free(carried);
}

const struct family_names *carried_names_of(struct file_probe *probe, const char *path, int family)
{
	struct carried *carried = string_map_get(&probe->carried, path);
	if (!carried) {
		if (!(carried = calloc(1, sizeof(*carried))))
			return NULL;
		carried->known = read_names(path, family, &carried->names);
		if (!string_map_put(&probe->carried, path, carried)) {
			carried_names_free(carried);
			return NULL;
		}
	}
	return carried->known ? &carried->names : NULL;
}
