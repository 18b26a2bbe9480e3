/* The trust rule (trust.h). A folder the runtime reaches on its own is a place from which code
   would run in the host process: whoever can write to it, or to a folder above it up to the
   site-packages/nvidia level (renaming entries there swaps what lies below), chooses that code.
   So it is used only when nobody but the effective user, root, or a user whose NVIDIA code the
   process already runs owns it, and nobody else may write to it. Everyone may not write to it,
   except in a folder with the sticky bit. There others may add entries but not rename or replace
   what they do not own, and what they add is owned by them, which the rule refuses. A group may not
   write to it unless the process acts with that group itself (its effective and supplementary
   groups). So a project environment shared by its group, and a container image made group-writable
   for arbitrary uids of group 0, stay usable to members of that group. The rule applies to every
   process, not only to root, since a folder another user can write is a way into the user's
   processes whoever the user is. */
#include "trust.h"

#include "log.h"

#include <stdatomic.h>

void trust_add_owner_of(struct trust_owners *owners, const char *folder)
{
	struct platform_access access;
	if (owners->count == TRUST_MAX_OWNERS || !platform_access_of(folder, &access))
		return;
	for (size_t i = 0; i < owners->count; i++)
		if (owners->owner[i] == access.owner)
			return;
	owners->owner[owners->count++] = access.owner;
}

static bool acts_with_group(const struct platform_identity *who, unsigned long long group)
{
	for (size_t i = 0; i < who->group_count; i++)
		if (who->groups[i] == group)
			return true;
	return false;
}

static bool allowed_owner(const struct platform_identity *who, const struct trust_owners *owners, unsigned long long owner)
{
	if (owner == who->user || owner == 0)
		return true;
	for (size_t i = 0; owners && i < owners->count; i++)
		if (owners->owner[i] == owner)
			return true;
	return false;
}

enum trust_verdict trust_check(const struct platform_identity *who, const struct trust_owners *owners, const char *path,
			       bool is_file)
{
	struct platform_access access;
	if (!who || !who->known)
		return TRUST_NOT_APPLIED;
	if (!platform_access_of(path, &access))
		return TRUST_UNEXAMINED;
	bool sticky = access.sticky && !is_file;
	if (access.others_writable && !sticky)
		return TRUST_WORLD_WRITABLE;
	if (access.group_writable && !sticky && !acts_with_group(who, access.group))
		return TRUST_GROUP_WRITABLE;
	if (!allowed_owner(who, owners, access.owner))
		return TRUST_OWNER;
	return TRUST_OK;
}

const char *trust_rule_text(enum trust_verdict verdict)
{
	switch (verdict) {
	case TRUST_OK:
	case TRUST_NOT_APPLIED: break;
	case TRUST_UNEXAMINED: return "it cannot be examined";
	case TRUST_WORLD_WRITABLE: return "anyone may write to it (no sticky bit)";
	case TRUST_GROUP_WRITABLE: return "a group this process is not in may write to it (no sticky bit)";
	case TRUST_OWNER: return "owned by someone other than this process's user, root and the owners of the origins it was reached from";
	}
	return "";
}

/* Paths already reported, as hashes: a lookup that walks the same place again says nothing more. */
#define REPORTED_MAX 256
static _Atomic unsigned long long reported[REPORTED_MAX];

static bool first_report(const char *path)
{
	unsigned long long hash = 14695981039346656037ull; /* FNV-1a */
	for (const char *s = path; *s; s++)
		hash = (hash ^ (unsigned char)*s) * 1099511628211ull;
	hash |= 1; /* never 0, the empty slot */
	for (size_t i = 0; i < REPORTED_MAX; i++) {
		unsigned long long expected = 0;
		if (atomic_load(&reported[i]) == hash)
			return false;
		if (atomic_compare_exchange_strong(&reported[i], &expected, hash))
			return true;
		if (expected == hash)
			return false;
	}
	return true; /* the table is full: say it again rather than never */
}

bool trust_accept(enum trust_verdict verdict, const char *path, const char *step)
{
	if (verdict == TRUST_OK || verdict == TRUST_NOT_APPLIED)
		return true;
	if (first_report(path))
		log_message(LOG_WARN, "%s skipped (%s): %s", path, step, trust_rule_text(verdict));
	return false;
}
