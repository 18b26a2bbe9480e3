/* The floor of an audit library that calls libc: the handshake, and a search callback that asks
   libc one thing. Needing libc.so.6, it makes the loader load and relocate a second libc in the
   audit namespace, which the empty auditor (that needs nothing) does not. The call is one the
   compiler cannot fold away (it folds strchr(name, '\0') and strlen(name) == 0, and a library
   whose calls are all folded needs no libc): the loader never passes a name of 4096 bytes or more,
   so every name is returned as given. */
#define _GNU_SOURCE
#include <link.h>
#include <string.h>

unsigned int la_version(unsigned int version);
char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag);

unsigned int la_version(unsigned int version) { return version < LAV_CURRENT ? version : LAV_CURRENT; }

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	(void)cookie, (void)flag;
	return strnlen(name, 4096) < 4096 ? (char *)name : NULL;
}
