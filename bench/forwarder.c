/* The tail-jump forwarder: a preload library whose dlopen and dlmopen jump straight into libc's
   (forwarder.S). It costs what any interposer of dlopen costs at the least: the empty preload's
   extra object, one more symbol lookup at bind time and one indirect jump a call. */
#define _GNU_SOURCE
#include <dlfcn.h>

static void *dlopen_before_start(const char *file, int mode);
static void *dlmopen_before_start(Lmid_t namespace, const char *file, int mode);

/* Read by forwarder.S. A dlopen that runs before the constructor (from an earlier constructor)
   reaches the C functions below, which are then its caller; nothing in the benchmark does. */
__attribute__((visibility("hidden"))) void *(*forwarder_real_dlopen)(const char *, int) = dlopen_before_start;
__attribute__((visibility("hidden"))) void *(*forwarder_real_dlmopen)(Lmid_t, const char *, int) = dlmopen_before_start;

static void resolve(void)
{
	forwarder_real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	forwarder_real_dlmopen = (void *(*)(Lmid_t, const char *, int))dlsym(RTLD_NEXT, "dlmopen");
}

static void *dlopen_before_start(const char *file, int mode)
{
	resolve();
	return forwarder_real_dlopen(file, mode);
}

static void *dlmopen_before_start(Lmid_t namespace, const char *file, int mode)
{
	resolve();
	return forwarder_real_dlmopen(namespace, file, mode);
}

__attribute__((constructor)) static void start(void) { resolve(); }
