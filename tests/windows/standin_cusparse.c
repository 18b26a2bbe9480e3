/* A stand-in for cusparse64_12.dll: like the real one it imports nvJitLink_120_0.dll through its
   import table, which the CUDA 12 wheels put in a sibling folder (nvidia\nvjitlink\bin) that the
   loader does not search for a DLL loaded from nvidia\cusparse\bin. */
__declspec(dllimport) int standin_jitlink_value(void);

__declspec(dllexport) int standin_cusparse_value(void);
__declspec(dllexport) int standin_cusparse_value(void) { return standin_jitlink_value() + 1; }

__declspec(dllexport) int standin_value(void);
__declspec(dllexport) int standin_value(void) { return standin_cusparse_value(); }
