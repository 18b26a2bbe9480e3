/* Two stand-ins that import each other through their import tables, built from this file twice:
   as cufft64_11.dll (STANDIN_CUFFT, importing curand64_10.dll) and as curand64_10.dll (importing
   cufft64_11.dll), each laid out in a wheel folder of its own. The loader maps such a pair when it
   finds both; the runtime, which loads a missing import before the DLL that needs it, cannot, and
   its walk must end all the same. */
#ifdef STANDIN_CUFFT
#define OWN standin_cufft_value
#define OTHER standin_curand_value
#else
#define OWN standin_curand_value
#define OTHER standin_cufft_value
#endif

__declspec(dllimport) int OTHER(void);

__declspec(dllexport) int OWN(void);
__declspec(dllexport) int OWN(void) { return 1; }

__declspec(dllexport) int standin_value(void);
__declspec(dllexport) int standin_value(void) { return OWN() + OTHER(); }
