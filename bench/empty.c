/* The empty preload: a library with nothing of interest in it. Any preloaded library costs the
   loader one more object to compare names with on every dlopen; this is that floor. */
int bench_empty_preload(void);
int bench_empty_preload(void) { return 0; }
