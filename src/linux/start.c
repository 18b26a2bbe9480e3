#define _GNU_SOURCE
#include "start.h"

#include "config.h"
#include "loaded.h"
#include "log.h"
#include "real.h"
#include "registry.h"
#include "report.h"

#include <gnu/libc-version.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *environment(const char *name) { return getenv(name); }

static void initialize(void)
{
	config_load(environment, getauxval(AT_SECURE) != 0);
	if (config_get()->log_file[0])
		log_open_event_file(config_get()->log_file);
	registry_init();
	loaded_init();
	report_init();
}

void start_once(void)
{
	real_resolve(); /* outside the once: see real.h */
	pthread_once(&once, initialize);
}

void start_audit_once(void)
{
	if (start_libdl_usable())
		start_once();
	else
		pthread_once(&once, initialize);
}

/* The running glibc's version, read once (any thread may get there first; each writes the same). */
static _Atomic int glibc_version = -1; /* major * 1000 + minor; 0 where it cannot be read */

bool start_glibc_at_least(int major, int minor)
{
	int version = atomic_load_explicit(&glibc_version, memory_order_relaxed);
	if (version < 0) {
		int running_major = 0, running_minor = 0;
		version = sscanf(gnu_get_libc_version(), "%d.%d", &running_major, &running_minor) == 2 ? running_major * 1000 + running_minor : 0;
		atomic_store_explicit(&glibc_version, version, memory_order_relaxed);
	}
	return version >= major * 1000 + minor;
}

bool start_libdl_usable(void) { return start_glibc_at_least(2, 34); }

/* dl_iterate_phdr reports the objects of its caller's namespace only, in load order: the base
   namespace's first is the program (its name ""; also when ld.so was run as a command, which names
   the program "" once mapped), another namespace's first the object dlmopen or LD_AUDIT loaded. */
static int first_object_named(struct dl_phdr_info *info, size_t size, void *named)
{
	(void)size;
	*(bool *)named = info->dlpi_name && info->dlpi_name[0];
	return 1;
}

bool start_in_audit_namespace(void)
{
	bool named = false;
	dl_iterate_phdr(first_object_named, &named);
	return named;
}
