/* src/search.c as the Windows build compiles it (backslashes, "bin", names compared without case),
   for the wheel-root fuzzer on Linux: only its wheel-root rule is called. */
#define _WIN32 1
#define search_candidates search_candidates_windows
#define search_step_name search_step_name_windows
#define search_step_key search_step_key_windows
#define search_wheel_root search_wheel_root_windows
#define search_places search_places_windows
#define search_installation search_installation_windows
#define search_same_installation search_same_installation_windows
#include "../src/search.c"
