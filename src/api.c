/* The public C API (include/nvinterpose.h), over the registry. */
#include "nvinterpose.h"

#include "front.h"
#include "libnames.h"
#include "registry.h"
#include "report.h"

#include <errno.h>
#include <string.h>

/* A copy of the runtime that defers to one loaded before it answers with that one's answer. */
#define FORWARD(function, ...)                                        \
	do {                                                          \
		const struct front_api *primary = front_primary();    \
		if (primary && primary->function)                     \
			return primary->function(__VA_ARGS__);        \
	} while (0)

const char *nvi_version(void)
{
	FORWARD(version);
	return NVI_VERSION;
}

int nvi_family_origin(const char *family, char *folder, size_t size)
{
	FORWARD(family_origin, family, folder, size);
	int index = libnames_family_index(family);
	if (index < 0 || !folder)
		return -EINVAL;
	front_sync();
	size_t n = registry_count();
	for (size_t i = 0; i < n; i++) {
		const struct registry_origin *origin = registry_at(i);
		if (origin->family != index)
			continue;
		size_t length = strlen(origin->folder);
		if (length >= size)
			return -ERANGE;
		memcpy(folder, origin->folder, length + 1);
		return 0;
	}
	return -ENOENT;
}

int nvi_register_folder(const char *family, const char *folder)
{
	FORWARD(register_folder, family, folder);
	int index = libnames_family_index(family);
	if (index < 0 || !folder)
		return -EINVAL;
#ifdef _WIN32
	if (!(folder[0] && folder[1] == ':') && !(folder[0] == '\\' && folder[1] == '\\'))
		return -EINVAL;
#else
	if (folder[0] != '/')
		return -EINVAL;
#endif
	return registry_add_origin(index, folder) == REGISTRY_ERROR ? -errno : 0;
}

int nvi_list_origins(const char *family, struct nvi_origin *origins, size_t capacity)
{
	FORWARD(list_origins, family, origins, capacity);
	int index = -1;
	if (family && (index = libnames_family_index(family)) < 0)
		return -EINVAL;
	front_sync();
	size_t n = registry_count();
	int total = 0;
	for (size_t i = 0; i < n; i++) {
		const struct registry_origin *origin = registry_at(i);
		if (family && origin->family != index)
			continue;
		if (origins && (size_t)total < capacity)
			origins[total] = (struct nvi_origin){ libnames[origin->family].family, origin->folder };
		total++;
	}
	return total;
}

int nvi_list_families(const char **families, size_t capacity)
{
	FORWARD(list_families, families, capacity);
	for (size_t i = 0; families && i < libnames_count && i < capacity; i++)
		families[i] = libnames[i].family;
	return (int)libnames_count;
}

int nvi_rescan(void)
{
	FORWARD(rescan);
	return front_rescan();
}

int nvi_list_patches(struct nvi_patch *patches, size_t capacity)
{
	FORWARD(list_patches, patches, capacity);
	return front_list_patches(patches, capacity);
}

int nvi_report(struct nvi_report_totals *totals, struct nvi_report_entry *entries, size_t capacity)
{
	FORWARD(report, totals, entries, capacity);
	front_sync();
	return report_list(totals, entries, capacity);
}
