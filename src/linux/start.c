#define _GNU_SOURCE
#include "start.h"

#include "config.h"
#include "loaded.h"
#include "log.h"
#include "lookup.h"
#include "real.h"
#include "registry.h"
#include "report.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
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

bool start_in_audit_namespace(void)
{
	Dl_info info;
	struct link_map *self = NULL;
	Lmid_t lmid = LM_ID_BASE;
	return dladdr1((const void *)start_in_audit_namespace, &info, (void **)&self, RTLD_DL_LINKMAP) && self &&
	       dlinfo(self, RTLD_DI_LMID, &lmid) == 0 && lmid != LM_ID_BASE;
}
