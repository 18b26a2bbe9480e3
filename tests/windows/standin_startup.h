/* What the stand-in DLL a probe program imports saw during the program's static initialization. */
#pragma once

#include <stdbool.h>

struct standin_startup {
	unsigned long thread;         /* the thread its DLL_PROCESS_ATTACH ran on */
	bool runtime_loaded;          /* nvinterpose.dll was in the process by then */
	bool hooks_in_place;          /* its own LoadLibraryW import slot pointed into nvinterpose.dll */
	int threads_attached;         /* DLL_THREAD_ATTACH calls since: threads started after it */
};

#ifdef STANDIN_STARTUP_BUILD
#define STANDIN_STARTUP_API __declspec(dllexport)
#else
#define STANDIN_STARTUP_API __declspec(dllimport)
#endif
STANDIN_STARTUP_API const struct standin_startup *standin_startup_report(void);
