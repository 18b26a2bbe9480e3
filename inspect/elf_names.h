/* Names for ELF header values, as a person reads them ("ELF64", "x86-64", "shared object"). */
#pragma once

#include <stddef.h>
#include <stdint.h>

const char *elf_class_name(unsigned char elf_class);
const char *elf_data_name(unsigned char data);
/* The machine's name; for one without a name here, "machine N" in buffer. */
const char *elf_machine_name(uint16_t machine, char *buffer, size_t size);
const char *elf_type_name(uint16_t type);
