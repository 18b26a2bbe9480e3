#include "string_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_of(const char *key)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	for (const unsigned char *s = (const unsigned char *)key; *s; s++)
		h = (h ^ *s) * 1099511628211u;
	return h;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t slot_of(const struct string_map *map, const char *key)
{
	size_t mask = map->capacity - 1;
	size_t i = (size_t)hash_of(key) & mask;
	while (map->keys[i] && strcmp(map->keys[i], key) != 0)
		i = (i + 1) & mask;
	return i;
}

void *string_map_get(const struct string_map *map, const char *key)
{
	if (map->capacity == 0)
		return NULL;
	size_t i = slot_of(map, key);
	return map->keys[i] ? map->values[i] : NULL;
}

static bool grow(struct string_map *map)
{
	size_t capacity = map->capacity ? map->capacity * 2 : 64;
	struct string_map bigger = { 0, capacity, calloc(capacity, sizeof(char *)), calloc(capacity, sizeof(void *)) };
	if (!bigger.keys || !bigger.values) {
		free(bigger.keys);
		free(bigger.values);
		return false;
	}
	for (size_t i = 0; i < map->capacity; i++) {
		if (!map->keys[i])
			continue;
		size_t j = slot_of(&bigger, map->keys[i]);
		bigger.keys[j] = map->keys[i];
		bigger.values[j] = map->values[i];
		bigger.count++;
	}
	free(map->keys);
	free(map->values);
	*map = bigger;
	return true;
}

bool string_map_put(struct string_map *map, const char *key, void *value)
{
	/* At most half full: probes stay short. */
	if ((map->count + 1) * 2 > map->capacity && !grow(map))
		return false;
	size_t i = slot_of(map, key);
	if (!map->keys[i]) {
		if (!(map->keys[i] = strdup(key)))
			return false;
		map->count++;
	}
	map->values[i] = value;
	return true;
}

void string_map_clear(struct string_map *map, void (*free_value)(void *value))
{
	for (size_t i = 0; i < map->capacity; i++) {
		if (map->keys[i] && free_value && map->values[i])
			free_value(map->values[i]);
		free(map->keys[i]);
	}
	free(map->keys);
	free(map->values);
	memset(map, 0, sizeof(*map));
}
