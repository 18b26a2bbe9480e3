/* The floor of the audit front: an auditor that answers the handshake and nothing else. */
#define _GNU_SOURCE
#include <link.h>

unsigned int la_version(unsigned int version);
unsigned int la_version(unsigned int version) { return version < LAV_CURRENT ? version : LAV_CURRENT; }
