/* A stand-in for a DLL whose load the runtime can help only in part: it imports cusparse64_12.dll,
   which the runtime can supply, and a DLL that is not NVIDIA's and that no folder holds
   (standin_helper.def). Its load fails with or without the runtime, and the runtime must leave
   nothing of its own loaded after it. */
__declspec(dllimport) int standin_cusparse_value(void);
__declspec(dllimport) int standin_helper_value(void);

__declspec(dllexport) int standin_value(void);
__declspec(dllexport) int standin_value(void) { return standin_cusparse_value() + standin_helper_value(); }
