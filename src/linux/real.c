#include "real.h"

#include <stddef.h>

void *(*real_dlopen)(const char *file, int mode);
void *(*real_dlmopen)(Lmid_t namespace, const char *file, int mode);

void real_resolve(void)
{
	/* Each pointer is written whole by whichever thread gets there, with the same value. */
	if (!real_dlmopen)
		real_dlmopen = (void *(*)(Lmid_t, const char *, int))dlsym(RTLD_NEXT, "dlmopen");
	if (!real_dlopen)
		real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
}
