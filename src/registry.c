/* The registry is append-only and lives in static storage: entries are written under a spin lock
   and published by a release store of the count, so readers (any thread, any time) see whole
   entries without locking, and nothing is ever freed under them. */
#include "registry.h"

#include "platform.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

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
		platform_after_fork_in_child(reset_in_child);
}

static const struct registry_origin *find(int family, unsigned long long device, unsigned long long inode, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (origins[i].family == family && origins[i].device == device && origins[i].inode == inode)
			return &origins[i];
	return NULL;
}

enum registry_result registry_add_origin(int family, const char *folder)
{
	struct folder_identity identity;
	if (family < 0 || !folder || !folder[0]) {
		errno = EINVAL;
		return REGISTRY_ERROR;
	}
	if (!platform_folder_identity(folder, &identity)) /* errno ENOTDIR for a file */
		return REGISTRY_ERROR;
	if (find(family, identity.device, identity.inode, atomic_load_explicit(&count, memory_order_acquire)))
		return REGISTRY_KNOWN;

	size_t length = strlen(folder) + 1;
	enum registry_result result = REGISTRY_ADDED;
	lock();
	size_t n = atomic_load_explicit(&count, memory_order_relaxed);
	if (find(family, identity.device, identity.inode, n)) {
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
	origins[n] = (struct registry_origin){ family, identity.device, identity.inode, copy };
	atomic_store_explicit(&count, n + 1, memory_order_release);
out:
	unlock();
	return result;
}

bool registry_has_origin(int family, const char *folder)
{
	struct folder_identity identity;
	return family >= 0 && folder && platform_folder_identity(folder, &identity) &&
	       find(family, identity.device, identity.inode, atomic_load_explicit(&count, memory_order_acquire));
}

size_t registry_count(void) { return atomic_load_explicit(&count, memory_order_acquire); }

const struct registry_origin *registry_at(size_t index)
{
	return index < registry_count() ? &origins[index] : NULL;
}
