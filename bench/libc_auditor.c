/* The floor of an audit library that calls libc: the handshake, and a search callback that asks
   libc one thing. Needing libc.so.6, it makes the loader load and relocate a second libc in the
   audit namespace, which the empty auditor (that needs nothing) does not. */
#define _GNU_SOURCE
#include <link.h>
#include <string.h>

unsigned int la_version(unsigned int version);
char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag);

unsigned int la_version(unsigned int version) { return version < LAV_CURRENT ? version : LAV_CURRENT; }

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	(void)cookie, (void)flag;
	return strchr(name, '\0') ? (char *)name : NULL;
}
