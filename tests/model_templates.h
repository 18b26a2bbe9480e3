/* Templates of the loader-model generator: a library and a program compiled once, with
   placeholder strings for the SONAME and three slots; copies are written with those strings and
   tags patched, so that a case costs file writes, not compiler runs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define MODEL_SLOTS 3
#define MODEL_SLOT_BYTES 1000 /* the longest string a slot holds, its NUL excluded */

/* What a slot of a copy is. */
enum model_slot_tag {
	MODEL_SLOT_IGNORED, /* a tag in the OS range that the loader (and every reader) passes over */
	MODEL_SLOT_NEEDED,
	MODEL_SLOT_RPATH,
	MODEL_SLOT_RUNPATH,
};

struct model_slot {
	enum model_slot_tag tag;
	const char *value;
};

/* One copy: its SONAME (NULL: none, the tag ignored; a program has none), its slots, DF_1_NODEFLIB. */
struct model_object {
	const char *soname;
	struct model_slot slots[MODEL_SLOTS];
	bool nodeflib;
};

struct model_template {
	unsigned char *bytes;
	size_t size;
	bool program;
	long soname_entry, soname_string;      /* file offsets of the SONAME entry and its string, or -1 */
	long slot_entry[MODEL_SLOTS], slot_string[MODEL_SLOTS];
	long flags_1_entry;                    /* the DT_FLAGS_1 entry */
};

/* Compiles tests/fixtures/model_library.c and model_program.c into folder (stubs with the
   placeholder sonames give the DT_NEEDED slots) and finds every field a copy patches. */
void model_templates_build(const char *folder, struct model_template *library, struct model_template *program);

/* Writes a copy of template at path with object's strings, tags and flags (mode 0755). */
void model_template_write(const struct model_template *template, const struct model_object *object, const char *path);
