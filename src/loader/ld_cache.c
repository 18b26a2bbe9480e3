/* The layout is glibc's sysdeps/generic/dl-cache.h, the search its elf/dl-cache.c. Every count and
   string offset comes from a file anyone with root can write, so each is checked against the file's
   size before it is used; the search is a binary search, bounded whatever order the file is in. */
#define _GNU_SOURCE
#include "loader/ld_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_HEADER_SIZE 16 /* magic[11], padding, nlibs */
#define OLD_ENTRY_SIZE 12  /* flags, key, value */
#define NEW_HEADER_SIZE 48
#define NEW_ENTRY_SIZE 24  /* flags, key, value, osversion, hwcap */
#define EXTENSION_MAGIC 0xeaa42174u
#define EXTENSION_TAG_GLIBC_HWCAPS 1
#define HWCAP_EXTENSION (UINT64_C(1) << 62)
#define HWCAP_ISA_LEVEL_MASK 0x3ffu
/* A real cache is a few hundred kilobytes; this bounds what a hostile one can make us read. */
#define MAX_CACHE_BYTES (256u << 20)

/* The flags an entry must carry, exactly, for the loader of this process (_dl_cache_check_flags):
   FLAG_ELF_LIBC6 and the ABI's own bits. */
#if defined(__x86_64__) && defined(__ILP32__)
#define EXPECTED_FLAGS 0x0803 /* FLAG_X8664_LIBX32 */
#elif defined(__x86_64__)
#define EXPECTED_FLAGS 0x0303 /* FLAG_X8664_LIB64 */
#elif defined(__aarch64__)
#define EXPECTED_FLAGS 0x0a03 /* FLAG_AARCH64_LIB64 */
#elif defined(__powerpc64__)
#define EXPECTED_FLAGS 0x0503 /* FLAG_POWERPC_LIB64 */
#elif defined(__s390x__)
#define EXPECTED_FLAGS 0x0403 /* FLAG_S390_LIB64 */
#elif defined(__i386__)
#define EXPECTED_FLAGS 0x0003
#else
#define EXPECTED_FLAGS 0 /* not known here: every libc6 entry, and the file check decides */
#endif

static uint32_t read32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t read64(const char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static int fail(char *message, size_t size, const char *path, const char *reason)
{
	snprintf(message, size, "%s: %s", path, reason);
	return -1;
}

/* A NUL-terminated string at offset in the new format's string space, or NULL. */
static const char *string_at(const struct ld_cache *cache, uint32_t offset)
{
	size_t space = cache->size - cache->base;
	if (offset >= space)
		return NULL;
	const char *s = cache->data + cache->base + offset;
	return memchr(s, '\0', space - offset) ? s : NULL;
}

static bool entry_flags_match(int32_t flags)
{
	return EXPECTED_FLAGS ? flags == EXPECTED_FLAGS : (flags & 0xff) == 0x03;
}

/* glibc's _dl_cache_libcmp: runs of digits compare as numbers ("libfoo.so.10" after ".so.9"). */
static int cache_compare(const char *p1, const char *p2)
{
	while (*p1 != '\0') {
		if (*p1 >= '0' && *p1 <= '9') {
			if (!(*p2 >= '0' && *p2 <= '9'))
				return 1;
			long long v1 = 0, v2 = 0;
			/* Bounded: a number longer than this is compared by its first 18 digits. */
			for (int n = 0; *p1 >= '0' && *p1 <= '9'; p1++, n++)
				if (n < 18)
					v1 = v1 * 10 + (*p1 - '0');
			for (int n = 0; *p2 >= '0' && *p2 <= '9'; p2++, n++)
				if (n < 18)
					v2 = v2 * 10 + (*p2 - '0');
			if (v1 != v2)
				return v1 < v2 ? -1 : 1;
		} else if (*p2 >= '0' && *p2 <= '9') {
			return -1;
		} else if (*p1 != *p2) {
			return (unsigned char)*p1 - (unsigned char)*p2;
		} else {
			p1++, p2++;
		}
	}
	return (unsigned char)*p1 - (unsigned char)*p2;
}

static const char *entry_at(const struct ld_cache *cache, uint32_t index)
{
	return cache->data + cache->base + NEW_HEADER_SIZE + (size_t)index * NEW_ENTRY_SIZE;
}

/* The name of entry index compared with name; an entry whose name cannot be read compares as
   greater, as in glibc. */
static int compare_entry(const struct ld_cache *cache, const char *name, uint32_t index)
{
	const char *key = string_at(cache, read32(entry_at(cache, index) + 4));
	return key ? cache_compare(name, key) : 1;
}

/* The glibc-hwcaps subfolder names of the extension section, or none. */
static void read_hwcaps_names(struct ld_cache *cache, uint32_t extension_offset)
{
	size_t space = cache->size - cache->base;
	if (extension_offset == 0 || extension_offset % 4 || extension_offset > space || space - extension_offset < 8)
		return;
	const char *extension = cache->data + cache->base + extension_offset;
	if (read32(extension) != EXTENSION_MAGIC)
		return;
	uint32_t sections = read32(extension + 4);
	if (sections > (space - extension_offset - 8) / 16)
		return;
	for (uint32_t i = 0; i < sections; i++) {
		const char *section = extension + 8 + 16 * (size_t)i;
		uint32_t tag = read32(section), offset = read32(section + 8), length = read32(section + 12);
		if (tag != EXTENSION_TAG_GLIBC_HWCAPS || length % 4 || offset > space || length > space - offset)
			continue;
		cache->hwcaps_count = length / 4;
		cache->hwcaps = calloc(cache->hwcaps_count ? cache->hwcaps_count : 1, sizeof(*cache->hwcaps));
		if (!cache->hwcaps) {
			cache->hwcaps_count = 0;
			return;
		}
		for (size_t k = 0; k < cache->hwcaps_count; k++)
			cache->hwcaps[k] = string_at(cache, read32(cache->data + cache->base + offset + 4 * k));
		return;
	}
}

static int read_header(struct ld_cache *cache, const char *path, char *message, size_t size)
{
	if (cache->size - cache->base < NEW_HEADER_SIZE || memcmp(cache->data + cache->base, NEW_MAGIC, strlen(NEW_MAGIC)) != 0)
		return fail(message, size, path, "not a glibc-ld.so.cache1.1 file");
	const char *header = cache->data + cache->base;
	uint8_t endian = (uint8_t)header[28] & 3;
	/* glibc refuses a cache written for the other byte order (flags 2 little, 3 big, 1 invalid). */
	uint8_t own = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3;
	if (endian == 1 || (endian != 0 && endian != own))
		return fail(message, size, path, "written for the other byte order");
	cache->count = read32(header + 20);
	if (cache->count > (cache->size - cache->base - NEW_HEADER_SIZE) / NEW_ENTRY_SIZE)
		return fail(message, size, path, "more entries than the file holds");
	read_hwcaps_names(cache, read32(header + 32));
	return 0;
}

int ld_cache_read(const char *path, struct ld_cache *cache, char *message, size_t size)
{
	memset(cache, 0, sizeof(*cache));
	message[0] = '\0';
	/* O_NONBLOCK: a FIFO in its place must not stop the inspector. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0)
		return fail(message, size, path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > MAX_CACHE_BYTES) {
		close(fd);
		return fail(message, size, path, "not a regular file of a cache's size");
	}
	cache->size = (size_t)st.st_size;
	cache->data = malloc(cache->size);
	size_t done = 0;
	while (cache->data && done < cache->size) {
		ssize_t n = pread(fd, cache->data + done, cache->size - done, (off_t)done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	if (!cache->data || done != cache->size) {
		ld_cache_free(cache);
		return fail(message, size, path, "cannot be read whole");
	}
	if (cache->size >= OLD_HEADER_SIZE && memcmp(cache->data, OLD_MAGIC, strlen(OLD_MAGIC)) == 0) {
		/* The old format first, the new one after it, 8-byte aligned. */
		uint32_t old_count = read32(cache->data + 12);
		if (old_count > (cache->size - OLD_HEADER_SIZE) / OLD_ENTRY_SIZE) {
			ld_cache_free(cache);
			return fail(message, size, path, "more entries than the file holds");
		}
		cache->base = (OLD_HEADER_SIZE + (size_t)old_count * OLD_ENTRY_SIZE + 7) & ~(size_t)7;
		if (cache->base >= cache->size) {
			ld_cache_free(cache);
			return fail(message, size, path, "only the old ld.so-1.7.0 format, which glibc no longer reads");
		}
	}
	if (read_header(cache, path, message, size) != 0) {
		ld_cache_free(cache);
		return -1;
	}
	return 0;
}

void ld_cache_free(struct ld_cache *cache)
{
	free(cache->data);
	free(cache->hwcaps);
	memset(cache, 0, sizeof(*cache));
}

const char *ld_cache_name_at(const struct ld_cache *cache, uint32_t index)
{
	if (index >= cache->count || !entry_flags_match((int32_t)read32(entry_at(cache, index))))
		return NULL;
	return string_at(cache, read32(entry_at(cache, index) + 4));
}

size_t ld_cache_lookup(const struct ld_cache *cache, const char *name, struct ld_cache_entry *entries, size_t capacity)
{
	/* search_cache: the entries are in descending order; find one that matches, go back to the
	   first that does, then take each usable one while the name still matches. */
	long left = 0, right = (long)cache->count - 1;
	size_t count = 0;
	while (left <= right) {
		long middle = left + (right - left) / 2;
		int order = compare_entry(cache, name, (uint32_t)middle);
		if (order != 0) {
			if (order < 0)
				left = middle + 1;
			else
				right = middle - 1;
			continue;
		}
		while (middle > 0 && compare_entry(cache, name, (uint32_t)(middle - 1)) == 0)
			middle--;
		for (; middle <= right && compare_entry(cache, name, (uint32_t)middle) == 0; middle++) {
			const char *entry = entry_at(cache, (uint32_t)middle);
			int32_t flags = (int32_t)read32(entry);
			uint64_t hwcap = read64(entry + 16);
			const char *path = string_at(cache, read32(entry + 8));
			if (!entry_flags_match(flags) || !path)
				continue;
			struct ld_cache_entry found = { .path = path };
			if (((hwcap >> 32) & ~(uint64_t)HWCAP_ISA_LEVEL_MASK) == (HWCAP_EXTENSION >> 32)) {
				uint32_t index = (uint32_t)hwcap;
				if (index >= cache->hwcaps_count || !cache->hwcaps[index])
					continue; /* the loader cannot name its subfolder either */
				found.hwcaps = cache->hwcaps[index];
			} else if (hwcap != 0) {
				found.legacy_hwcap = true;
			}
			if (count < capacity)
				entries[count] = found;
			count++;
		}
		break;
	}
	return count;
}
