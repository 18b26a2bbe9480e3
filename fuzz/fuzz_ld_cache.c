/* libFuzzer target: the ld.so.cache reader (src/loader/ld_cache.c) on arbitrary files. An error
   comes with a one-line message and an empty cache; a cache read keeps its entry count within the
   file, and every lookup (of a few fixed names and of the keys of its first, middle and last
   entries) gives no more matches than entries, each a string inside the file, with a hwcaps name
   from the file's own list. */
#include "fuzz_file.h"
#include "loader/ld_cache.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool inside(const struct ld_cache *cache, const char *s)
{
	return s >= cache->data && s < cache->data + cache->size && memchr(s, '\0', (size_t)(cache->data + cache->size - s));
}

static void look_up(const struct ld_cache *cache, const char *name)
{
	struct ld_cache_entry entries[8];
	size_t count = ld_cache_lookup(cache, name, entries, 8);
	if (count > cache->count)
		abort();
	for (size_t i = 0; i < count && i < 8; i++) {
		if (!inside(cache, entries[i].path))
			abort();
		if (entries[i].hwcaps) {
			bool listed = false;
			for (size_t k = 0; k < cache->hwcaps_count; k++)
				listed = listed || cache->hwcaps[k] == entries[i].hwcaps;
			if (!listed || !inside(cache, entries[i].hwcaps))
				abort();
		}
	}
}

/* The key of entry index, when it is a string inside the file (the reader's own layout). */
static const char *key_of(const struct ld_cache *cache, uint32_t index)
{
	uint32_t offset;
	memcpy(&offset, cache->data + cache->base + 48 + (size_t)index * 24 + 4, sizeof(offset));
	if (offset >= cache->size - cache->base)
		return NULL;
	const char *s = cache->data + cache->base + offset;
	return memchr(s, '\0', cache->size - cache->base - offset) ? s : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ld_cache cache;
	char message[256];
	if (ld_cache_read(fuzz_file_of(data, size), &cache, message, sizeof(message)) != 0) {
		if (!message[0] || strchr(message, '\n') || cache.data || cache.count || cache.hwcaps)
			abort();
		return 0;
	}
	if (cache.base > cache.size || cache.count > (cache.size - cache.base) / 24)
		abort();
	for (size_t k = 0; k < cache.hwcaps_count; k++)
		if (cache.hwcaps[k] && !inside(&cache, cache.hwcaps[k]))
			abort();
	static const char *const names[] = { "libc.so.6", "libm.so.6", "libnvrtc.so.13", "libz.so.1", "", "lib" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		look_up(&cache, names[i]);
	if (cache.count) {
		uint32_t picks[] = { 0, cache.count / 2, cache.count - 1 };
		for (size_t i = 0; i < 3; i++) {
			const char *key = key_of(&cache, picks[i]);
			if (key)
				look_up(&cache, key);
		}
	}
	ld_cache_free(&cache);
	return 0;
}
