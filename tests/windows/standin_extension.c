/* A stand-in for an extension module that is not NVIDIA's (a CuPy .pyd): it imports
   cusparse64_12.dll through its import table, and Python loads it by full path after
   os.add_dll_directory of cuSPARSE's folder. */
__declspec(dllimport) int standin_cusparse_value(void);

__declspec(dllexport) int standin_value(void);
__declspec(dllexport) int standin_value(void) { return standin_cusparse_value() + 1; }
