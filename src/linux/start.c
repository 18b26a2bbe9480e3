#define _GNU_SOURCE
#include "start.h"

#include "config.h"
#include "loaded.h"
#include "log.h"
#include "lookup.h"
#include "real.h"
#include "registry.h"
#include "report.h"

#include <gnu/libc-version.h>
#include <link.h>
#include <pthread.h>
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
	lookup_init();
	report_init();
}

void start_once(void)
{
	real_resolve(); /* outside the once: see real.h */
	pthread_once(&once, initialize);
}

void start_audit_once(void) { pthread_once(&once, initialize); }

bool start_libdl_usable(void)
{
	int major = 0, minor = 0;
	return sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 && (major > 2 || (major == 2 && minor >= 34));
}

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
