/* Patching import address tables. The tables are read from the mapped image through its own data
   directories, bounded by SizeOfImage, so a malformed module cannot send the walk astray. */
#include "import_table.h"

#include "log.h"
#include "utf16.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

/* Patches of one page by two threads would race on its protection (one restores read-only while
   the other still writes). Nothing that takes another lock runs while this one is held. */
static atomic_flag patching = ATOMIC_FLAG_INIT;

struct image {
	unsigned char *base;
	size_t size;
	int refused;          /* slots whose page could not be made writable */
	unsigned long error;  /* the first refusal's Win32 error */
};

/* Whether a refusal was reported at the error level already: once a process, then warnings. */
static atomic_bool refusal_reported;

/* The address of rva when size bytes from it lie inside the image and it is aligned as a table
   of that kind must be, else NULL. The linker and the loader put every table where its type's
   alignment says; one elsewhere belongs to a malformed module, and reading it as that type is
   undefined behaviour. */
static void *at(const struct image *image, DWORD rva, size_t size, size_t alignment)
{
	if (rva == 0 || rva > image->size || size > image->size - rva || rva % alignment)
		return NULL;
	return image->base + rva;
}

/* True when the size bytes at p lie inside the image. */
static bool inside(const struct image *image, const void *p, size_t size)
{
	uintptr_t start = (uintptr_t)image->base, address = (uintptr_t)p;
	return address >= start && address - start <= image->size && size <= image->size - (address - start);
}

static const IMAGE_DATA_DIRECTORY *directory(const struct image *image, const IMAGE_NT_HEADERS *nt, int index)
{
	if (nt->OptionalHeader.NumberOfRvaAndSizes <= (DWORD)index)
		return NULL;
	const IMAGE_DATA_DIRECTORY *entry = &nt->OptionalHeader.DataDirectory[index];
	return entry->VirtualAddress && at(image, entry->VirtualAddress, entry->Size, 1) ? entry : NULL;
}

static void *replacement_for(void *current, const struct hook *hooks, size_t hook_count)
{
	for (size_t i = 0; current && i < hook_count; i++)
		if (current == hooks[i].real[0] || current == hooks[i].real[1])
			return hooks[i].replacement;
	return NULL;
}

static int patch_slot(struct image *image, void **slot, void *replacement)
{
	/* A slot on a page that also holds code must stay executable while it is written: another
	   thread may be running there. */
	MEMORY_BASIC_INFORMATION page;
	DWORD old, writable = PAGE_READWRITE;
	if (VirtualQuery(slot, &page, sizeof(page)) == sizeof(page) &&
	    (page.Protect & (PAGE_EXECUTE | PAGE_EXECUTE_READ | PAGE_EXECUTE_READWRITE | PAGE_EXECUTE_WRITECOPY)))
		writable = PAGE_EXECUTE_READWRITE;
	/* Arbitrary Code Guard, a read-only view, or security software refuses this. */
	if (!VirtualProtect(slot, sizeof(*slot), writable, &old)) {
		if (!image->refused++)
			image->error = GetLastError();
		return 0;
	}
	/* One aligned store: a thread calling through the slot meanwhile sees the old or the new. */
	__atomic_store_n(slot, replacement, __ATOMIC_SEQ_CST);
	VirtualProtect(slot, sizeof(*slot), old, &old);
	return 1;
}

/* The slots of one table: a zero-terminated array of pointers. */
static int patch_slots(struct image *image, DWORD rva, const struct hook *hooks, size_t hook_count)
{
	int patched = 0;
	for (void **slot = at(image, rva, sizeof(void *), _Alignof(void *)); slot && inside(image, slot, sizeof(*slot)) && *slot; slot++) {
		void *replacement = replacement_for(*slot, hooks, hook_count);
		if (replacement)
			patched += patch_slot(image, slot, replacement);
	}
	return patched;
}

/* A module whose slots stay as they were calls the loader directly: its NVIDIA loads get no help. */
static void report_refusal(const struct image *image)
{
	wchar_t wide[MAX_PATH * 2];
	char name[MAX_PATH * 6];
	DWORD n = GetModuleFileNameW((HMODULE)image->base, wide, MAX_PATH * 2);
	if (n == 0 || n >= MAX_PATH * 2 || !utf8_from_utf16(wide, name, sizeof(name)))
		snprintf(name, sizeof(name), "the module at %p", (void *)image->base);
	bool first = !atomic_exchange(&refusal_reported, true);
	log_message(first ? LOG_ERROR : LOG_WARN,
		    "%s: %d import slot%s could not be made writable (error %lu; Arbitrary Code Guard or another "
		    "write policy?): its LoadLibrary calls bypass the runtime",
		    name, image->refused, image->refused == 1 ? "" : "s", image->error);
}

int import_table_patch(void *base, const struct hook *hooks, size_t hook_count)
{
	const IMAGE_DOS_HEADER *dos = base;
	if (!base || dos->e_magic != IMAGE_DOS_SIGNATURE || dos->e_lfanew <= 0 || dos->e_lfanew > 4096)
		return 0;
	/* A copy: e_lfanew need not be a multiple of the headers' alignment. */
	IMAGE_NT_HEADERS headers;
	memcpy(&headers, (const unsigned char *)base + dos->e_lfanew, sizeof(headers));
	const IMAGE_NT_HEADERS *nt = &headers;
	if (nt->Signature != IMAGE_NT_SIGNATURE || nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR_MAGIC)
		return 0;
	struct image image = { base, nt->OptionalHeader.SizeOfImage, 0, 0 };

	while (atomic_flag_test_and_set_explicit(&patching, memory_order_acquire))
		YieldProcessor();
	int patched = 0;
	const IMAGE_DATA_DIRECTORY *imports = directory(&image, nt, IMAGE_DIRECTORY_ENTRY_IMPORT);
	if (imports) {
		const IMAGE_IMPORT_DESCRIPTOR *descriptor = at(&image, imports->VirtualAddress, sizeof(*descriptor), _Alignof(IMAGE_IMPORT_DESCRIPTOR));
		for (; descriptor && inside(&image, descriptor, sizeof(*descriptor)) && descriptor->Name; descriptor++)
			patched += patch_slots(&image, descriptor->FirstThunk, hooks, hook_count);
	}
	/* Delay-loaded imports: a slot resolved before the runtime came holds the real function; one
	   not yet resolved will be, through the module's GetProcAddress, which is patched above. */
	const IMAGE_DATA_DIRECTORY *delayed = directory(&image, nt, IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT);
	if (delayed) {
		const IMAGE_DELAYLOAD_DESCRIPTOR *descriptor = at(&image, delayed->VirtualAddress, sizeof(*descriptor), _Alignof(IMAGE_DELAYLOAD_DESCRIPTOR));
		/* Attributes.RvaBased 0 marks the old format, whose fields are addresses, not RVAs. */
		for (; descriptor && inside(&image, descriptor, sizeof(*descriptor)) && descriptor->DllNameRVA; descriptor++)
			if (descriptor->Attributes.RvaBased)
				patched += patch_slots(&image, descriptor->ImportAddressTableRVA, hooks, hook_count);
	}
	atomic_flag_clear_explicit(&patching, memory_order_release);
	if (image.refused)
		report_refusal(&image);
	return patched;
}
