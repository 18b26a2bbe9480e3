/* libFuzzer target: the import-table walker (src/windows/import_table.c, compiled for Linux
   against fuzz/windows/windows.h): the input is a module as mapped, its SizeOfImage set to the
   input's size (the loader maps exactly that much), and its import and delay-load tables walked
   with four hooks whose real functions are the small addresses 0x10, 0x20, 0x30 and 0x40. Promises:
   no read or write outside the image; the only bytes changed are whole 8-byte slots that held a
   real function and now hold its hook; as many as it says. */
#include "import_table.h"
#include "windows/shim.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HOOKS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hook hooks[HOOKS];
	for (size_t i = 0; i < HOOKS; i++) {
		hooks[i].name = "hook";
		hooks[i].real[0] = (void *)(uintptr_t)(0x10 * (i + 1));
		hooks[i].real[1] = i % 2 ? (void *)(uintptr_t)(0x1000 + i) : NULL;
		hooks[i].replacement = (void *)(uintptr_t)(0xabc00 + i);
	}
	/* The headers must be there to be read (a mapped module always has its first page). */
	if (size < 64 || size > (1u << 20))
		return 0;
	int32_t lfanew;
	memcpy(&lfanew, data + 60, 4);
	if (lfanew > 0 && lfanew <= 4096 && (size_t)lfanew + sizeof(IMAGE_NT_HEADERS) > size)
		return 0;
	/* 8-byte aligned, as a mapped image is: its slots are pointers. */
	unsigned char *image = aligned_alloc(8, (size + 7) & ~(size_t)7), *before = malloc(size);
	memcpy(image, data, size);
	if (lfanew > 0 && lfanew <= 4096) {
		IMAGE_NT_HEADERS *nt = (IMAGE_NT_HEADERS *)(image + lfanew);
		DWORD image_size = (DWORD)size;
		memcpy((unsigned char *)nt + offsetof(IMAGE_NT_HEADERS, OptionalHeader.SizeOfImage), &image_size, sizeof(image_size));
	}
	memcpy(before, image, size);
	shim_page_protection = size % 2 ? PAGE_EXECUTE_READ : PAGE_READWRITE;
	int patched = import_table_patch(image, hooks, HOOKS);
	int changed = 0;
	for (size_t slot = 0; memcmp(image, before, size) != 0 && slot < size; slot += 8) {
		size_t n = size - slot < 8 ? size - slot : 8;
		if (memcmp(image + slot, before + slot, n) == 0)
			continue;
		if (n < 8) /* a change in the tail that is no whole slot */
			abort();
		void *old, *new;
		memcpy(&old, before + slot, 8);
		memcpy(&new, image + slot, 8);
		bool hooked = false;
		for (size_t i = 0; i < HOOKS; i++)
			hooked = hooked || ((old == hooks[i].real[0] || (hooks[i].real[1] && old == hooks[i].real[1])) && new == hooks[i].replacement);
		if (!hooked)
			abort();
		changed++;
	}
	/* A slot listed by two tables is patched twice, and counted twice. */
	if (changed > patched)
		abort();
	free(image);
	free(before);
	return 0;
}
