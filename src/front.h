/* What the shared rooms ask of the platform front (src/linux/preload.c, src/windows/). */
#pragma once

/* Makes the registry current: registers the origins of libraries loaded since the last call. */
void front_sync(void);

/* The attach scan again (nvi_rescan): returns the number of dependents it loaded. */
int front_rescan(void);
