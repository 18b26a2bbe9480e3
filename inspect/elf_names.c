#include "elf_names.h"

#include <elf.h>
#include <stdio.h>

const char *elf_class_name(unsigned char elf_class)
{
	return elf_class == ELFCLASS32 ? "ELF32" : elf_class == ELFCLASS64 ? "ELF64" : "ELF?";
}

const char *elf_data_name(unsigned char data)
{
	return data == ELFDATA2LSB ? "LSB" : data == ELFDATA2MSB ? "MSB" : "?SB";
}

const char *elf_machine_name(uint16_t machine, char *buffer, size_t size)
{
	static const struct {
		uint16_t machine;
		const char *name;
	} names[] = {
		{ EM_386, "x86" },     { EM_X86_64, "x86-64" },   { EM_AARCH64, "AArch64" }, { EM_ARM, "ARM" },
		{ EM_PPC, "PowerPC" }, { EM_PPC64, "PowerPC64" }, { EM_S390, "S/390" },      { EM_RISCV, "RISC-V" },
		{ EM_MIPS, "MIPS" },   { EM_SPARCV9, "SPARC V9" }, { EM_LOONGARCH, "LoongArch" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].machine == machine)
			return names[i].name;
	snprintf(buffer, size, "machine %u", machine);
	return buffer;
}

const char *elf_type_name(uint16_t type)
{
	switch (type) {
	case ET_DYN: return "shared object";
	case ET_EXEC: return "executable";
	case ET_REL: return "relocatable object";
	case ET_CORE: return "core file";
	default: return "unknown type";
	}
}
