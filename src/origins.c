/* One registration path for every front. */
#include "origins.h"

#include "config.h"
#include "libnames.h"
#include "log.h"
#include "report.h"

#include <errno.h>
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
