/* Registering one folder an NVIDIA library was loaded from: the registry records it, the log says
   so and the event log gets its "register" line. Every front registers through here. */
#pragma once

#include "registry.h"

/* One library seen loaded (or about to be, for a load by path). */
struct origin_load {
	int family;
	const char *folder; /* the folder to register: that of the path it was loaded as */
	const char *path;   /* the file, as loaded */
	const char *name;   /* its soname, or its file name */
	const char *caller; /* the object that asked for it; NULL when the runtime did not see the request */
	const char *reason; /* how the front learned of it */
};

/* Registers load->folder as an origin of load->family. Not under the loader's locks: it logs. */
enum registry_result origins_register(const struct origin_load *load);
