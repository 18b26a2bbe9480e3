#include "model_templates.h"

#include "common.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A tag in the OS-specific range that neither glibc nor any reader here gives a meaning. */
#define MODEL_IGNORED_TAG (DT_LOOS + 0x100)

/* Placeholders: distinct first letters, so that no linker merges one into another's tail. */
static char *placeholder(char letter, size_t length)
{
	char *s = malloc(length + 1);
	ck_assert_ptr_nonnull(s);
	memset(s, letter, length);
	memcpy(s, "model-slot-", 11);
	s[11] = letter;
	s[length] = '\0';
	return s;
}

static const char soname_letter = 'S';
static const char slot_letters[MODEL_SLOTS] = { 'A', 'B', 'C' };

/* The file offset of a virtual address, through the PT_LOAD that holds it. */
static long file_offset(const unsigned char *bytes, Elf64_Addr address)
{
	const Elf64_Ehdr *header = (const Elf64_Ehdr *)bytes;
	const Elf64_Phdr *phdrs = (const Elf64_Phdr *)(bytes + header->e_phoff);
	for (int i = 0; i < header->e_phnum; i++)
		if (phdrs[i].p_type == PT_LOAD && address >= phdrs[i].p_vaddr && address < phdrs[i].p_vaddr + phdrs[i].p_filesz)
			return (long)(address - phdrs[i].p_vaddr + phdrs[i].p_offset);
	return -1;
}

static void find_fields(struct model_template *t)
{
	const Elf64_Ehdr *header = (const Elf64_Ehdr *)t->bytes;
	ck_assert_msg(t->size > sizeof(*header) && memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 && header->e_ident[EI_CLASS] == ELFCLASS64,
		      "the model templates are written for 64-bit ELF");
	const Elf64_Phdr *phdrs = (const Elf64_Phdr *)(t->bytes + header->e_phoff);
	long dynamic = -1;
	size_t count = 0;
	for (int i = 0; i < header->e_phnum; i++)
		if (phdrs[i].p_type == PT_DYNAMIC) {
			dynamic = (long)phdrs[i].p_offset;
			count = phdrs[i].p_filesz / sizeof(Elf64_Dyn);
		}
	ck_assert_int_ge(dynamic, 0);
	const Elf64_Dyn *entries = (const Elf64_Dyn *)(t->bytes + dynamic);
	long strtab = -1;
	for (size_t i = 0; i < count && entries[i].d_tag != DT_NULL; i++)
		if (entries[i].d_tag == DT_STRTAB)
			strtab = file_offset(t->bytes, entries[i].d_un.d_ptr);
	ck_assert_int_ge(strtab, 0);
	t->soname_entry = t->soname_string = t->flags_1_entry = -1;
	for (int k = 0; k < MODEL_SLOTS; k++)
		t->slot_entry[k] = t->slot_string[k] = -1;
	for (size_t i = 0; i < count && entries[i].d_tag != DT_NULL; i++) {
		long entry = dynamic + (long)(i * sizeof(Elf64_Dyn));
		if (entries[i].d_tag == DT_FLAGS_1)
			t->flags_1_entry = entry;
		if (entries[i].d_tag != DT_SONAME && entries[i].d_tag != DT_NEEDED)
			continue;
		long string = strtab + (long)entries[i].d_un.d_val;
		const char *text = (const char *)t->bytes + string;
		if (strncmp(text, "model-slot-", 11) != 0)
			continue;
		if (text[11] == soname_letter) {
			t->soname_entry = entry;
			t->soname_string = string;
		}
		for (int k = 0; k < MODEL_SLOTS; k++)
			if (text[11] == slot_letters[k]) {
				t->slot_entry[k] = entry;
				t->slot_string[k] = string;
			}
	}
	for (int k = 0; k < MODEL_SLOTS; k++)
		ck_assert_msg(t->slot_entry[k] >= 0, "slot %d not found in the template", k);
	ck_assert_msg(t->flags_1_entry >= 0, "no DT_FLAGS_1 in the template");
	ck_assert_msg(t->program || t->soname_entry >= 0, "no SONAME placeholder in the library template");
}

static void load_template(const char *path, struct model_template *t, bool program)
{
	size_t size = 0;
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	t->bytes = (unsigned char *)test_read_stream(f, &size);
	t->size = size;
	t->program = program;
	find_fields(t);
}

static void shell(const char *command)
{
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, NULL, 300);
	ck_assert_msg(run.status == 0, "%s\n%s", command, run.output);
	free(run.output);
}

void model_templates_build(const char *folder, struct model_template *library, struct model_template *program)
{
	char *stubs = test_format("%s", "");
	for (int k = 0; k < MODEL_SLOTS; k++) {
		char *stub = test_format("%s/stub-%d.so", folder, k);
		test_build_library("value.c", stub, placeholder(slot_letters[k], MODEL_SLOT_BYTES), "");
		stubs = test_format("%s '%s'", stubs, stub);
	}
	/* --no-as-needed: the stubs are needed by nothing but must stay as the slots; -z origin: a
	   DT_FLAGS_1 to patch NODEFLIB into. */
	char *library_path = test_format("%s/model-library.so", folder);
	test_build_library("model_library.c", library_path, placeholder(soname_letter, MODEL_SLOT_BYTES),
			   test_format("-fno-optimize-sibling-calls -Wl,--no-as-needed %s -Wl,--as-needed -Wl,-z,origin", stubs));
	char *program_path = test_format("%s/model-program", folder);
	shell(test_format("'%s' -O1 -o '%s' '%s/model_program.c' -Wl,--no-as-needed %s -Wl,--as-needed -Wl,-z,origin", test_setting("NVI_CC"),
			  program_path, test_setting("NVI_FIXTURES"), stubs));
	load_template(library_path, library, false);
	load_template(program_path, program, true);
}

static void put_string(unsigned char *bytes, long at, const char *value)
{
	size_t n = strlen(value);
	ck_assert_msg(n <= MODEL_SLOT_BYTES, "a slot string of %zu bytes: %s", n, value);
	memset(bytes + at, 0, MODEL_SLOT_BYTES + 1);
	memcpy(bytes + at, value, n);
}

static void put_tag(unsigned char *bytes, long entry, Elf64_Sxword tag)
{
	Elf64_Dyn dyn;
	memcpy(&dyn, bytes + entry, sizeof(dyn));
	dyn.d_tag = tag;
	memcpy(bytes + entry, &dyn, sizeof(dyn));
}

void model_template_write(const struct model_template *t, const struct model_object *object, const char *path)
{
	unsigned char *bytes = malloc(t->size);
	ck_assert_ptr_nonnull(bytes);
	memcpy(bytes, t->bytes, t->size);
	if (t->soname_entry >= 0) {
		if (object->soname)
			put_string(bytes, t->soname_string, object->soname);
		else
			put_tag(bytes, t->soname_entry, MODEL_IGNORED_TAG);
	}
	static const Elf64_Sxword tags[] = {
		[MODEL_SLOT_IGNORED] = MODEL_IGNORED_TAG,
		[MODEL_SLOT_NEEDED] = DT_NEEDED,
		[MODEL_SLOT_RPATH] = DT_RPATH,
		[MODEL_SLOT_RUNPATH] = DT_RUNPATH,
	};
	for (int k = 0; k < MODEL_SLOTS; k++) {
		const struct model_slot *slot = &object->slots[k];
		put_tag(bytes, t->slot_entry[k], tags[slot->tag]);
		if (slot->tag != MODEL_SLOT_IGNORED)
			put_string(bytes, t->slot_string[k], slot->value ? slot->value : "");
	}
	Elf64_Dyn flags;
	memcpy(&flags, bytes + t->flags_1_entry, sizeof(flags));
	flags.d_un.d_val = object->nodeflib ? flags.d_un.d_val | DF_1_NODEFLIB : flags.d_un.d_val & ~(Elf64_Xword)DF_1_NODEFLIB;
	memcpy(bytes + t->flags_1_entry, &flags, sizeof(flags));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, bytes, t->size), (ssize_t)t->size);
	close(fd);
	free(bytes);
}
