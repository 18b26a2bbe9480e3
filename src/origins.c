/* One registration path for every front, and the check for a mixed origin it makes. */
#include "origins.h"

#include "config.h"
#include "libnames.h"
#include "log.h"
#include "report.h"
#include "search.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum registry_result origins_register(const struct origin_load *load)
{
	int saved_errno = errno;
	const char *family_name = libnames[load->family].family;
	enum registry_result result = registry_add_origin(load->family, load->folder);
	switch (result) {
	case REGISTRY_ADDED:
		log_message(LOG_INFO, "%s loaded from %s: registered (%s)", family_name, load->folder, load->reason);
		log_event(&(struct log_event){ .event = "register", .name = load->name, .path = load->path,
					       .folder = load->folder, .caller = load->caller, .family = family_name,
					       .policy = config_policy_name(config_get()->policy), .reason = load->reason });
		report_origin(family_name, load->folder, load->name);
		if (load->dependent && load->caller && report_mixed_origin_first(load->name))
			origins_check_mixed(load->name, load->family, load->caller, load->path, false);
		break;
	case REGISTRY_KNOWN:
		break;
	case REGISTRY_ERROR:
		log_message(LOG_WARN, "%s loaded from %s: the folder cannot be registered: %s", family_name, load->folder,
			    strerror(errno));
		break;
	}
	errno = saved_errno;
	return result;
}

static bool take_first(const char *path, enum search_step step, enum loader_step loader_step, void *own)
{
	(void)step, (void)loader_step;
	if (strlen(path) >= PATH_MAX)
		return false;
	strcpy(own, path);
	return true;
}

/* The folder of path, into folder (PATH_MAX bytes); false when path has none. */
static bool folder_of(const char *path, char *folder)
{
	const char *base = libnames_basename(path);
	size_t length = (size_t)(base - path);
	if (length < 2 || length > PATH_MAX)
		return false;
	memcpy(folder, path, length - 1);
	folder[length - 1] = '\0';
	return true;
}

void origins_check_mixed(const char *name, int family, const char *asker, const char *path, bool already_loaded)
{
	const struct config *config = config_get();
	int asker_family = libnames_match(libnames_basename(asker), NULL);
	if (config->secure || !policy_watches_mixed_origins(config->policy) || asker_family < 0 ||
	    libnames_is_driver(asker_family) || libnames_is_driver(family))
		return;
	int saved_errno = errno;
	char *folders = malloc(3 * PATH_MAX);
	char *own_folder = folders, *their_folder = folders + PATH_MAX, *own = folders + 2 * PATH_MAX;
	if (folders && folder_of(asker, own_folder) && folder_of(path, their_folder) &&
	    !search_same_installation(own_folder, their_folder)) {
		struct search_request request = { .name = name, .caller_folder = own_folder, .caller_folder_only = true };
		bool has_own = search_candidates(&request, take_first, own);
		report_outcome(&(struct outcome){ .kind = OUTCOME_MIXED_ORIGIN, .name = name, .family = family, .caller = asker,
						  .path = path, .own = has_own ? own : NULL, .already_loaded = already_loaded });
	}
	free(folders);
	errno = saved_errno;
}
