/* libFuzzer target: the settings parser (src/config.c), config_read with a table for getenv. The
   input is NAME=VALUE entries cut at NUL bytes; a first byte with its low bit set reads them under
   secure execution. Every answer must keep the parser's promises: a policy and a log level of
   their enums, NVINTERPOSE_PATH entries that are absolute existing folders within the bounds of
   the table and its text, a terminated log file name, and under secure execution nothing read. */
#include "config.h"
#include "fuzz_text.h"
#include "platform.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fuzz_parts entries;

static const char *table_getenv(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < entries.count; i++)
		if (strncmp(entries.part[i], name, n) == 0 && entries.part[i][n] == '=')
			return entries.part[i] + n + 1;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	bool secure = data[0] & 1;
	fuzz_parts_of(data + 1, size - 1, FUZZ_MAX_PARTS, &entries);
	struct config *config = malloc(sizeof(*config));
	if (!config)
		abort();
	config_read(config, table_getenv, secure);
	if (config->policy > POLICY_OFF || config->log_level > LOG_DEBUG || config->path_count > CONFIG_PATH_MAX_ENTRIES ||
	    config->path_text_used > sizeof(config->path_text) || !memchr(config->log_file, '\0', sizeof(config->log_file)))
		abort();
	if (secure && (config->policy != POLICY_OFF || config->path_count || config->log_file[0] || config->disabled))
		abort();
	for (size_t i = 0; i < config->path_count; i++) {
		if (config->path_offset[i] >= config->path_text_used)
			abort();
		const char *folder = config_path(config, i);
		size_t room = config->path_text_used - config->path_offset[i];
		struct folder_identity identity;
		if (!memchr(folder, '\0', room) || folder[0] != '/' || !platform_folder_identity(folder, &identity))
			abort();
	}
	/* The same values through the parsers of one setting each. */
	for (size_t i = 0; i < entries.count; i++) {
		enum policy policy;
		enum log_level level;
		if (config_parse_policy(entries.part[i], &policy) && policy > POLICY_OFF)
			abort();
		if (config_parse_log_level(entries.part[i], &level) && level > LOG_DEBUG)
			abort();
	}
	free(config);
	fuzz_parts_free(&entries);
	return 0;
}
