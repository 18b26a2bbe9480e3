#define _GNU_SOURCE
#include "start.h"

#include "config.h"
#include "loaded.h"
#include "log.h"
#include "path.h"
#include "real.h"
#include "registry.h"
#include "report.h"
#include "walk.h"

#include <gnu/libc-version.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define SETTING_PREFIX "NVINTERPOSE_"

/* The entries of the environment the settings are read from: NVINTERPOSE_*, and TMPDIR, where the
   run's report file lies (config.c). */
static bool is_read(const char *entry)
{
	return strncmp(entry, SETTING_PREFIX, sizeof(SETTING_PREFIX) - 1) == 0 || strncmp(entry, "TMPDIR=", 7) == 0;
}

/* Those entries as start-up found them, one after another, each ending in its '\0'; NULL when
   there were none. */
static char *settings;
static size_t settings_size;
/* The working folder at start-up, for a relative NVINTERPOSE_LOG_FILE (else empty). */
static char start_folder[PATH_MAX];

void start_copy_settings(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&done))
		return;
	extern char **environ;
	size_t size = 0;
	for (char **entry = environ; entry && *entry; entry++)
		if (is_read(*entry))
			size += strlen(*entry) + 1;
	char *copy = size ? malloc(size) : NULL;
	if (!copy)
		return; /* none (or no memory: then as if none were set) */
	size_t used = 0;
	for (char **entry = environ; *entry && used < size; entry++) {
		size_t length = strlen(*entry) + 1;
		if (is_read(*entry) && used + length <= size) {
			memcpy(copy + used, *entry, length);
			used += length;
		}
	}
	settings = copy;
	settings_size = used;
	const char *log_file = start_setting("NVINTERPOSE_LOG_FILE");
	if (log_file && log_file[0] && log_file[0] != '/' && !getcwd(start_folder, sizeof(start_folder)))
		start_folder[0] = '\0';
}

const char *start_setting(const char *name)
{
	size_t length = strlen(name);
	for (size_t at = 0; at < settings_size; at += strlen(settings + at) + 1)
		if (strncmp(settings + at, name, length) == 0 && settings[at + length] == '=')
			return settings + at + length + 1;
	return NULL;
}

bool start_has_settings(void) { return settings != NULL; }

/* The settings, parsed once. */
static struct walk_once settings_once = WALK_ONCE_INIT;

static void parse_settings(void)
{
	start_copy_settings(); /* a copy attached before the constructor ran: the environment now */
	config_load(start_setting, getauxval(AT_SECURE) != 0);
}

void start_read_settings(void) { walk_once(&settings_once, parse_settings); }

bool start_wanted_at_exit(bool *not_started)
{
	*not_started = !start_done();
	if (*not_started && !start_has_settings())
		return false; /* nothing set: no report, no event log */
	start_read_settings();
	const struct config *config = config_get();
	return !config->disabled && (!*not_started || config->report_pid > 0 || config->log_file[0]);
}

static struct walk_once once = WALK_ONCE_INIT;

static void initialize(void)
{
	start_read_settings();
	const char *log_file = config_get()->log_file;
	char joined[PATH_MAX];
	/* A relative log file names a file in the folder the process started in. */
	if (log_file[0] && log_file[0] != '/' && start_folder[0] && path_join(joined, sizeof(joined), start_folder, '/', log_file))
		log_file = joined;
	if (log_file[0])
		log_open_event_file(log_file);
	registry_init();
	loaded_init();
	report_init();
}

void start_once(void)
{
	real_resolve(); /* outside the once: see real.h */
	walk_once(&once, initialize);
}

bool start_done(void) { return walk_once_done(&once); }

void start_audit_once(void)
{
	if (start_libdl_usable())
		start_once();
	else
		walk_once(&once, initialize);
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
