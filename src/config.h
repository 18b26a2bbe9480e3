/* NVINTERPOSE_* settings, read once. */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <stddef.h>

enum policy {
	POLICY_FALLBACK, /* the loader's own search first; registered origins only when it fails */
	POLICY_COHERENT, /* an NVIDIA library's NVIDIA dependents from its own folder first */
	POLICY_OFF,      /* observe and record only */
};

#define CONFIG_PATH_MAX_ENTRIES 32
#define CONFIG_FOLDER_MAX 4096
#define CONFIG_PATH_TEXT 8192

/* Kept small: it is read into static storage at every process start, and each page it spans is a
   page fault in every process the runtime is preloaded into. */
struct config {
	bool disabled; /* NVINTERPOSE_DISABLE=1: no other setting read, the fronts leave every call alone */
	bool secure; /* AT_SECURE: every setting ignored, policy off */
	enum policy policy;
	enum log_level log_level;
	bool add_dll_directory; /* Windows: AddDllDirectory on each origin (NVINTERPOSE_ADD_DLL_DIRECTORY) */
	bool inject_children;   /* Windows: the runtime in child processes (NVINTERPOSE_CHILDREN) */
	bool patch;             /* Linux, attached late: dlopen bindings pointed at the hooks (NVINTERPOSE_PATCH) */
	long report_pid;        /* NVINTERPOSE_REPORT: the process that prints the exit report; 0: none */
	/* The run's report file, where the other processes append their reports
	   (platform_report_file); "" where there is none. */
	char report_file[CONFIG_FOLDER_MAX];
	bool report_kept;       /* NVINTERPOSE_REPORT=keep: the report kept for nvi_report, printed nowhere */
	char log_file[CONFIG_FOLDER_MAX];
	size_t path_count;
	unsigned short path_offset[CONFIG_PATH_MAX_ENTRIES]; /* into path_text; see config_path */
	size_t path_text_used;
	char path_text[CONFIG_PATH_TEXT];
};

#ifdef _WIN32
#define CONFIG_PATH_SEPARATOR ';'
#else
#define CONFIG_PATH_SEPARATOR ':'
#endif

/* Reads the settings through getenv_fn (getenv in the runtime, a table in tests). A bad value is
   reported through the log and replaced by its default; it never stops the host process. */
void config_read(struct config *config, const char *(*getenv_fn)(const char *name), bool secure);

/* Entry i of NVINTERPOSE_PATH (i < path_count). */
const char *config_path(const struct config *config, size_t i);
/* Appends a folder to the NVINTERPOSE_PATH list when it is an absolute, existing folder and there
   is room; otherwise says why through the log and returns false. */
bool config_add_path(struct config *config, const char *folder);

/* The settings the runtime read at start-up. */
extern struct config config_current;
static inline const struct config *config_get(void) { return &config_current; }
void config_set(const struct config *config);
/* config_read into the settings config_get returns (no copy). */
void config_load(const char *(*getenv_fn)(const char *name), bool secure);

/* Setting i of the table of NVINTERPOSE_* settings (i from 0; NULL past the last); *runtime (when
   not NULL) says whether config_read reads it. */
const char *config_setting(size_t i, bool *runtime);

const char *config_policy_name(enum policy policy);
bool config_parse_policy(const char *text, enum policy *policy);
bool config_parse_log_level(const char *text, enum log_level *level);
