/* Registering one folder an NVIDIA library was loaded from: the registry records it, the log says
   so and the event log gets its "register" line. Every front registers through here. */
#pragma once

#include "registry.h"

/* Registers folder as an origin of family; name is the library's name (its soname or file name),
   reason how the front learned of it. Not under the loader's locks: it logs. */
enum registry_result origins_register(int family, const char *folder, const char *name, const char *reason);
