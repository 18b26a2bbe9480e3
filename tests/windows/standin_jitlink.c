/* A stand-in for nvJitLink_120_0.dll, a leaf: the stand-in cuSPARSE imports its function, and
   standin_value tells the test which copy was loaded (another installation's copy is built with
   another value). */
#ifndef STANDIN_JITLINK_VALUE
#define STANDIN_JITLINK_VALUE 120
#endif

__declspec(dllexport) int standin_jitlink_value(void);
__declspec(dllexport) int standin_jitlink_value(void) { return STANDIN_JITLINK_VALUE; }

__declspec(dllexport) int standin_value(void);
__declspec(dllexport) int standin_value(void) { return STANDIN_JITLINK_VALUE; }
