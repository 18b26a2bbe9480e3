/* Registering one folder an NVIDIA library was loaded from: the registry records it, the log says
   so and the event log gets its "register" line. Every front registers through here. */
#pragma once

#include "registry.h"

#include <stdbool.h>

/* One library seen loaded (or about to be, for a load by path). */
struct origin_load {
	int family;
	const char *folder; /* the folder to register: that of the path it was loaded as */
	const char *path;   /* the file, as loaded */
	const char *name;   /* its soname, or its file name */
	const char *caller; /* the object that asked for it; NULL when the runtime did not see the request */
	const char *reason; /* how the front learned of it */
	/* caller asked for it by name (a bare-name dlopen, a DT_NEEDED, the runtime's load for it): a
	   mixed origin is looked for (origins_check_mixed), which reads folders and allocates, so never
	   from inside the loader (the audit front's la_objopen). A load by path is the caller's choice. */
	bool dependent;
};

/* Registers load->folder as an origin of load->family. Not under the loader's locks: it logs. */
enum registry_result origins_register(const struct origin_load *load);

/* Mixed origins, by the inspector's rule: an NVIDIA library (asker, a path) that gets an NVIDIA
   library (name, of family, loaded as path) from another installation than its own
   (search_same_installation). already_loaded: it was loaded before asker asked (first loaded wins);
   else the loader or the runtime just took it for asker. The caller looks once for each name in a process
   (report_mixed_origin_first). Reported with the copy the asker's own installation holds when it holds one, under every policy that
   watches them (fallback and coherent). Not under the loader's locks: it logs. */
void origins_check_mixed(const char *name, int family, const char *asker, const char *path, bool already_loaded);
