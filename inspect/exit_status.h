/* nvinterpose-inspect's exit statuses. Something missing is an answer, a cut tree an incomplete
   one, a usage error none. */
#pragma once

#include <stdlib.h>

#define EXIT_FINDINGS 1 /* a dependency is missing; --scan: a mix or a missing one found */
#define EXIT_USAGE 2    /* a usage error, or a file that cannot be inspected */
#define EXIT_CUT 3      /* a tree was cut at its bound, and nothing was found missing before it */
