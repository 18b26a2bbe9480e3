/* The corpus generator. It walks the source with its own small code (both classes, both byte
   orders), writes each variant as a whole file, and says what a reader must answer for it. */
#define _GNU_SOURCE
#include "elf_corpus.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A larger source is reduced to its compact copy before variants are made: a half-length copy of
   a 540 MB library is no test input. */
#define SMALL_SOURCE (16u << 20)
/* The longest string carried into a compact copy, and the most dynamic entries walked. */
#define MAX_STRING 65536
#define MAX_DYNAMIC 4096
/* The address a compact copy is linked at: not 0, so a reader that takes DT_STRTAB (an address)
   for a file offset reads the wrong bytes. */
#define COMPACT_BASE 0x10000

struct field {
	size_t offset, size;
};
#define FIELD(type, member) ((struct field){ offsetof(type, member), sizeof(((type *)0)->member) })
#define EHDR(is64, member) ((is64) ? FIELD(Elf64_Ehdr, member) : FIELD(Elf32_Ehdr, member))
#define PHDR(is64, member) ((is64) ? FIELD(Elf64_Phdr, member) : FIELD(Elf32_Phdr, member))
#define SHDR(is64, member) ((is64) ? FIELD(Elf64_Shdr, member) : FIELD(Elf32_Shdr, member))
#define DYN_TAG(is64) ((is64) ? FIELD(Elf64_Dyn, d_tag) : FIELD(Elf32_Dyn, d_tag))
#define DYN_VALUE(is64) ((is64) ? FIELD(Elf64_Dyn, d_un) : FIELD(Elf32_Dyn, d_un))

struct image {
	unsigned char *bytes;
	size_t size;
	bool is64, big;
};

static bool fits(const struct image *image, uint64_t offset, uint64_t size)
{
	return offset <= image->size && size <= image->size - offset;
}

static bool field_fits(const struct image *image, uint64_t base, struct field f)
{
	return base <= image->size && f.offset + f.size <= image->size - base;
}

/* A field in the image's byte order; 0 where it lies outside. */
static uint64_t get(const struct image *image, uint64_t base, struct field f)
{
	uint64_t value = 0;
	if (!field_fits(image, base, f))
		return 0;
	for (size_t i = 0; i < f.size; i++)
		value = value << 8 | image->bytes[base + f.offset + (image->big ? i : f.size - 1 - i)];
	return value;
}

static void put(struct image *image, uint64_t base, struct field f, uint64_t value)
{
	if (!field_fits(image, base, f))
		return;
	for (size_t i = 0; i < f.size; i++, value >>= 8)
		image->bytes[base + f.offset + (image->big ? f.size - 1 - i : i)] = (unsigned char)value;
}

/* The largest value a field holds. */
static uint64_t max_of(struct field f)
{
	return f.size >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * f.size)) - 1;
}

/* What the generator learned walking a source. */
struct layout {
	bool walkable; /* a whole ELF header and program header table */
	size_t ehsize, phentsize, dynentsize;
	uint64_t phoff, shoff;
	size_t phnum, shnum, shentsize;
	bool has_dynamic, has_interp, has_null, has_strtab;
	size_t dynamic_phdr, interp_phdr, strtab_phdr, null_index;
	uint64_t dynamic_offset, dynamic_size, interp_offset, interp_size;
	uint64_t strtab_offset, strsz;
	uint64_t must_end;  /* cut shorter, a file lacks something a reader needs */
	uint64_t whole_end; /* cut here or later, every segment is whole */
};

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static uint64_t phdr_at(const struct layout *layout, size_t index) { return layout->phoff + index * layout->phentsize; }

static uint64_t dyn_at(const struct layout *layout, size_t index)
{
	return layout->dynamic_offset + index * layout->dynentsize;
}

/* The file offset of a virtual address through the load segments, or UINT64_MAX; *load is the
   index of the segment. */
static uint64_t offset_of_address(const struct image *image, const struct layout *layout, uint64_t address,
				  size_t *load)
{
	bool is64 = image->is64;
	for (size_t i = 0; i < layout->phnum; i++) {
		uint64_t at = phdr_at(layout, i);
		if (get(image, at, PHDR(is64, p_type)) != PT_LOAD)
			continue;
		uint64_t vaddr = get(image, at, PHDR(is64, p_vaddr)), filesz = get(image, at, PHDR(is64, p_filesz));
		if (address >= vaddr && address - vaddr < filesz) {
			*load = i;
			return get(image, at, PHDR(is64, p_offset)) + (address - vaddr);
		}
	}
	return UINT64_MAX;
}

static void walk_dynamic(const struct image *image, struct layout *layout)
{
	bool is64 = image->is64;
	uint64_t strtab = 0;
	bool has_strtab = false, has_strsz = false;
	size_t count = layout->dynamic_size / layout->dynentsize;
	for (size_t i = 0; i < count && i < MAX_DYNAMIC; i++) {
		uint64_t tag = get(image, dyn_at(layout, i), DYN_TAG(is64));
		uint64_t value = get(image, dyn_at(layout, i), DYN_VALUE(is64));
		if (tag == DT_NULL) {
			layout->has_null = true;
			layout->null_index = i;
			break;
		}
		if (tag == DT_STRTAB)
			strtab = value, has_strtab = true;
		else if (tag == DT_STRSZ)
			layout->strsz = value, has_strsz = true;
	}
	if (has_strtab && has_strsz) {
		uint64_t offset = offset_of_address(image, layout, strtab, &layout->strtab_phdr);
		if (offset != UINT64_MAX && fits(image, offset, layout->strsz)) {
			layout->has_strtab = true;
			layout->strtab_offset = offset;
			layout->must_end = max64(layout->must_end, offset + layout->strsz);
		}
	}
}

static struct layout walk(struct image *image)
{
	struct layout layout;
	memset(&layout, 0, sizeof(layout));
	if (image->size < EI_NIDENT || memcmp(image->bytes, ELFMAG, SELFMAG) != 0)
		return layout;
	unsigned char elf_class = image->bytes[EI_CLASS], data = image->bytes[EI_DATA];
	if ((elf_class != ELFCLASS32 && elf_class != ELFCLASS64) || (data != ELFDATA2LSB && data != ELFDATA2MSB))
		return layout;
	bool is64 = image->is64 = elf_class == ELFCLASS64;
	image->big = data == ELFDATA2MSB;
	layout.ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	layout.dynentsize = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	if (image->size < layout.ehsize)
		return layout;
	layout.phoff = get(image, 0, EHDR(is64, e_phoff));
	layout.phnum = get(image, 0, EHDR(is64, e_phnum));
	layout.phentsize = get(image, 0, EHDR(is64, e_phentsize));
	layout.shoff = get(image, 0, EHDR(is64, e_shoff));
	layout.shnum = get(image, 0, EHDR(is64, e_shnum));
	layout.shentsize = get(image, 0, EHDR(is64, e_shentsize));
	if (layout.phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || layout.phnum == 0 ||
	    layout.phnum >= PN_XNUM || layout.phoff == 0 || !fits(image, layout.phoff, layout.phnum * layout.phentsize))
		return layout;
	layout.walkable = true;
	layout.must_end = max64(layout.ehsize, layout.phoff + layout.phnum * layout.phentsize);
	layout.whole_end = layout.must_end;
	for (size_t i = 0; i < layout.phnum; i++) {
		uint64_t at = phdr_at(&layout, i);
		uint64_t type = get(image, at, PHDR(is64, p_type)), offset = get(image, at, PHDR(is64, p_offset));
		uint64_t filesz = get(image, at, PHDR(is64, p_filesz));
		if (!fits(image, offset, filesz))
			continue;
		if (type == PT_LOAD)
			layout.whole_end = max64(layout.whole_end, offset + filesz);
		else if (type == PT_DYNAMIC) {
			layout.has_dynamic = true;
			layout.dynamic_phdr = i;
			layout.dynamic_offset = offset;
			layout.dynamic_size = filesz;
		} else if (type == PT_INTERP && !layout.has_interp) {
			layout.has_interp = true;
			layout.interp_phdr = i;
			layout.interp_offset = offset;
			layout.interp_size = filesz;
			layout.must_end = max64(layout.must_end, offset + filesz);
		}
	}
	if (layout.has_dynamic) {
		layout.must_end = max64(layout.must_end, layout.dynamic_offset + layout.dynamic_size);
		walk_dynamic(image, &layout);
	}
	layout.whole_end = max64(layout.whole_end, layout.must_end);
	return layout;
}

/* A string of the dynamic string table, or NULL when it is not there whole. */
static const char *dynamic_string(const struct image *image, const struct layout *layout, uint64_t index)
{
	if (!layout->has_strtab || index >= layout->strsz)
		return NULL;
	uint64_t room = layout->strsz - index < MAX_STRING + 1 ? layout->strsz - index : MAX_STRING + 1;
	const char *s = (const char *)image->bytes + layout->strtab_offset + index;
	return memchr(s, '\0', room) ? s : NULL;
}

static bool is_string_tag(uint64_t tag)
{
	return tag == DT_NEEDED || tag == DT_SONAME || tag == DT_RPATH || tag == DT_RUNPATH;
}

/* The content of a compact copy: header fields, interpreter and dynamic entries (without
   DT_STRTAB, DT_STRSZ and DT_NULL, which the builder writes), string tags with their text. */
struct spec_entry {
	uint64_t tag, value;
	const char *string;
};

struct spec {
	unsigned char ident[EI_NIDENT];
	uint64_t type, machine, version, flags;
	const char *interp;
	size_t count, capacity;
	struct spec_entry *entries;
};

static bool spec_add(struct spec *spec, uint64_t tag, uint64_t value, const char *string)
{
	if (spec->count == spec->capacity) {
		size_t capacity = spec->capacity ? 2 * spec->capacity : 64;
		struct spec_entry *entries = realloc(spec->entries, capacity * sizeof(*entries));
		if (!entries)
			return false;
		spec->entries = entries;
		spec->capacity = capacity;
	}
	spec->entries[spec->count++] = (struct spec_entry){ tag, value, string };
	return true;
}

static bool extract_spec(const struct image *image, const struct layout *layout, struct spec *spec)
{
	bool is64 = image->is64;
	memset(spec, 0, sizeof(*spec));
	if (!layout->walkable)
		return false;
	memcpy(spec->ident, image->bytes, EI_NIDENT);
	spec->type = get(image, 0, EHDR(is64, e_type));
	spec->machine = get(image, 0, EHDR(is64, e_machine));
	spec->version = get(image, 0, EHDR(is64, e_version));
	spec->flags = get(image, 0, EHDR(is64, e_flags));
	if (layout->has_interp) {
		spec->interp = (const char *)image->bytes + layout->interp_offset;
		if (!memchr(spec->interp, '\0', layout->interp_size))
			return false;
	}
	if (!layout->has_dynamic)
		return true;
	if (!layout->has_null)
		return false;
	for (size_t i = 0; i < layout->null_index; i++) {
		uint64_t tag = get(image, dyn_at(layout, i), DYN_TAG(is64));
		uint64_t value = get(image, dyn_at(layout, i), DYN_VALUE(is64));
		const char *string = NULL;
		if (tag == DT_STRTAB || tag == DT_STRSZ)
			continue;
		if (is_string_tag(tag) && !(string = dynamic_string(image, layout, value)))
			return false;
		if (!spec_add(spec, tag, value, string))
			return false;
	}
	return true;
}

static uint64_t align8(uint64_t n) { return (n + 7) & ~UINT64_C(7); }

/* Lays a spec out as a file of the given class and byte order: header, program headers (one load
   segment over the whole file, PT_INTERP, PT_DYNAMIC), interpreter, dynamic entries, strings. */
static bool build_compact(const struct spec *spec, bool is64, bool big, struct image *out)
{
	size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phentsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t dynentsize = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	size_t phnum = spec->interp ? 3 : 2, interp_length = spec->interp ? strlen(spec->interp) + 1 : 0;
	size_t dynamic_count = spec->count + 3, strsz = 1;
	for (size_t i = 0; i < spec->count; i++)
		if (spec->entries[i].string)
			strsz += strlen(spec->entries[i].string) + 1;
	uint64_t interp_offset = ehsize + phnum * phentsize;
	uint64_t dynamic_offset = align8(interp_offset + interp_length);
	uint64_t strtab_offset = dynamic_offset + dynamic_count * dynentsize;
	uint64_t total = strtab_offset + strsz;
	struct image image = { calloc(1, total), total, is64, big };
	if (!image.bytes)
		return false;

	memcpy(image.bytes, spec->ident, EI_NIDENT);
	image.bytes[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	image.bytes[EI_DATA] = big ? ELFDATA2MSB : ELFDATA2LSB;
	put(&image, 0, EHDR(is64, e_type), spec->type);
	put(&image, 0, EHDR(is64, e_machine), spec->machine);
	put(&image, 0, EHDR(is64, e_version), spec->version);
	put(&image, 0, EHDR(is64, e_flags), spec->flags);
	put(&image, 0, EHDR(is64, e_phoff), ehsize);
	put(&image, 0, EHDR(is64, e_ehsize), ehsize);
	put(&image, 0, EHDR(is64, e_phentsize), phentsize);
	put(&image, 0, EHDR(is64, e_phnum), phnum);

	struct {
		uint64_t type, offset, size, flags, align;
	} segments[] = {
		{ PT_LOAD, 0, total, PF_R | PF_W, 0x1000 },
		{ PT_DYNAMIC, dynamic_offset, dynamic_count * dynentsize, PF_R | PF_W, 8 },
		{ PT_INTERP, interp_offset, interp_length, PF_R, 1 },
	};
	for (size_t i = 0; i < phnum; i++) {
		uint64_t at = ehsize + i * phentsize;
		put(&image, at, PHDR(is64, p_type), segments[i].type);
		put(&image, at, PHDR(is64, p_offset), segments[i].offset);
		put(&image, at, PHDR(is64, p_vaddr), COMPACT_BASE + segments[i].offset);
		put(&image, at, PHDR(is64, p_paddr), COMPACT_BASE + segments[i].offset);
		put(&image, at, PHDR(is64, p_filesz), segments[i].size);
		put(&image, at, PHDR(is64, p_memsz), segments[i].size);
		put(&image, at, PHDR(is64, p_flags), segments[i].flags);
		put(&image, at, PHDR(is64, p_align), segments[i].align);
	}
	if (spec->interp)
		memcpy(image.bytes + interp_offset, spec->interp, interp_length);

	uint64_t next_string = 1;
	size_t n = 0;
	for (size_t i = 0; i < spec->count; i++, n++) {
		uint64_t value = spec->entries[i].value;
		if (spec->entries[i].string) {
			size_t length = strlen(spec->entries[i].string) + 1;
			memcpy(image.bytes + strtab_offset + next_string, spec->entries[i].string, length);
			value = next_string;
			next_string += length;
		}
		put(&image, dynamic_offset + n * dynentsize, DYN_TAG(is64), spec->entries[i].tag);
		put(&image, dynamic_offset + n * dynentsize, DYN_VALUE(is64), value);
	}
	put(&image, dynamic_offset + n * dynentsize, DYN_TAG(is64), DT_STRTAB);
	put(&image, dynamic_offset + n * dynentsize, DYN_VALUE(is64), COMPACT_BASE + strtab_offset);
	n++;
	put(&image, dynamic_offset + n * dynentsize, DYN_TAG(is64), DT_STRSZ);
	put(&image, dynamic_offset + n * dynentsize, DYN_VALUE(is64), strsz);
	*out = image;
	return true;
}

static bool write_bytes(const char *path, const void *bytes, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, (const char *)bytes + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return false;
		}
		done += (size_t)n;
	}
	return close(fd) == 0;
}

/* The source, mapped (a 540 MB library is walked, not read). */
static bool map_source(const char *path, struct image *image)
{
	struct stat st;
	memset(image, 0, sizeof(*image));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	image->size = (size_t)st.st_size;
	if (image->size > 0) {
		void *map = mmap(NULL, image->size, PROT_READ, MAP_PRIVATE, fd, 0);
		image->bytes = map == MAP_FAILED ? NULL : map;
	}
	close(fd);
	return image->size == 0 || image->bytes;
}

static void unmap_source(struct image *image)
{
	if (image->bytes)
		munmap(image->bytes, image->size);
}

int elf_corpus_write_compact(const char *source, const char *path)
{
	struct image image, compact = { NULL, 0, false, false };
	struct spec spec;
	if (!map_source(source, &image))
		return -1;
	struct layout layout = walk(&image);
	bool ok = extract_spec(&image, &layout, &spec) && build_compact(&spec, image.is64, image.big, &compact) &&
		  write_bytes(path, compact.bytes, compact.size);
	free(spec.entries);
	free(compact.bytes);
	unmap_source(&image);
	return ok ? 0 : -1;
}

struct writer {
	const char *folder;
	struct elf_corpus_file *files;
	size_t count, capacity;
	bool failed;
};

static void emit(struct writer *writer, const char *name, enum elf_corpus_expect expect, const void *bytes, size_t size)
{
	if (writer->failed)
		return;
	if (writer->count == writer->capacity) {
		size_t capacity = writer->capacity ? 2 * writer->capacity : 64;
		struct elf_corpus_file *files = realloc(writer->files, capacity * sizeof(*files));
		if (!files) {
			writer->failed = true;
			return;
		}
		writer->files = files;
		writer->capacity = capacity;
	}
	struct elf_corpus_file *file = &writer->files[writer->count];
	file->name = strdup(name);
	if (!file->name || asprintf(&file->path, "%s/%03zu-%s", writer->folder, writer->count, name) < 0) {
		free(file->name);
		writer->failed = true;
		return;
	}
	file->expect = expect;
	writer->count++;
	if (!write_bytes(file->path, bytes, size))
		writer->failed = true;
}

/* A copy of the base to change one thing in; written, then freed. */
struct variant {
	struct image image;
	struct writer *writer;
};

static bool variant_begin(struct variant *variant, struct writer *writer, const struct image *base)
{
	variant->writer = writer;
	variant->image = *base;
	variant->image.bytes = malloc(base->size ? base->size : 1);
	if (!variant->image.bytes) {
		writer->failed = true;
		return false;
	}
	memcpy(variant->image.bytes, base->bytes, base->size);
	return true;
}

static void variant_end(struct variant *variant, const char *name, enum elf_corpus_expect expect)
{
	emit(variant->writer, name, expect, variant->image.bytes, variant->image.size);
	free(variant->image.bytes);
}

/* The base with one field at base_offset set to value. */
static void emit_field(struct writer *writer, const struct image *base, const char *name, enum elf_corpus_expect expect,
		       uint64_t base_offset, struct field f, uint64_t value)
{
	struct variant variant;
	if (!variant_begin(&variant, writer, base))
		return;
	put(&variant.image, base_offset, f, value);
	variant_end(&variant, name, expect);
}

static void emit_not_elf(struct writer *writer)
{
	static const char text[] = "this is not an ELF file\n";
	static const char archive[] = "!<arch>\n/               0           0     0     0       4         `\n\0\0\0\0";
	static const char magic[] = ELFMAG;
	emit(writer, "empty", ELF_CORPUS_ERROR, "", 0);
	emit(writer, "not-elf", ELF_CORPUS_ERROR, text, sizeof(text) - 1);
	emit(writer, "ar-archive", ELF_CORPUS_ERROR, archive, sizeof(archive) - 1);
	emit(writer, "magic-only", ELF_CORPUS_ERROR, magic, SELFMAG);
}

static int compare_sizes(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void emit_truncations(struct writer *writer, const struct image *base, const struct layout *layout)
{
	uint64_t lengths[] = { 0, 1, 16, 63, 64, layout->must_end - 1, layout->must_end, layout->whole_end,
			       layout->phoff + layout->phnum * layout->phentsize - 1, base->size / 2, base->size - 1 };
	size_t n = sizeof(lengths) / sizeof(lengths[0]);
	qsort(lengths, n, sizeof(lengths[0]), compare_sizes);
	for (size_t i = 0; i < n; i++) {
		uint64_t length = lengths[i];
		if (length >= base->size || (i > 0 && length == lengths[i - 1]) || (length == 0 && base->size == 0))
			continue;
		enum elf_corpus_expect expect = ELF_CORPUS_ANY;
		if (length < SELFMAG || (layout->walkable && length < layout->must_end))
			expect = ELF_CORPUS_ERROR;
		else if (layout->walkable && length >= layout->whole_end)
			expect = ELF_CORPUS_SAME_FACTS;
		char name[64];
		snprintf(name, sizeof(name), "truncated-%llu", (unsigned long long)length);
		emit(writer, name, expect, base->bytes, (size_t)length);
	}
}

/* xorshift64: the same flips on every machine and run. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static void emit_bit_flips(struct writer *writer, const struct image *base, const struct layout *layout)
{
	/* A quarter of the flips in each part a reader reads (ELF and program headers, the dynamic
	   section, the strings) and a quarter anywhere; a part the source lacks gets flips anywhere. */
	struct {
		const char *name;
		uint64_t offset, size;
	} regions[] = {
		{ "headers", 0, layout->walkable ? layout->phoff + layout->phnum * layout->phentsize : 0 },
		{ "dynamic", layout->dynamic_offset, layout->has_dynamic ? layout->dynamic_size : 0 },
		{ "strings", layout->strtab_offset, layout->has_strtab ? layout->strsz : 0 },
		{ "any", 0, base->size },
	};
	for (uint64_t seed = 1; seed <= 32 && base->size > 0; seed++) {
		struct variant variant;
		uint64_t state = seed * 0x9e3779b97f4a7c15u, region = (seed - 1) / 8;
		uint64_t offset = regions[region].offset, size = regions[region].size;
		if (size == 0 || !fits(base, offset, size))
			offset = 0, size = base->size;
		if (!variant_begin(&variant, writer, base))
			return;
		for (uint64_t k = 0; k < 1 + seed % 8; k++) {
			uint64_t bit = next_random(&state) % (size * 8);
			variant.image.bytes[offset + bit / 8] ^= (unsigned char)(1u << (bit % 8));
		}
		char name[64];
		snprintf(name, sizeof(name), "bitflip-%s-%llu", regions[region].name, (unsigned long long)seed);
		variant_end(&variant, name, ELF_CORPUS_ANY);
	}
}

static void emit_header_lies(struct writer *writer, const struct image *base, const struct layout *layout)
{
	bool is64 = base->is64;
	struct {
		const char *name;
		struct field field;
		uint64_t value;
		enum elf_corpus_expect expect;
	} rows[] = {
		{ "bad-class", { EI_CLASS, 1 }, 7, ELF_CORPUS_ERROR },
		{ "bad-data", { EI_DATA, 1 }, 7, ELF_CORPUS_ERROR },
		{ "bad-version", { EI_VERSION, 1 }, 2, ELF_CORPUS_ERROR },
		/* e_phoff 0 says "no program header table" while e_phnum says otherwise. */
		{ "e_phoff-0", EHDR(is64, e_phoff), 0, ELF_CORPUS_ANY },
		{ "e_phoff-max", EHDR(is64, e_phoff), max_of(EHDR(is64, e_phoff)), ELF_CORPUS_ERROR },
		{ "e_phoff-beyond", EHDR(is64, e_phoff), base->size, ELF_CORPUS_ERROR },
		{ "e_phnum-0", EHDR(is64, e_phnum), 0, ELF_CORPUS_ANY },
		{ "e_phnum-max", EHDR(is64, e_phnum), max_of(EHDR(is64, e_phnum)), ELF_CORPUS_ERROR },
		{ "e_phentsize-0", EHDR(is64, e_phentsize), 0, ELF_CORPUS_ERROR },
		{ "e_phentsize-max", EHDR(is64, e_phentsize), max_of(EHDR(is64, e_phentsize)), ELF_CORPUS_ERROR },
		/* Section headers: the loader never reads them, and neither may a reader of its facts. */
		{ "e_shoff-0", EHDR(is64, e_shoff), 0, ELF_CORPUS_SAME_FACTS },
		{ "e_shoff-max", EHDR(is64, e_shoff), max_of(EHDR(is64, e_shoff)), ELF_CORPUS_SAME_FACTS },
		{ "e_shoff-beyond", EHDR(is64, e_shoff), base->size, ELF_CORPUS_SAME_FACTS },
		{ "e_shnum-0", EHDR(is64, e_shnum), 0, ELF_CORPUS_SAME_FACTS },
		{ "e_shnum-max", EHDR(is64, e_shnum), max_of(EHDR(is64, e_shnum)), ELF_CORPUS_SAME_FACTS },
		{ "e_shentsize-0", EHDR(is64, e_shentsize), 0, ELF_CORPUS_SAME_FACTS },
		{ "e_shentsize-max", EHDR(is64, e_shentsize), max_of(EHDR(is64, e_shentsize)), ELF_CORPUS_SAME_FACTS },
		{ "e_shstrndx-max", EHDR(is64, e_shstrndx), max_of(EHDR(is64, e_shstrndx)), ELF_CORPUS_SAME_FACTS },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		emit_field(writer, base, rows[i].name, rows[i].expect, 0, rows[i].field, rows[i].value);

	/* Section headers that exist, past every segment: stripped, scrambled, or section 0 giving an
	   extended count (e_shnum 0) as large as its field holds. */
	uint64_t table = layout->shnum * layout->shentsize;
	if (layout->shnum == 0 || layout->shoff < layout->whole_end || !fits(base, layout->shoff, table))
		return;
	struct variant variant;
	if (!variant_begin(&variant, writer, base))
		return;
	variant.image.size = (size_t)layout->whole_end;
	put(&variant.image, 0, EHDR(is64, e_shoff), 0);
	put(&variant.image, 0, EHDR(is64, e_shnum), 0);
	put(&variant.image, 0, EHDR(is64, e_shstrndx), 0);
	variant_end(&variant, "sections-stripped", ELF_CORPUS_SAME_FACTS);
	if (!variant_begin(&variant, writer, base))
		return;
	memset(variant.image.bytes + layout->shoff, 0xff, table);
	variant_end(&variant, "sections-scrambled", ELF_CORPUS_SAME_FACTS);
	if (!variant_begin(&variant, writer, base))
		return;
	put(&variant.image, 0, EHDR(is64, e_shnum), 0);
	put(&variant.image, layout->shoff, SHDR(is64, sh_size), max_of(SHDR(is64, sh_size)));
	variant_end(&variant, "section0-count-max", ELF_CORPUS_SAME_FACTS);
	if (!variant_begin(&variant, writer, base))
		return;
	put(&variant.image, 0, EHDR(is64, e_shnum), 0);
	put(&variant.image, layout->shoff, SHDR(is64, sh_size), (base->size - layout->shoff) / layout->shentsize);
	variant_end(&variant, "section0-count-file", ELF_CORPUS_SAME_FACTS);
}

static void emit_segment_lies(struct writer *writer, const struct image *base, const struct layout *layout)
{
	bool is64 = base->is64;
	if (layout->has_dynamic) {
		uint64_t at = phdr_at(layout, layout->dynamic_phdr);
		struct field offset = PHDR(is64, p_offset), size = PHDR(is64, p_filesz);
		emit_field(writer, base, "dynamic-offset-beyond", ELF_CORPUS_ERROR, at, offset, base->size);
		emit_field(writer, base, "dynamic-offset-max", ELF_CORPUS_ERROR, at, offset, max_of(offset));
		emit_field(writer, base, "dynamic-size-beyond", ELF_CORPUS_ERROR, at, size,
			   base->size - layout->dynamic_offset + 1);
		emit_field(writer, base, "dynamic-size-max", ELF_CORPUS_ERROR, at, size, max_of(size));
		/* Empty, the loader skips it (separate debuginfo); shorter than one entry, it holds no DT_NULL. */
		emit_field(writer, base, "dynamic-size-0", ELF_CORPUS_ANY, at, size, 0);
		emit_field(writer, base, "dynamic-size-1", ELF_CORPUS_ERROR, at, size, 1);
	}
	if (layout->has_strtab) {
		/* The segment holding the strings claims more than the file has: what is there still reads. */
		uint64_t at = phdr_at(layout, layout->strtab_phdr);
		emit_field(writer, base, "strings-segment-beyond", ELF_CORPUS_SAME_FACTS, at, PHDR(is64, p_filesz),
			   base->size - get(base, at, PHDR(is64, p_offset)) + 0x10000);
	}
	if (layout->has_interp) {
		uint64_t at = phdr_at(layout, layout->interp_phdr);
		emit_field(writer, base, "interp-offset-beyond", ELF_CORPUS_ERROR, at, PHDR(is64, p_offset), base->size);
		const char *interp = (const char *)base->bytes + layout->interp_offset;
		size_t length = strnlen(interp, layout->interp_size);
		if (length > 0 && length < layout->interp_size)
			emit_field(writer, base, "interp-unterminated", ELF_CORPUS_ERROR, at, PHDR(is64, p_filesz), length);
	}
}

/* The index of the first entry with tag before DT_NULL, or SIZE_MAX. */
static size_t find_entry(const struct image *image, const struct layout *layout, uint64_t tag)
{
	for (size_t i = 0; i < layout->null_index; i++)
		if (get(image, dyn_at(layout, i), DYN_TAG(image->is64)) == tag)
			return i;
	return SIZE_MAX;
}

static void emit_dynamic_lies(struct writer *writer, const struct image *base, const struct layout *layout)
{
	bool is64 = base->is64;
	struct field value = DYN_VALUE(is64);
	if (!layout->has_dynamic || !layout->has_null)
		return;
	struct variant variant;
	if (!variant_begin(&variant, writer, base))
		return;
	for (uint64_t i = layout->null_index; i < layout->dynamic_size / layout->dynentsize; i++) {
		put(&variant.image, dyn_at(layout, i), DYN_TAG(is64), DT_DEBUG);
		put(&variant.image, dyn_at(layout, i), value, 0);
	}
	variant_end(&variant, "no-dt-null", ELF_CORPUS_ERROR);

	size_t strtab = find_entry(base, layout, DT_STRTAB), strsz = find_entry(base, layout, DT_STRSZ);
	if (!layout->has_strtab || strtab == SIZE_MAX || strsz == SIZE_MAX)
		return;
	struct {
		uint64_t tag;
		const char *name;
	} string_tags[] = {
		{ DT_SONAME, "soname" }, { DT_NEEDED, "needed" }, { DT_RPATH, "rpath" }, { DT_RUNPATH, "runpath" },
	};
	bool any_string = false;
	for (size_t t = 0; t < sizeof(string_tags) / sizeof(string_tags[0]); t++) {
		size_t i = find_entry(base, layout, string_tags[t].tag);
		if (i == SIZE_MAX)
			continue;
		any_string = true;
		char name[64];
		snprintf(name, sizeof(name), "%s-beyond-strsz", string_tags[t].name);
		emit_field(writer, base, name, ELF_CORPUS_ERROR, dyn_at(layout, i), value, layout->strsz);
		snprintf(name, sizeof(name), "%s-max", string_tags[t].name);
		emit_field(writer, base, name, ELF_CORPUS_ERROR, dyn_at(layout, i), value, max_of(value));
		/* DT_STRSZ ending inside this string: it is no longer terminated within the table. */
		uint64_t index = get(base, dyn_at(layout, i), value);
		const char *string = dynamic_string(base, layout, index);
		if (string && string[0]) {
			snprintf(name, sizeof(name), "strsz-cuts-%s", string_tags[t].name);
			emit_field(writer, base, name, ELF_CORPUS_ERROR, dyn_at(layout, strsz), value, index + 1);
		}
	}
	if (!any_string)
		return;
	uint64_t outside = max_of(value) & ~UINT64_C(0xffff);
	emit_field(writer, base, "strtab-outside", ELF_CORPUS_ERROR, dyn_at(layout, strtab), value, outside);
	emit_field(writer, base, "strtab-0", ELF_CORPUS_ANY, dyn_at(layout, strtab), value, 0);
	emit_field(writer, base, "strsz-0", ELF_CORPUS_ERROR, dyn_at(layout, strsz), value, 0);
	emit_field(writer, base, "strsz-beyond-file", ELF_CORPUS_ERROR, dyn_at(layout, strsz), value, base->size + 1);
	emit_field(writer, base, "strsz-max", ELF_CORPUS_ERROR, dyn_at(layout, strsz), value, max_of(value));
}

static void emit_compact_file(struct writer *writer, const struct spec *spec, bool is64, bool big, const char *name,
			      enum elf_corpus_expect expect)
{
	struct image image;
	if (!build_compact(spec, is64, big, &image)) {
		writer->failed = true;
		return;
	}
	emit(writer, name, expect, image.bytes, image.size);
	free(image.bytes);
}

/* Compact copies: as the source, converted to the other byte order and class, and with counts and
   lengths at the edges of what a reader takes (the tests look these up by name). */
static void emit_compacts(struct writer *writer, const struct image *base, const struct spec *spec)
{
	static char long_runpath[70001], longest_runpath[60001];
	static char needed_names[257][24];
	emit_compact_file(writer, spec, base->is64, base->big, "compact", ELF_CORPUS_SAME_FACTS);
	emit_compact_file(writer, spec, base->is64, !base->big, "compact-other-order", ELF_CORPUS_SAME_DYNAMIC);
	emit_compact_file(writer, spec, !base->is64, base->big, "compact-other-class", ELF_CORPUS_SAME_DYNAMIC);

	memset(long_runpath, 'r', sizeof(long_runpath) - 1);
	memset(longest_runpath, 'r', sizeof(longest_runpath) - 1);
	struct spec changed = *spec;
	changed.entries = NULL;
	changed.count = changed.capacity = 0;
	for (size_t i = 0; i < spec->count; i++)
		if (spec->entries[i].tag != DT_NEEDED && spec->entries[i].tag != DT_RUNPATH && spec->entries[i].tag != DT_RPATH)
			spec_add(&changed, spec->entries[i].tag, spec->entries[i].value, spec->entries[i].string);
	size_t kept = changed.count;
	for (size_t i = 0; i < 257; i++) {
		snprintf(needed_names[i], sizeof(needed_names[i]), "libneeded%zu.so.1", i);
		if (!spec_add(&changed, DT_NEEDED, 0, needed_names[i])) {
			writer->failed = true;
			free(changed.entries);
			return;
		}
	}
	emit_compact_file(writer, &changed, base->is64, base->big, "needed-257", ELF_CORPUS_ANY);
	changed.count--;
	emit_compact_file(writer, &changed, base->is64, base->big, "needed-256", ELF_CORPUS_ANY);
	changed.count = kept;
	if (!spec_add(&changed, DT_RUNPATH, 0, longest_runpath)) {
		writer->failed = true;
		free(changed.entries);
		return;
	}
	emit_compact_file(writer, &changed, base->is64, base->big, "runpath-60000", ELF_CORPUS_ANY);
	changed.entries[changed.count - 1].string = long_runpath;
	emit_compact_file(writer, &changed, base->is64, base->big, "runpath-70000", ELF_CORPUS_ANY);
	free(changed.entries);
}

size_t elf_corpus_write(const char *source, const char *folder, struct elf_corpus_file **files)
{
	struct writer writer = { .folder = folder };
	struct image mapped, base = { NULL, 0, false, false };
	struct spec spec = { .entries = NULL };
	*files = NULL;
	if (!map_source(source, &mapped))
		return 0;
	struct layout layout = walk(&mapped);
	bool has_spec = extract_spec(&mapped, &layout, &spec);
	if (mapped.size <= SMALL_SOURCE) {
		base = mapped;
	} else if (!has_spec || !build_compact(&spec, mapped.is64, mapped.big, &base)) {
		writer.failed = true;
		goto out;
	} else {
		layout = walk(&base);
	}

	emit_not_elf(&writer);
	emit_truncations(&writer, &base, &layout);
	emit_bit_flips(&writer, &base, &layout);
	if (layout.walkable) {
		emit_header_lies(&writer, &base, &layout);
		emit_segment_lies(&writer, &base, &layout);
		emit_dynamic_lies(&writer, &base, &layout);
	}
	if (has_spec)
		emit_compacts(&writer, &base, &spec);
out:
	if (base.bytes != mapped.bytes)
		free(base.bytes);
	free(spec.entries);
	unmap_source(&mapped);
	if (writer.failed) {
		elf_corpus_free(writer.files, writer.count);
		return 0;
	}
	*files = writer.files;
	return writer.count;
}

void elf_corpus_free(struct elf_corpus_file *files, size_t count)
{
	for (size_t i = 0; files && i < count; i++) {
		free(files[i].path);
		free(files[i].name);
	}
	free(files);
}
