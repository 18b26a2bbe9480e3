/* One registration path for every front. */
#include "origins.h"

#include "config.h"
#include "libnames.h"
#include "log.h"

#include <errno.h>
#include <string.h>

enum registry_result origins_register(int family, const char *folder, const char *name, const char *reason)
{
	int saved_errno = errno;
	const char *family_name = libnames[family].family;
	enum registry_result result = registry_add_origin(family, folder);
	switch (result) {
	case REGISTRY_ADDED:
		log_message(LOG_INFO, "%s loaded from %s: registered (%s)", family_name, folder, reason);
		log_event(&(struct log_event){ .event = "register", .name = name, .path = folder, .family = family_name,
					       .policy = config_policy_name(config_get()->policy), .reason = reason });
		break;
	case REGISTRY_KNOWN:
		break;
	case REGISTRY_ERROR:
		log_message(LOG_WARN, "%s loaded from %s: the folder cannot be registered: %s", family_name, folder,
			    strerror(errno));
		break;
	}
	errno = saved_errno;
	return result;
}
