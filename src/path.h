/* Joining a folder and a name into a path, as the loader's open_path does. The folder's trailing
   separators are dropped (a lone one is kept). An empty folder, an empty list element that means
   the working folder, adds nothing, so the name stays relative. On the miss path it runs for every
   folder tried, so it costs a few copies (snprintf costs a thousand instructions). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* folder SEPARATOR name into path; false, path unchanged, when it does not fit in size. */
static inline bool path_join(char *path, size_t size, const char *folder, char separator, const char *name)
{
	size_t length = strlen(folder), name_length = strlen(name);
	while (length > 1 && folder[length - 1] == separator)
		length--;
	size_t slash = length ? 1 : 0;
	if (length + slash + name_length >= size)
		return false;
	memmove(path, folder, length);
	if (slash)
		path[length] = separator;
	memcpy(path + length + slash, name, name_length + 1);
	return true;
}
