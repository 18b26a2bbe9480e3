/* A map from strings to pointers: the inspector looks at each file and folder once, however many
   trees name it. Open addressing; the keys are copied. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct string_map {
	size_t count, capacity;
	char **keys;
	void **values;
};

/* The value stored under key, or NULL. */
void *string_map_get(const struct string_map *map, const char *key);
/* Stores value under key (replacing any); false when memory runs out. */
bool string_map_put(struct string_map *map, const char *key, void *value);
/* Frees the keys and the table; each value is passed to free_value first (when not NULL). */
void string_map_clear(struct string_map *map, void (*free_value)(void *value));
