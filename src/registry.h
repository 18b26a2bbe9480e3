/* Origin folders of NVIDIA libraries: per family, in the order first seen, one entry per folder
   (by device and inode), kept for the life of the process (a dlclose'd library's folder stays as
   its last known origin). Appends take a short spin lock; reads take none. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define REGISTRY_MAX_ORIGINS 512

struct registry_origin {
	int family;
	unsigned long long device; /* the folder's identity (platform.h) */
	unsigned long long inode;
	const char *folder; /* lives as long as the process */
};

enum registry_result { REGISTRY_ADDED, REGISTRY_KNOWN, REGISTRY_ERROR };

/* Records that family was loaded from folder. REGISTRY_ERROR (with errno) when the folder cannot be
   examined or the registry is full. Allocation-free: safe where the loader holds its locks. */
enum registry_result registry_add_origin(int family, const char *folder);

/* True when folder is registered for family already. */
bool registry_has_origin(int family, const char *folder);

/* A snapshot bound: entries below it never change. */
size_t registry_count(void);
const struct registry_origin *registry_at(size_t index);

/* Installs the fork handler that leaves a child a usable registry. */
void registry_init(void);
