/* NVINTERPOSE_* settings: parsed once, each bad value reported and replaced by its default. */
#include "config.h"

#include "log.h"
#include "platform.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct config config_current = { .policy = POLICY_FALLBACK, .log_level = LOG_ERROR };

static const char *const policy_names[] = {
	[POLICY_FALLBACK] = "fallback",
	[POLICY_COHERENT] = "coherent",
	[POLICY_OFF] = "off",
};
static const char *const level_names[] = {
	[LOG_ERROR] = "error",
	[LOG_WARN] = "warn",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

/* Every NVINTERPOSE_* setting, in the order the reference lists them. The one table:
   nvinterpose(7) shows it and a test holds the page to it, and another holds config_read to the
   names it reads. */
static const struct {
	const char *name;
	bool runtime; /* read by config_read; NVINTERPOSE_AUTO is the Python package's (its .pth) */
} settings[] = {
	{ "NVINTERPOSE_POLICY", true },
	{ "NVINTERPOSE_PATH", true },
	{ "NVINTERPOSE_LOG", true },
	{ "NVINTERPOSE_LOG_FILE", true },
	{ "NVINTERPOSE_REPORT", true },
	{ "NVINTERPOSE_DISABLE", true },
	{ "NVINTERPOSE_PATCH", true },
	{ "NVINTERPOSE_AUTO", false },
	{ "NVINTERPOSE_ADD_DLL_DIRECTORY", true },
	{ "NVINTERPOSE_CHILDREN", true },
};

const char *config_setting(size_t i, bool *runtime)
{
	if (i >= sizeof(settings) / sizeof(settings[0]))
		return NULL;
	if (runtime)
		*runtime = settings[i].runtime;
	return settings[i].name;
}

const char *config_policy_name(enum policy policy) { return policy_names[policy]; }

bool config_parse_policy(const char *text, enum policy *policy)
{
	for (size_t i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++)
		if (strcasecmp(text, policy_names[i]) == 0) {
			*policy = (enum policy)i;
			return true;
		}
	return false;
}

bool config_parse_log_level(const char *text, enum log_level *level)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcasecmp(text, level_names[i]) == 0) {
			*level = (enum log_level)i;
			return true;
		}
	return false;
}

static bool is_absolute(const char *folder)
{
#ifdef _WIN32
	return (folder[0] && folder[1] == ':' && (folder[2] == '\\' || folder[2] == '/')) ||
	       (folder[0] == '\\' && folder[1] == '\\');
#else
	return folder[0] == '/';
#endif
}

const char *config_path(const struct config *config, size_t i) { return config->path_text + config->path_offset[i]; }

/* One line for each of the first refused NVINTERPOSE_PATH entries, then one for all the rest: a
   value of a hundred thousand ':' must not print a hundred thousand lines in every process. */
#define CONFIG_PATH_REFUSALS_SHOWN 8

/* Counts a refused entry; true when its line is one to show. */
static bool show_refusal(size_t *refused) { return (*refused)++ < CONFIG_PATH_REFUSALS_SHOWN; }

static bool add_folder(struct config *config, const char *folder, size_t *refused)
{
	struct folder_identity identity;
	size_t length = strlen(folder);
	if (!is_absolute(folder)) {
		if (show_refusal(refused))
			log_message(LOG_ERROR, "NVINTERPOSE_PATH: relative entry '%s' ignored (use an absolute folder)", folder);
	} else if (!platform_folder_identity(folder, &identity)) {
		if (show_refusal(refused))
			log_message(LOG_ERROR, "NVINTERPOSE_PATH: '%s' is not a folder; ignored", folder);
	} else if (config->path_count == CONFIG_PATH_MAX_ENTRIES || length + 1 > sizeof(config->path_text) - config->path_text_used) {
		if (show_refusal(refused))
			log_message(LOG_ERROR, "NVINTERPOSE_PATH: more than %d entries or %zu characters; '%s' ignored",
				    CONFIG_PATH_MAX_ENTRIES, sizeof(config->path_text), folder);
	} else {
		config->path_offset[config->path_count++] = (unsigned short)config->path_text_used;
		memcpy(config->path_text + config->path_text_used, folder, length + 1);
		config->path_text_used += length + 1;
		return true;
	}
	return false;
}

bool config_add_path(struct config *config, const char *folder)
{
	size_t refused = 0;
	return add_folder(config, folder, &refused);
}

/* One NVINTERPOSE_PATH entry: kept when it is an absolute path to an existing folder. The loader
   reads an empty entry as the current folder; the runtime does not follow a working directory that
   changes under it, so empty and relative entries are refused with a message. */
static void add_path_entry(struct config *config, const char *entry, size_t length, size_t *refused)
{
	if (length == 0) {
		if (show_refusal(refused))
			log_message(LOG_ERROR, "NVINTERPOSE_PATH: empty entry ignored");
		return;
	}
	if (length >= CONFIG_FOLDER_MAX) {
		if (show_refusal(refused))
			log_message(LOG_ERROR, "NVINTERPOSE_PATH: entry of %zu characters ignored (longer than %d)", length,
				    CONFIG_FOLDER_MAX - 1);
		return;
	}
	char folder[CONFIG_FOLDER_MAX];
	memcpy(folder, entry, length);
	folder[length] = '\0';
	add_folder(config, folder, refused);
}

/* A setting that is 0 or 1 (the front's switches); anything else keeps the default. */
static void read_switch(const char *(*getenv_fn)(const char *name), const char *name, bool *setting)
{
	const char *value = getenv_fn(name);
	if (value && (strcmp(value, "0") == 0 || strcmp(value, "1") == 0))
		*setting = value[0] == '1';
	else if (value && value[0])
		log_message(LOG_ERROR, "%s='%s' is not 0 or 1; using %d", name, value, *setting);
}

void config_read(struct config *config, const char *(*getenv_fn)(const char *name), bool secure)
{
	memset(config, 0, sizeof(*config));
	config->policy = POLICY_FALLBACK;
	config->log_level = LOG_ERROR;
	config->add_dll_directory = true;
	config->inject_children = true;
	if (secure) {
		/* A privileged process must not take folders or files from its caller's environment, and
		   a runtime attached to one leaves its memory as it found it (no patching). */
		config->secure = true;
		config->policy = POLICY_OFF;
		return;
	}
	config->patch = true;

	/* The way out of every other setting: disabled, the runtime reads none of them, so a bad one
	   prints nothing and a log file that cannot be opened (or hangs) is never opened. */
	read_switch(getenv_fn, "NVINTERPOSE_DISABLE", &config->disabled);
	if (config->disabled)
		return;

	/* The log level first, so that the messages about the other settings obey it. */
	const char *value = getenv_fn("NVINTERPOSE_LOG");
	if (value && value[0] && !config_parse_log_level(value, &config->log_level))
		log_message(LOG_ERROR, "NVINTERPOSE_LOG='%s' is not one of error, warn, info, debug; using error",
			    value);
	log_set_level(config->log_level);

	value = getenv_fn("NVINTERPOSE_POLICY");
	if (value && value[0] && !config_parse_policy(value, &config->policy))
		log_message(LOG_ERROR, "NVINTERPOSE_POLICY='%s' is not one of fallback, coherent, off; using fallback",
			    value);

	value = getenv_fn("NVINTERPOSE_LOG_FILE");
	if (value && value[0]) {
		if (strlen(value) >= sizeof(config->log_file))
			log_message(LOG_ERROR, "NVINTERPOSE_LOG_FILE is longer than %zu characters; no event log",
				    sizeof(config->log_file) - 1);
		else
			strcpy(config->log_file, value);
	}

	/* The process the report is for, named by whoever starts it. The launcher names its own pid,
	   which the command keeps through exec, so the children that inherit the setting stay quiet. */
	value = getenv_fn("NVINTERPOSE_REPORT");
	if (value && strcmp(value, "keep") == 0) {
		/* Kept for nvi_report alone (the pytest plugin asks so): no process prints it. */
		config->report_kept = true;
	} else if (value && value[0]) {
		char *end;
		errno = 0;
		long pid = strtol(value, &end, 10);
		if (*end || pid <= 0 || errno || value[0] < '0' || value[0] > '9')
			log_message(LOG_ERROR, "NVINTERPOSE_REPORT='%s' is not a process id nor keep; no report", value);
		else
			config->report_pid = pid;
		if (config->report_pid &&
		    !platform_report_file(pid, getenv_fn("TMPDIR"), config->report_file, sizeof(config->report_file)))
			config->report_file[0] = '\0';
	}

	read_switch(getenv_fn, "NVINTERPOSE_ADD_DLL_DIRECTORY", &config->add_dll_directory);
	read_switch(getenv_fn, "NVINTERPOSE_CHILDREN", &config->inject_children);
	read_switch(getenv_fn, "NVINTERPOSE_PATCH", &config->patch);

	value = getenv_fn("NVINTERPOSE_PATH");
	size_t refused = 0;
	for (const char *s = value; s;) {
		const char *end = strchr(s, CONFIG_PATH_SEPARATOR);
		size_t length = end ? (size_t)(end - s) : strlen(s);
		if (length || end || s != value)
			add_path_entry(config, s, length, &refused);
		s = end ? end + 1 : NULL;
	}
	if (refused > CONFIG_PATH_REFUSALS_SHOWN)
		log_message(LOG_ERROR, "NVINTERPOSE_PATH: %zu more entries ignored", refused - CONFIG_PATH_REFUSALS_SHOWN);
}


void config_set(const struct config *config)
{
	if (config != &config_current)
		config_current = *config;
}

void config_load(const char *(*getenv_fn)(const char *name), bool secure) { config_read(&config_current, getenv_fn, secure); }
