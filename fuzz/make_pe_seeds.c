/* Seeds for the Windows fuzzers, from real PE DLLs (Wine's, the cross-built runtime): each DLL of
   at most MAX_INPUT bytes as it is on disk (pe_file), and as the loader maps it (import_table):
   headers and sections at their addresses, SizeOfImage bytes, with the slots of its import and
   delay-load tables holding the fuzzer's stand-in real functions (0x10, 0x20, 0x30, 0x40, 0x1001,
   0x1003), as a loaded module's slots hold kernel32's. Usage: make_pe_seeds FILES IMAGES DLL... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT (128 * 1024)

static uint32_t u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

static unsigned char *read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = f ? malloc(MAX_INPUT + 1) : NULL;
	*size = data ? fread(data, 1, MAX_INPUT + 1, f) : 0;
	if (f)
		fclose(f);
	return data;
}

static void write_whole(const char *folder, const char *path, const unsigned char *data, size_t size)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char out[4096];
	snprintf(out, sizeof(out), "%s/%s", folder, base);
	FILE *f = fopen(out, "wb");
	if (!f || fwrite(data, 1, size, f) != size) {
		perror(out);
		exit(1);
	}
	fclose(f);
}

static const uint64_t stand_ins[] = { 0x10, 0x20, 0x30, 0x40, 0x1001, 0x1003 };

/* The zero-terminated slot array at rva, each slot given a stand-in. */
static void fill_slots(unsigned char *image, size_t size, uint32_t rva, size_t *next)
{
	for (size_t at = rva; rva && at + 8 <= size; at += 8) {
		uint64_t slot;
		memcpy(&slot, image + at, 8);
		if (slot == 0)
			break;
		memcpy(image + at, &stand_ins[(*next)++ % 6], 8);
	}
}

/* The mapped image of a PE32+ file, or NULL. */
static unsigned char *map_image(const unsigned char *file, size_t file_size, size_t *size)
{
	if (file_size < 64 || u16(file) != 0x5a4d)
		return NULL;
	uint32_t nt = u32(file + 60);
	if ((size_t)nt + 24 + 240 > file_size || u32(file + nt) != 0x4550 || u16(file + nt + 24) != 0x20b)
		return NULL;
	const unsigned char *optional = file + nt + 24;
	uint32_t image_size = u32(optional + 56), headers = u32(optional + 60), directories = u32(optional + 108);
	uint16_t sections = u16(file + nt + 6), optional_size = u16(file + nt + 20);
	if (image_size == 0 || image_size > MAX_INPUT || headers > file_size || headers > image_size)
		return NULL;
	unsigned char *image = calloc(1, image_size);
	memcpy(image, file, headers);
	const unsigned char *section = file + nt + 24 + optional_size;
	for (uint16_t i = 0; i < sections && (size_t)(section + 40 - file) <= file_size; i++, section += 40) {
		uint32_t virtual_size = u32(section + 8), address = u32(section + 12), raw_size = u32(section + 16), raw = u32(section + 20);
		uint32_t n = raw_size < virtual_size || virtual_size == 0 ? raw_size : virtual_size;
		if (address < image_size && raw < file_size) {
			if (n > image_size - address)
				n = image_size - address;
			if (n > file_size - raw)
				n = (uint32_t)(file_size - raw);
			memcpy(image + address, file + raw, n);
		}
	}
	size_t next = 0;
	if (directories > 1) { /* imports: 20-byte descriptors, FirstThunk at 16 */
		uint32_t rva = u32(optional + 112 + 8);
		for (size_t at = rva; rva && at + 20 <= image_size && u32(image + at + 12); at += 20)
			fill_slots(image, image_size, u32(image + at + 16), &next);
	}
	if (directories > 13) { /* delay-load: 32-byte descriptors, RVA-based flag at 0, IAT at 12 */
		uint32_t rva = u32(optional + 112 + 13 * 8);
		for (size_t at = rva; rva && at + 32 <= image_size && u32(image + at + 4); at += 32)
			if (u32(image + at) & 1)
				fill_slots(image, image_size, u32(image + at + 12), &next);
	}
	*size = image_size;
	return image;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s FILES IMAGES DLL...\n", argv[0]);
		return 2;
	}
	int files = 0, images = 0;
	for (int i = 3; i < argc; i++) {
		size_t size, image_size;
		unsigned char *data = read_whole(argv[i], &size);
		if (!data || size > MAX_INPUT) {
			free(data);
			continue;
		}
		write_whole(argv[1], argv[i], data, size);
		files++;
		unsigned char *image = map_image(data, size, &image_size);
		if (image) {
			write_whole(argv[2], argv[i], image, image_size);
			images++;
		}
		free(image);
		free(data);
	}
	printf("%d files, %d mapped images\n", files, images);
	return files ? 0 : 1;
}
