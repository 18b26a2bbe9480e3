#include "environment.h"

#include <stdlib.h>
#include <string.h>

/* What passes, and why. */
static const struct {
	const char *name;
	bool prefix; /* every name that starts with it */
	bool child;  /* passed on to the children a test starts, too */
} kept[] = {
	{ "PATH", false, true },            /* the tools: cc, sh, python3, pip, tox, wine, qemu */
	{ "HOME", false, true },            /* clean_env's: a fresh folder of the test's own */
	{ "TMPDIR", false, true },          /* clean_env's: a fresh folder, removed when the test ends */
	{ "ASAN_OPTIONS", false, true },    /* the sanitizer builds' settings (.ci/run) */
	{ "LSAN_OPTIONS", false, true },
	{ "UBSAN_OPTIONS", false, true },
	{ "MALLOC_PERTURB_", false, true }, /* meson's: freed memory filled, in the children too */
	{ "NVI_", true, false },            /* the build's settings for the tests, and the suites' own */
	{ "CK_", true, false },             /* Check's */
};

static size_t name_length(const char *entry)
{
	const char *equals = strchr(entry, '=');
	return equals ? (size_t)(equals - entry) : strlen(entry);
}

bool test_environment_keeps(const char *entry, enum test_environment_for who)
{
	size_t length = name_length(entry);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		size_t n = strlen(kept[i].name);
		if ((kept[i].prefix ? length > n : length == n) && strncmp(entry, kept[i].name, n) == 0)
			return who == TEST_ENVIRONMENT_TEST || kept[i].child;
	}
	return false;
}

/* The index of the entry named like entry in list[0..count), or count. */
static size_t find(char **list, size_t count, const char *entry)
{
	size_t length = name_length(entry);
	for (size_t i = 0; i < count; i++)
		if (name_length(list[i]) == length && strncmp(list[i], entry, length) == 0)
			return i;
	return count;
}

char **test_environment_build(char *const *from, enum test_environment_for who, const char *const *extra)
{
	size_t capacity = 1, count = 0;
	for (size_t i = 0; from && from[i]; i++)
		capacity++;
	for (size_t i = 0; extra && extra[i]; i++)
		capacity++;
	char **built = malloc(capacity * sizeof(*built));
	if (!built)
		return NULL;
	for (size_t i = 0; from && from[i]; i++)
		if (test_environment_keeps(from[i], who) && find(built, count, from[i]) == count)
			built[count++] = from[i];
	for (size_t i = 0; extra && extra[i]; i++) {
		size_t at = find(built, count, extra[i]);
		bool empty = extra[i][name_length(extra[i])] == '=' && extra[i][name_length(extra[i]) + 1] == '\0';
		if (at < count) {
			memmove(built + at, built + at + 1, (count - at - 1) * sizeof(*built));
			count--;
		}
		if (!empty)
			built[count++] = (char *)extra[i];
	}
	built[count] = NULL;
	return built;
}
