/* The trust rule for the folders the runtime reaches on its own: wheel siblings (and the folders
   between them and the site-packages/nvidia level) and NVINTERPOSE_PATH entries, and the files it
   would load from them. Registered origins are not filtered (the loader already loaded NVIDIA code
   from them), nor is the loader's own search. One rule for the runtime and the inspector's what-if;
   the file-system facts come from platform.h. */
#pragma once

#include "platform.h"

#include <stdbool.h>
#include <stddef.h>

enum trust_verdict {
	TRUST_OK,
	TRUST_NOT_APPLIED,     /* the platform gives no owners and modes (Windows): used as before */
	TRUST_UNEXAMINED,      /* it cannot be examined (stat fails) */
	TRUST_WORLD_WRITABLE,  /* anyone may write to it (a folder without the sticky bit) */
	TRUST_GROUP_WRITABLE,  /* a group the process does not act with may write to it (same) */
	TRUST_OWNER,           /* owned by someone other than the effective user, root or an owner allowed */
};

#define TRUST_MAX_OWNERS 8

/* Who may own what the runtime uses besides the effective user and root: the owner of the origin a
   wheel sibling was found from; for NVINTERPOSE_PATH, the owners of the registered origins (users
   whose NVIDIA code the process already runs). */
struct trust_owners {
	size_t count;
	unsigned long long owner[TRUST_MAX_OWNERS];
};

/* Adds the owner of folder (nothing when it cannot be examined or the list is full). */
void trust_add_owner_of(struct trust_owners *owners, const char *folder);

/* The rule for one folder (is_file false) or file, for the process who describes. A file is judged
   as a folder with no sticky bit: anyone who may write to it may replace the code in it. */
enum trust_verdict trust_check(const struct platform_identity *who, const struct trust_owners *owners, const char *path,
			       bool is_file);

/* True when the verdict lets the runtime use path; otherwise says so at warn level, once a path
   in this process, naming the path, the rule, and what it was reached as (step). */
bool trust_accept(enum trust_verdict verdict, const char *path, const char *step);

/* The rule a verdict names, for messages ("writable by everyone, without the sticky bit"). */
const char *trust_rule_text(enum trust_verdict verdict);
