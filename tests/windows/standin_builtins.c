/* A stand-in for nvrtc-builtins64_130.dll (and, copied under other names, for other dependents):
   one function whose value tells which copy was loaded. */
#ifndef STANDIN_VALUE
#define STANDIN_VALUE 130
#endif

__declspec(dllexport) int standin_value(void);
__declspec(dllexport) int standin_value(void) { return STANDIN_VALUE; }
