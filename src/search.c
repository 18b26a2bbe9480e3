/* The order in which a policy looks for a library the loader did not find.
 *
 * fallback (and coherent, which the front applies earlier):
 *   1. the loader's own search for the asker (src/loader: its RPATH chain, LD_LIBRARY_PATH, RUNPATH,
 *      ld.so.cache, the system folders), which the front uses only to learn whether the loader will
 *      succeed on its own;
 *   2. the folder of the NVIDIA library that asked (NVRTC has no RUNPATH: its builtins lie beside it);
 *   3. every registered origin, in the order first seen;
 *   4. the wheel siblings of those folders (CUDA 12 wheels put each component in its own
 *      site-packages/nvidia/PKG/lib, and cusparse's nvJitLink lives in nvidia/nvjitlink/lib);
 *   5. NVINTERPOSE_PATH.
 * The coherent policy first looks only at the caller's folder and its wheel siblings. Steps 4 and
 * 5 are places the runtime reaches on its own: the trust rule (trust.h) judges each of them, the
 * folders above a sibling up to site-packages/nvidia, and the file it would load. */
#include "search.h"

#include "path.h"

#include "config.h"
#include "platform.h"
#include "registry.h"
#include "trust.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SEARCH_MAX_FOLDERS 256
#define SEARCH_MAX_ROOTS 8

#ifdef _WIN32
#define WHEEL_LEAF "bin"
#define SEPARATOR '\\'
#define COMPARE_NAMES strncasecmp /* Windows compares file names without case */
#else
#define WHEEL_LEAF "lib"
#define SEPARATOR '/'
#define COMPARE_NAMES strncmp
#endif

struct trust_place;

struct walk {
	const struct search_request *request;
	enum loader_step loader_step; /* while the loader's search is walked */
	/* What is done at each of the runtime's places: try_folder, or a visit of the folder alone. */
	bool (*place)(struct walk *walk, const char *folder, enum search_step step, struct trust_place *trust);
	search_visit visit;
	search_place_visit visit_place;
	void *arg;
	struct platform_identity who; /* the process the trust rule judges for (who_known: asked once) */
	bool who_known;
	/* The wheel roots whose siblings this walk tried, with the owner the trust rule added for
	   each (the origin's): the caller's folder and its origins often share one root. */
	size_t root_count;
	struct walked_root {
		struct folder_identity identity;
		bool owner_known;
		unsigned long long owner;
	} roots[SEARCH_MAX_ROOTS];
	size_t seen_count;
	struct folder_identity seen[SEARCH_MAX_FOLDERS];
};

const char *search_step_name(enum search_step step)
{
	static const char *const names[] = {
		[SEARCH_LOADER] = "the loader's search",
		[SEARCH_CALLER_FOLDER] = "caller's folder",
		[SEARCH_ORIGIN] = "registered origin",
		[SEARCH_WHEEL_SIBLING] = "wheel sibling",
		[SEARCH_NVINTERPOSE_PATH] = "NVINTERPOSE_PATH",
	};
	return names[step];
}

const char *search_step_key(enum search_step step, enum loader_step loader_step)
{
	static const char *const keys[] = {
		[SEARCH_CALLER_FOLDER] = "caller_folder",
		[SEARCH_ORIGIN] = "registered_origin",
		[SEARCH_WHEEL_SIBLING] = "wheel_sibling",
		[SEARCH_NVINTERPOSE_PATH] = "nvinterpose_path",
	};
	return step == SEARCH_LOADER ? loader_step_name(loader_step) : keys[step];
}

/* Tells the request's tried callback of a folder tried (a missing one too: the loader tries it). */
static void note_tried(struct walk *walk, const char *folder, enum search_step step, enum loader_step loader_step)
{
	if (walk->request->tried)
		walk->request->tried(folder, step, loader_step, walk->arg);
}

/* True once a folder (by its identity: device and inode) has been tried in this walk. */
static bool seen_before(struct walk *walk, const struct folder_identity *identity)
{
	for (size_t i = 0; i < walk->seen_count; i++)
		if (walk->seen[i].device == identity->device && walk->seen[i].inode == identity->inode)
			return true;
	if (walk->seen_count < SEARCH_MAX_FOLDERS)
		walk->seen[walk->seen_count++] = *identity;
	return false;
}

/* What the trust rule needs for a place the runtime reached on its own: the owners allowed besides
   the effective user and root, and the folders above it to judge too (NULL ends the list). */
struct trust_place {
	struct trust_owners *owners;
	const char *above[3];
	const char *owner_of; /* a folder whose owner joins owners when a file is first judged, or NULL */
};
/* The identity the trust rule judges for, asked of the system when first needed: a walk that
   meets no place the rule applies to (no wheel sibling, no NVINTERPOSE_PATH entry) never asks. */
static const struct platform_identity *walk_who(struct walk *walk)
{
	if (!walk->who_known) {
		if (walk->request->who)
			walk->who = *walk->request->who;
		else
			platform_current_identity(&walk->who);
		walk->who_known = true;
	}
	return &walk->who;
}

static bool place_trusted(struct walk *walk, struct trust_place *place, const char *folder, const char *file, enum search_step step)
{
	if (place->owner_of) { /* asked only now: most walks judge no file */
		trust_add_owner_of(place->owners, place->owner_of);
		place->owner_of = NULL;
	}
	const char *name = search_step_name(step);
	const struct platform_identity *who = walk_who(walk);
	for (size_t i = 0; i < 3 && place->above[i]; i++)
		if (!trust_accept(trust_check(who, place->owners, place->above[i], false), place->above[i], name))
			return false;
	return trust_accept(trust_check(who, place->owners, folder, false), folder, name) &&
	       trust_accept(trust_check(who, place->owners, file, true), file, name);
}

/* True when folder is to be looked in: it exists and this walk has not tried it yet. A first try
   is noted either way. */
static bool try_once(struct walk *walk, const char *folder, enum search_step step, enum loader_step loader_step,
		     struct folder_identity *identity)
{
	if (!folder || !folder[0])
		return false;
	bool exists = platform_folder_identity(folder, identity);
	if (exists && seen_before(walk, identity))
		return false;
	note_tried(walk, folder, step, loader_step);
	return exists;
}

/* place: NULL for a folder the loader already loaded NVIDIA code from (the caller's, an origin). */
static bool try_folder(struct walk *walk, const char *folder, enum search_step step, struct trust_place *place)
{
	char path[PATH_MAX];
	struct folder_identity identity;
	bool joined = folder && folder[0] && path_join(path, sizeof(path), folder, SEPARATOR, walk->request->name);
	if (walk->request->tried) {
		/* A miss lists every folder once: each is told apart from the ones tried before first. */
		if (!try_once(walk, folder, step, LOADER_LISTED, &identity) || !joined || !platform_is_file(path))
			return false;
	} else if (!joined || !platform_is_file(path) || !try_once(walk, folder, step, LOADER_LISTED, &identity)) {
		/* Otherwise the file first: most folders lack it, and one system call says so; only a
		   folder that holds it is told apart from those tried before (the same folder under
		   another name holds it too, and was taken there). */
		return false;
	}
	if (place && !place_trusted(walk, place, folder, path, step))
		return false;
	return walk->visit(path, step, LOADER_LISTED, walk->arg);
}

static bool try_loader_file(const char *path, const char *subdir, void *arg)
{
	struct walk *walk = arg;
	(void)subdir;
	return platform_is_file(path) && walk->visit(path, SEARCH_LOADER, walk->loader_step, walk->arg);
}

/* One folder of the loader's own search: its subfolders first, as the loader tries them. */
static enum loader_visit_result try_loader_folder(const char *folder, enum loader_step step, void *arg)
{
	struct walk *walk = arg;
	const struct search_request *request = walk->request;
	walk->loader_step = step;
	if (step == LOADER_CACHE) {
		note_tried(walk, NULL, SEARCH_LOADER, LOADER_CACHE);
		return request->cache_entry && platform_is_file(request->cache_entry) &&
		       walk->visit(request->cache_entry, SEARCH_LOADER, LOADER_CACHE, walk->arg)
			       ? LOADER_STOP
			       : LOADER_NEXT_FOLDER;
	}
	/* An empty element is the working folder, for the loader. */
	struct folder_identity identity;
	if (!try_once(walk, folder && !folder[0] ? "." : folder, SEARCH_LOADER, step, &identity))
		return LOADER_NEXT_FOLDER;
	switch (loader_folder_files(request->machine, folder, &identity, request->name, try_loader_file, walk)) {
	case LOADER_FOLDER_TAKEN: return LOADER_STOP;
	case LOADER_FOLDER_UNKNOWN: return walk->visit(NULL, SEARCH_LOADER, step, walk->arg) ? LOADER_STOP : LOADER_NEXT_FOLDER;
	case LOADER_FOLDER_NONE: break;
	}
	return LOADER_NEXT_FOLDER;
}

bool search_wheel_root(const char *folder, char *parent, size_t size, const char **leaf)
{
	/* .../nvidia/PKG/lib: the last component is the leaf, the one before it the package, and the
	   one before that must be "nvidia". */
	size_t length = strlen(folder);
	while (length > 1 && folder[length - 1] == SEPARATOR)
		length--;
	const char *end = folder + length;
	const char *slash[3] = { NULL, NULL, NULL };
	const char *s = end;
	for (int i = 0; i < 3; i++) {
		while (s > folder && s[-1] != SEPARATOR)
			s--;
		if (s == folder)
			return false;
		slash[i] = --s;
	}
	size_t leaf_length = (size_t)(end - slash[0] - 1);
	if (leaf_length != strlen(WHEEL_LEAF) || COMPARE_NAMES(slash[0] + 1, WHEEL_LEAF, leaf_length) != 0)
		return false;
	if (slash[0] - slash[1] < 2) /* an empty package folder: ".../nvidia//lib" */
		return false;
	if ((size_t)(slash[1] - slash[2] - 1) != 6 || COMPARE_NAMES(slash[2] + 1, "nvidia", 6) != 0)
		return false;
	size_t parent_length = (size_t)(slash[1] - folder);
	if (parent_length >= size)
		return false;
	memcpy(parent, folder, parent_length);
	parent[parent_length] = '\0';
	if (leaf)
		*leaf = WHEEL_LEAF;
	return true;
}

bool search_installation(const char *folder, char *out, size_t size)
{
	if (search_wheel_root(folder, out, size, NULL))
		return true;
	if (strlen(folder) >= size)
		return false;
	strcpy(out, folder);
	return true;
}

bool search_same_installation(const char *a, const char *b)
{
	char root_a[PATH_MAX], root_b[PATH_MAX];
	struct folder_identity identity_a, identity_b;
	return search_installation(a, root_a, sizeof(root_a)) && search_installation(b, root_b, sizeof(root_b)) &&
	       platform_folder_identity(root_a, &identity_a) && platform_folder_identity(root_b, &identity_b) &&
	       identity_a.device == identity_b.device && identity_a.inode == identity_b.inode;
}

/* ---- wheel roots ----
   Listings of wheel roots, remembered while a root's identity and change time hold (a package
   folder created, removed or renamed there changes it), as src/loader/search_order.c remembers
   plain folders, and only settled ones (platform.h): a walk lists the root of every origin, and a
   miss walks again, which for a root of thousands of folders would list and sort them each time.
   Taken and stored under a try-lock, never waited for; a listing in use is never freed. */
#define REMEMBERED_ROOTS 4
struct root_listing {
	struct folder_identity identity;
	char **names;
	int count;
	_Atomic int users;
};
static struct root_listing remembered[REMEMBERED_ROOTS];
static size_t remembered_next;
static atomic_flag remembered_lock = ATOMIC_FLAG_INIT;

/* The remembered listing of the root, held (release_listing), or NULL. */
static struct root_listing *remembered_listing(const struct folder_identity *identity)
{
	struct root_listing *found = NULL;
	if (!identity->settled || atomic_flag_test_and_set_explicit(&remembered_lock, memory_order_acquire))
		return NULL;
	for (size_t i = 0; i < REMEMBERED_ROOTS && !found; i++)
		if (remembered[i].names && platform_folder_unchanged(&remembered[i].identity, identity)) {
			found = &remembered[i];
			atomic_fetch_add(&found->users, 1);
		}
	atomic_flag_clear_explicit(&remembered_lock, memory_order_release);
	return found;
}

/* Keeps names as the root's listing, held: the slot, or NULL when none is free now (names stay
   the caller's). */
static struct root_listing *remember_listing(const struct folder_identity *identity, char **names, int count)
{
	struct root_listing *slot = NULL;
	if (!identity->settled || count <= 0 || atomic_flag_test_and_set_explicit(&remembered_lock, memory_order_acquire))
		return NULL;
	for (size_t i = 0; i < REMEMBERED_ROOTS && !slot; i++) {
		struct root_listing *candidate = &remembered[(remembered_next + i) % REMEMBERED_ROOTS];
		if (atomic_load(&candidate->users) == 0)
			slot = candidate;
	}
	if (slot) {
		remembered_next = (size_t)(slot - remembered + 1) % REMEMBERED_ROOTS;
		platform_free_names(slot->names, slot->count);
		*slot = (struct root_listing){ .identity = *identity, .names = names, .count = count };
		atomic_store(&slot->users, 1);
	}
	atomic_flag_clear_explicit(&remembered_lock, memory_order_release);
	return slot;
}

/* True when this walk tried the siblings of root already for an origin of the same owner. */
static bool root_walked(struct walk *walk, const struct folder_identity *root, const char *origin)
{
	struct platform_access access;
	struct walked_root this = { .identity = *root, .owner_known = platform_access_of(origin, &access) };
	this.owner = this.owner_known ? access.owner : 0;
	for (size_t i = 0; i < walk->root_count; i++) {
		const struct walked_root *walked = &walk->roots[i];
		if (walked->identity.device == root->device && walked->identity.inode == root->inode &&
		    walked->owner_known == this.owner_known && walked->owner == this.owner)
			return true;
	}
	if (walk->root_count < SEARCH_MAX_ROOTS)
		walk->roots[walk->root_count++] = this;
	return false;
}

static bool try_wheel_siblings(struct walk *walk, const char *origin)
{
	char root[PATH_MAX];
	const char *leaf;
	struct folder_identity identity;
	if (!search_wheel_root(origin, root, sizeof(root), &leaf) || !platform_folder_identity(root, &identity) ||
	    root_walked(walk, &identity, origin))
		return false;
	struct trust_owners owners = { 0 };
	char **names = NULL;
	struct root_listing *listing = remembered_listing(&identity);
	int n = listing ? listing->count : platform_list_folder(root, &names);
	if (listing)
		names = listing->names;
	else
		listing = remember_listing(&identity, names, n);
	bool stopped = false;
	for (int i = 0; i < n && !stopped; i++) {
		char package[PATH_MAX], folder[PATH_MAX];
		if (names[i][0] == '.') /* hidden entries are no packages */
			continue;
		struct trust_place place = { .owners = &owners, .above = { root, package, NULL }, .owner_of = owners.count ? NULL : origin };
		if (path_join(package, sizeof(package), root, SEPARATOR, names[i]) &&
		    path_join(folder, sizeof(folder), package, SEPARATOR, leaf))
			stopped = walk->place(walk, folder, SEARCH_WHEEL_SIBLING, &place);
	}
	if (listing)
		atomic_fetch_sub(&listing->users, 1);
	else
		platform_free_names(names, n);
	return stopped;
}

/* The runtime's own places, in their order (the steps 2 to 5 above). */
static bool walk_places(struct walk *walk)
{
	const struct search_request *request = walk->request;
	bool stopped = false;
	if (request->caller_folder)
		stopped = walk->place(walk, request->caller_folder, SEARCH_CALLER_FOLDER, NULL);
	if (request->caller_folder_only)
		return stopped || (request->caller_folder && try_wheel_siblings(walk, request->caller_folder));
	size_t n = registry_count();
	for (size_t i = 0; i < n && !stopped; i++)
		stopped = walk->place(walk, registry_at(i)->folder, SEARCH_ORIGIN, NULL);
	if (!stopped && request->caller_folder)
		stopped = try_wheel_siblings(walk, request->caller_folder);
	for (size_t i = 0; i < n && !stopped; i++)
		stopped = try_wheel_siblings(walk, registry_at(i)->folder);

	/* NVINTERPOSE_PATH is reached from no origin in particular: any registered origin's owner is a
	   user whose NVIDIA code the process already runs (an admin's conda or spack tree). */
	const struct config *config = config_get();
	struct trust_owners owners = { 0 };
	for (size_t i = 0; i < n && config->path_count && !stopped; i++)
		trust_add_owner_of(&owners, registry_at(i)->folder);
	struct trust_place place = { .owners = &owners };
	for (size_t i = 0; i < config->path_count && !stopped; i++)
		stopped = walk->place(walk, config_path(config, i), SEARCH_NVINTERPOSE_PATH, &place);
	return stopped;
}

static struct walk *start_walk(const struct search_request *request)
{
	struct walk *walk = malloc(sizeof(*walk)); /* seen[] is filled as it grows: not zeroed */
	if (!walk)
		return NULL;
	walk->request = request;
	walk->loader_step = LOADER_LISTED;
	walk->place = try_folder;
	walk->seen_count = 0;
	walk->root_count = 0;
	walk->who_known = false;
	return walk;
}

bool search_candidates(const struct search_request *request, search_visit visit, void *arg)
{
	struct walk *walk = NULL;
	bool stopped = false;
	if (!request->name || !request->name[0] || strchr(request->name, SEPARATOR) || !(walk = start_walk(request)))
		goto out;
	walk->visit = visit;
	walk->arg = arg;
	if (request->asker)
		stopped = loader_search_order(request->lookup, request->asker, request->process, try_loader_folder, walk);
	if (!stopped && !request->loader_only)
		stopped = walk_places(walk);
out:
	free(walk);
	return stopped;
}

/* A place visited as a folder: the trust rule, which judges files, is the caller's business. */
static bool visit_place(struct walk *walk, const char *folder, enum search_step step, struct trust_place *trust)
{
	(void)trust;
	return folder && folder[0] && walk->visit_place(folder, step, walk->arg);
}

bool search_places(const struct search_request *request, search_place_visit visit, void *arg)
{
	struct walk *walk = start_walk(request);
	bool stopped = false;
	if (walk) {
		walk->place = visit_place;
		walk->visit_place = visit;
		walk->arg = arg;
		stopped = walk_places(walk);
	}
	free(walk);
	return stopped;
}
