/* The registry is append-only and lives in static storage: entries are written under a spin lock
   and published by a release store of the count, so readers (any thread, any time) see whole
   entries without locking, and nothing is ever freed under them. */
#include "registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>

#define REGISTRY_TEXT_BYTES (128 * 1024)

static struct registry_origin origins[REGISTRY_MAX_ORIGINS];
static char text[REGISTRY_TEXT_BYTES];
static size_t text_used;
static _Atomic size_t count;
static atomic_flag writing = ATOMIC_FLAG_INIT;

static void lock(void)
{
	while (atomic_flag_test_and_set_explicit(&writing, memory_order_acquire))
		;
}

static void unlock(void) { atomic_flag_clear_explicit(&writing, memory_order_release); }

/* A fork while another thread appends leaves the lock held in the child, with no thread to release
   it. The half-written entry was never published, so the child may simply take the lock anew. */
static void reset_in_child(void) { atomic_flag_clear(&writing); }

void registry_init(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set(&done))
		pthread_atfork(NULL, NULL, reset_in_child);
}

static const struct registry_origin *find(int family, dev_t device, ino_t inode, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (origins[i].family == family && origins[i].device == device && origins[i].inode == inode)
			return &origins[i];
	return NULL;
}

enum registry_result registry_add_origin(int family, const char *folder)
{
	struct stat st;
	if (family < 0 || !folder || !folder[0]) {
		errno = EINVAL;
		return REGISTRY_ERROR;
	}
	if (stat(folder, &st) != 0)
		return REGISTRY_ERROR;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return REGISTRY_ERROR;
	}
	if (find(family, st.st_dev, st.st_ino, atomic_load_explicit(&count, memory_order_acquire)))
		return REGISTRY_KNOWN;

	size_t length = strlen(folder) + 1;
	enum registry_result result = REGISTRY_ADDED;
	lock();
	size_t n = atomic_load_explicit(&count, memory_order_relaxed);
	if (find(family, st.st_dev, st.st_ino, n)) {
		result = REGISTRY_KNOWN;
		goto out;
	}
	if (n == REGISTRY_MAX_ORIGINS || text_used + length > sizeof(text)) {
		errno = ENOSPC;
		result = REGISTRY_ERROR;
		goto out;
	}
	char *copy = memcpy(text + text_used, folder, length);
	text_used += length;
	origins[n] = (struct registry_origin){ family, st.st_dev, st.st_ino, copy };
	atomic_store_explicit(&count, n + 1, memory_order_release);
out:
	unlock();
	return result;
}

size_t registry_count(void) { return atomic_load_explicit(&count, memory_order_acquire); }

const struct registry_origin *registry_at(size_t index)
{
	return index < registry_count() ? &origins[index] : NULL;
}
