/* The loader model held against the real loader on generated layouts.
 *
 * A seeded generator builds layouts from two templates compiled once (tests/model_templates.c):
 * chains of libraries whose RPATH and RUNPATH use absolute folders, $ORIGIN and ${ORIGIN}, $LIB,
 * $PLATFORM, empty and relative elements, folders reached through symlinks, duplicates and missing
 * folders; LD_LIBRARY_PATH with the same kinds of elements; copies of one name in several folders
 * and in the subfolders the loader names (glibc-hwcaps, legacy ones) and in some it does not;
 * DF_1_NODEFLIB; libraries reached through symlinks and relative paths. Each case is one of:
 *   - a program tree (or a library's, under ld.so --list): every dependency the inspector resolves
 *     (nvinterpose-inspect --json) against LD_TRACE_LOADED_OBJECTS;
 *   - a bare-name dlopen of an NVIDIA name by a caller (the program, a library it dlopened, or one
 *     loaded as a dependency, so that its chain of loaders counts);
 *   - the DT_NEEDED of an NVIDIA library that a caller dlopens by path.
 * The last two are run plainly (LD_DEBUG=libs says which step answered) and under the runtime,
 * whose NVINTERPOSE_PATH holds a marker copy of every NVIDIA name. Where the plain loader finds a
 * file, the runtime's run must end with that same file; where it finds none, the runtime must
 * supply its own first candidate (the caller's folder, then the marker), or do nothing and say
 * that it could not know (scored apart). Every failure prints the seed that rebuilds it:
 *   NVI_MODEL_SEED=S NVI_MODEL_CASES=1 meson test -C build model
 * NVI_MODEL_CASES sets the count (meson option model_cases, the default); NVI_MODEL_KEEP=1 keeps
 * every layout. */
#define _GNU_SOURCE
#include "common.h"
#include "model_templates.h"

#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SEED 1
#define MAX_ITEMS 64
#define REPORTED_FAILURES 8

/* Adds one to a coverage count (below). */
static void count(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* ---- a seeded generator ------------------------------------------------------------------------ */

struct rng {
	uint64_t state;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull); /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned pick(struct rng *r, unsigned n) { return n ? (unsigned)(rng_next(r) % n) : 0; }
static bool chance(struct rng *r, unsigned percent) { return pick(r, 100) < percent; }

/* ---- what the grammar needs of this machine, asked of the loader --------------------------------- */

struct machine {
	char *interpreter;
	char *lib;      /* what $LIB expands to */
	char *platform; /* what $PLATFORM expands to */
	size_t searched_count;
	char *searched[MAX_ITEMS];  /* the subfolders the loader tries in a folder, in its order ("" left out) */
	size_t unsearched_count;
	char *unsearched[MAX_ITEMS]; /* subfolder names of the same kinds that it does not try here */
};

static struct machine machine;

static const char *interpreter_of(const struct model_template *t)
{
	const Elf64_Ehdr *header = (const Elf64_Ehdr *)t->bytes;
	const Elf64_Phdr *phdrs = (const Elf64_Phdr *)(t->bytes + header->e_phoff);
	for (int i = 0; i < header->e_phnum; i++)
		if (phdrs[i].p_type == PT_INTERP)
			return (const char *)t->bytes + phdrs[i].p_offset;
	ck_abort_msg("the program template has no PT_INTERP");
	return NULL;
}

static bool is_searched(const char *subdir)
{
	for (size_t i = 0; i < machine.searched_count; i++)
		if (strcmp(machine.searched[i], subdir) == 0)
			return true;
	return false;
}

static void add_unsearched(const char *subdir)
{
	if (!is_searched(subdir) && machine.unsearched_count < MAX_ITEMS)
		machine.unsearched[machine.unsearched_count++] = strdup(subdir);
}

static void learn_machine(const struct model_template *program)
{
	machine.interpreter = strdup(interpreter_of(program));
	const char *probe = "/nonexistent-model-probe";
	char *lib = test_loader_expansion(test_format("%s/$LIB", probe));
	char *platform = test_loader_expansion(test_format("%s/$PLATFORM", probe));
	ck_assert(strncmp(lib, probe, strlen(probe)) == 0 && strncmp(platform, probe, strlen(probe)) == 0);
	machine.lib = strdup(lib + strlen(probe) + 1);
	machine.platform = strdup(platform + strlen(probe) + 1);
	/* The subfolders: the folders the loader lists for one LD_LIBRARY_PATH element. */
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s", probe), "LD_DEBUG=libs", NULL };
	struct test_run run = test_probe(env, "");
	const char *line = strstr(run.output, "search path=");
	ck_assert_msg(line, "%s", run.output);
	line += strlen("search path=");
	const char *end = strstr(line, "\t\t(LD_LIBRARY_PATH)");
	ck_assert_msg(end, "%s", run.output);
	char *list = strndup(line, (size_t)(end - line));
	for (char *save = NULL, *element = strtok_r(list, ":", &save); element; element = strtok_r(NULL, ":", &save)) {
		ck_assert(strncmp(element, probe, strlen(probe)) == 0);
		const char *subdir = element + strlen(probe);
		if (*subdir == '/' && machine.searched_count < MAX_ITEMS && !is_searched(subdir + 1))
			machine.searched[machine.searched_count++] = strdup(subdir + 1);
	}
	/* Names the loader does not try here: the glibc-hwcaps ones its --help lists as unsupported
	   (glibc 2.33 and later), and legacy names of other CPUs. */
	const char *argv[] = { machine.interpreter, "--help", NULL };
	struct test_run help = test_run(argv, NULL, 60);
	const char *section = strstr(help.output, "Subdirectories of glibc-hwcaps directories");
	for (const char *s = section ? strchr(section, '\n') : NULL; s && s[1] == ' ' && s[2] == ' ';) {
		s += 3;
		size_t n = strcspn(s, " \n");
		add_unsearched(test_format("glibc-hwcaps/%.*s", (int)n, s));
		s = strchr(s, '\n');
	}
	add_unsearched("glibc-hwcaps/model-none");
	static const char *const legacy[] = { "haswell", "xeon_phi", "avx512_1", "tls/haswell", "i686", "power9", "aarch64" };
	for (size_t i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++)
		add_unsearched(legacy[i]);
	free(run.output);
	free(help.output);
	free(list);
}

/* ---- layouts ----------------------------------------------------------------------------------- */

/* What a search list of a case holds, for the coverage counts. */
enum feature {
	FEATURE_ORIGIN,
	FEATURE_ORIGIN_BRACED,
	FEATURE_LIB,
	FEATURE_LIB_BRACED,
	FEATURE_PLATFORM,
	FEATURE_PLATFORM_BRACED,
	FEATURE_EMPTY_ELEMENT,
	FEATURE_RELATIVE,
	FEATURE_SYMLINKED_FOLDER,
	FEATURE_TRAILING_SLASH,
	FEATURE_DOUBLE_SLASH,
	FEATURE_DUPLICATE,
	FEATURE_MISSING_FOLDER,
	FEATURE_LITERAL_DOLLAR,
	FEATURE_SEMICOLON,
	FEATURE_EMPTY_LIST,
	FEATURE_COUNT
};

static const char *const feature_names[] = {
	[FEATURE_ORIGIN] = "$ORIGIN",
	[FEATURE_ORIGIN_BRACED] = "${ORIGIN}",
	[FEATURE_LIB] = "$LIB",
	[FEATURE_LIB_BRACED] = "${LIB}",
	[FEATURE_PLATFORM] = "$PLATFORM",
	[FEATURE_PLATFORM_BRACED] = "${PLATFORM}",
	[FEATURE_EMPTY_ELEMENT] = "empty element",
	[FEATURE_RELATIVE] = "relative element",
	[FEATURE_SYMLINKED_FOLDER] = "folder through a symlink",
	[FEATURE_TRAILING_SLASH] = "trailing slash",
	[FEATURE_DOUBLE_SLASH] = "double slash",
	[FEATURE_DUPLICATE] = "duplicate element",
	[FEATURE_MISSING_FOLDER] = "missing folder",
	[FEATURE_LITERAL_DOLLAR] = "'$' that is no token",
	[FEATURE_SEMICOLON] = "';' separator (LD_LIBRARY_PATH)",
	[FEATURE_EMPTY_LIST] = "empty list",
};

#define BIT(feature) (1u << (feature))

/* The folders of a case: ROOT (the working folder) and folders below it, two reached through
   symlinks too, one whose name holds a '$' that starts no token. */
enum { BASE_COUNT = 7 };
static const char *const base_names[BASE_COUNT] = { "", "d0", "d1", "d2", "d2/sub", "d3/deep/er", "$ORIGINX" };
static const char *const base_aliases[BASE_COUNT] = { NULL, "l0", NULL, NULL, "l1", NULL, NULL };

enum token_folder { TOKEN_NONE, TOKEN_LIB, TOKEN_PLATFORM };

/* A folder a search list may name: a base, or the folder its $LIB or $PLATFORM expands to there. */
struct target {
	int base;
	enum token_folder token;
};

/* One file of a layout. */
struct placed {
	char *path;   /* where it lies as the loader will name it (a symlink, for some) */
	char *folder; /* the folder of path, through no symlink: what $ORIGIN-relative elements start from */
	char *real;   /* the file itself */
	const char *name;
	struct model_object object;
	unsigned rpath_features, runpath_features;
	bool written;
};

struct layout {
	struct rng *rng;
	const struct model_template *library, *program;
	char *root;
	char *bases[BASE_COUNT];
	char *aliases[BASE_COUNT];
	size_t target_count;
	struct target targets[MAX_ITEMS];
	size_t placed_count;
	struct placed placed[MAX_ITEMS];
	unsigned features; /* every list's, together */
	int store_count;
};

static char *target_folder(const struct layout *layout, struct target t)
{
	const char *base = layout->bases[t.base];
	switch (t.token) {
	case TOKEN_LIB: return test_format("%s/%s", base, machine.lib);
	case TOKEN_PLATFORM: return test_format("%s/%s", base, machine.platform);
	case TOKEN_NONE: break;
	}
	return strdup(base);
}

static void add_target(struct layout *layout, struct target t)
{
	for (size_t i = 0; i < layout->target_count; i++)
		if (layout->targets[i].base == t.base && layout->targets[i].token == t.token)
			return;
	if (layout->target_count < MAX_ITEMS)
		layout->targets[layout->target_count++] = t;
}

/* The way from folder to target, both absolute and free of symlinks: "../../d1", "" for the same. */
static char *relative_path(const char *from, const char *to)
{
	size_t common = 0;
	for (size_t i = 0;; i++) {
		bool from_end = from[i] == '\0' || from[i] == '/', to_end = to[i] == '\0' || to[i] == '/';
		if (from_end && to_end)
			common = i;
		if (from[i] != to[i] || from[i] == '\0')
			break;
	}
	char *path = strdup("");
	for (const char *s = from + common; *s; s++)
		if (*s == '/')
			path = test_format("%s%s..", path, path[0] ? "/" : "");
	const char *rest = to + common;
	if (*rest == '/')
		rest++;
	if (*rest)
		path = test_format("%s%s%s", path, path[0] ? "/" : "", rest);
	return path;
}

static struct layout *layout_new(struct rng *rng, const char *root, const struct model_template *library,
				 const struct model_template *program)
{
	struct layout *layout = calloc(1, sizeof(*layout));
	layout->rng = rng;
	layout->library = library;
	layout->program = program;
	layout->root = strdup(root);
	for (int b = 0; b < BASE_COUNT; b++) {
		layout->bases[b] = b ? test_format("%s/%s", root, base_names[b]) : strdup(root);
		test_mkdirs(layout->bases[b]);
		if (base_aliases[b]) {
			layout->aliases[b] = test_format("%s/%s", root, base_aliases[b]);
			ck_assert_int_eq(symlink(base_names[b], layout->aliases[b]), 0);
		}
	}
	test_mkdirs(test_format("%s/store", root));
	return layout;
}

/* One element naming target t, spelled one of the ways the loader reads; origin is the folder of
   the list's owner (NULL: $ORIGIN would not be the owner's). */
static char *spell_folder(struct layout *layout, struct target t, const char *origin, unsigned *features)
{
	struct rng *r = layout->rng;
	char *base;
	unsigned way = pick(r, 100);
	if (origin && way < 30) {
		char *rel = relative_path(origin, layout->bases[t.base]);
		bool braced = chance(r, 35);
		*features |= BIT(braced ? FEATURE_ORIGIN_BRACED : FEATURE_ORIGIN);
		base = test_format("%s%s%s", braced ? "${ORIGIN}" : "$ORIGIN", rel[0] ? "/" : "", rel);
	} else if (layout->aliases[t.base] && way < 45) {
		*features |= BIT(FEATURE_SYMLINKED_FOLDER);
		base = strdup(layout->aliases[t.base]);
	} else if (way < 60) {
		*features |= BIT(FEATURE_RELATIVE);
		if (t.base == 0 && t.token == TOKEN_NONE && chance(r, 60)) {
			*features |= BIT(FEATURE_EMPTY_ELEMENT);
			return strdup(""); /* the working folder, for the loader */
		}
		base = strdup(t.base == 0 ? "." : base_names[t.base]);
	} else if (way < 68) {
		*features |= BIT(FEATURE_DOUBLE_SLASH);
		base = t.base == 0 ? test_format("%s//.", layout->root) : test_format("%s//%s", layout->root, base_names[t.base]);
	} else {
		base = strdup(layout->bases[t.base]);
	}
	if (t.base == 6)
		*features |= BIT(FEATURE_LITERAL_DOLLAR);
	const char *tail = "";
	if (t.token == TOKEN_LIB) {
		unsigned spelled = pick(r, 10);
		tail = spelled < 4 ? "/$LIB" : spelled < 8 ? "/${LIB}" : test_format("/%s", machine.lib);
		if (spelled < 8)
			*features |= BIT(spelled < 4 ? FEATURE_LIB : FEATURE_LIB_BRACED);
	} else if (t.token == TOKEN_PLATFORM) {
		unsigned spelled = pick(r, 10);
		tail = spelled < 4 ? "/$PLATFORM" : spelled < 8 ? "/${PLATFORM}" : test_format("/%s", machine.platform);
		if (spelled < 8)
			*features |= BIT(spelled < 4 ? FEATURE_PLATFORM : FEATURE_PLATFORM_BRACED);
	}
	char *element = test_format("%s%s", base, tail);
	if (chance(r, 10)) {
		*features |= BIT(FEATURE_TRAILING_SLASH);
		element = test_format("%s/", element);
	}
	return element;
}

static struct target random_target(struct layout *layout)
{
	struct rng *r = layout->rng;
	if (layout->target_count && chance(r, 75))
		return layout->targets[pick(r, (unsigned)layout->target_count)];
	unsigned token = pick(r, 10);
	return (struct target){ .base = (int)pick(r, BASE_COUNT), .token = token < 7 ? TOKEN_NONE : token < 9 ? TOKEN_LIB : TOKEN_PLATFORM };
}

/* A search list: RPATH or RUNPATH (separator ':'), or LD_LIBRARY_PATH (':' or ';'). */
static char *make_list(struct layout *layout, const char *origin, bool library_path, unsigned *features)
{
	struct rng *r = layout->rng;
	*features = 0;
	if (!library_path && chance(r, 3)) {
		*features |= BIT(FEATURE_EMPTY_LIST);
		layout->features |= *features;
		return strdup("");
	}
	char *elements[5];
	unsigned count = 1 + pick(r, 4);
	char *list = NULL;
	for (unsigned i = 0; i < count; i++) {
		if (i && chance(r, 10)) {
			*features |= BIT(FEATURE_DUPLICATE);
			elements[i] = elements[pick(r, i)];
		} else if (chance(r, 8)) {
			*features |= BIT(FEATURE_MISSING_FOLDER);
			elements[i] = origin && chance(r, 40) ? strdup("$ORIGIN/missing") : test_format("%s/missing", layout->root);
			if (elements[i][0] == '$')
				*features |= BIT(FEATURE_ORIGIN);
		} else {
			elements[i] = spell_folder(layout, random_target(layout), origin, features);
		}
		const char *separator = library_path && chance(r, 20) ? ";" : ":";
		if (separator[0] == ';')
			*features |= BIT(FEATURE_SEMICOLON);
		list = list ? test_format("%s%s%s", list, separator, elements[i]) : strdup(elements[i]);
	}
	layout->features |= *features;
	return list;
}

/* Places a file named name in a random folder: a base, maybe the folder of a token there, maybe a
   subfolder the loader tries (or one it does not), maybe as a symlink to a file elsewhere. A file
   a program or a dlopen names by path may have to lie where no '$' is: a dlopen name with a '$' is
   the loader's alone (the runtime passes it through). */
/* Whether a file of the layout is at path already (written or not yet). */
static bool is_taken(const struct layout *layout, const char *path)
{
	struct stat st;
	for (size_t i = 0; i < layout->placed_count; i++)
		if (strcmp(layout->placed[i].path, path) == 0)
			return true;
	return lstat(path, &st) == 0;
}

static struct placed *place_file(struct layout *layout, const char *name, bool plain_folder, bool dollar_allowed)
{
	struct rng *r = layout->rng;
	ck_assert(layout->placed_count < MAX_ITEMS);
	char *folder = NULL;
	for (int attempt = 0; !folder || (is_taken(layout, test_format("%s/%s", folder, name)) && attempt < 16); attempt++) {
		unsigned token = pick(r, 100);
		struct target t = { .base = (int)pick(r, BASE_COUNT), .token = token < 76 ? TOKEN_NONE : token < 88 ? TOKEN_LIB : TOKEN_PLATFORM };
		if (!dollar_allowed && strchr(base_names[t.base], '$'))
			t.base = 0;
		add_target(layout, t);
		folder = target_folder(layout, t);
		unsigned sub = plain_folder ? 100 : pick(r, 100);
		if (sub < 14 && machine.searched_count)
			folder = test_format("%s/%s", folder, machine.searched[pick(r, (unsigned)machine.searched_count)]);
		else if (sub < 22 && machine.unsearched_count)
			folder = test_format("%s/%s", folder, machine.unsearched[pick(r, (unsigned)machine.unsearched_count)]);
	}
	test_mkdirs(folder);
	char *path = test_format("%s/%s", folder, name);
	ck_assert_msg(!is_taken(layout, path), "no free place for %s", name);
	struct placed *p = &layout->placed[layout->placed_count++];
	p->name = name;
	p->folder = folder;
	p->path = path;
	p->real = p->path;
	if (chance(r, 12)) {
		p->real = test_format("%s/store/%d-%s", layout->root, layout->store_count++, name);
		const char *target = chance(r, 50) ? p->real : test_format("%s/%s", relative_path(folder, test_format("%s/store", layout->root)),
									    strrchr(p->real, '/') + 1);
		ck_assert_msg(symlink(target, p->path) == 0 || errno == EEXIST, "%s: %s", p->path, strerror(errno));
	}
	return p;
}

static const char *tag_name(enum model_slot_tag tag)
{
	static const char *const names[] = { "ignored", "NEEDED", "RPATH", "RUNPATH" };
	return names[tag];
}

/* Fills p's object: its SONAME, NEEDED (needed[0], and needed[1] in a later slot when one falls
   to it), RPATH and RUNPATH lists in slots 1 and 2, NODEFLIB. */
static void make_object(struct layout *layout, struct placed *p, const char *soname, const char *const needed[2],
			unsigned nodeflib_percent)
{
	struct rng *r = layout->rng;
	struct model_object *o = &p->object;
	o->soname = soname;
	o->slots[0] = (struct model_slot){ needed[0] ? MODEL_SLOT_NEEDED : MODEL_SLOT_IGNORED, needed[0] };
	unsigned first = pick(r, 100);
	enum model_slot_tag one = first < 36 ? MODEL_SLOT_RPATH : first < 72 ? MODEL_SLOT_RUNPATH : MODEL_SLOT_IGNORED;
	unsigned second = pick(r, 100);
	enum model_slot_tag two = second < 12 ? MODEL_SLOT_RPATH : second < 24 ? MODEL_SLOT_RUNPATH
				  : second < 32 && needed[1] ? MODEL_SLOT_NEEDED : MODEL_SLOT_IGNORED;
	if (two == one && one != MODEL_SLOT_IGNORED)
		two = MODEL_SLOT_IGNORED; /* one DT_RPATH and one DT_RUNPATH at most, as linkers write them */
	enum model_slot_tag tags[2] = { one, two };
	for (int k = 0; k < 2; k++) {
		struct model_slot *slot = &o->slots[k + 1];
		slot->tag = tags[k];
		if (tags[k] == MODEL_SLOT_NEEDED)
			slot->value = needed[1];
		else if (tags[k] != MODEL_SLOT_IGNORED)
			slot->value = make_list(layout, p->folder, false, tags[k] == MODEL_SLOT_RPATH ? &p->rpath_features : &p->runpath_features);
	}
	o->nodeflib = chance(r, nodeflib_percent);
}

/* The lists one object of a role has, for the coverage counts. */
static void count_lists(const char *role, const struct placed *p)
{
	bool rpath = false, runpath = false, ignored = false;
	for (int k = 1; k < MODEL_SLOTS; k++) {
		rpath |= p->object.slots[k].tag == MODEL_SLOT_RPATH;
		runpath |= p->object.slots[k].tag == MODEL_SLOT_RUNPATH;
		ignored |= p->object.slots[k].tag == MODEL_SLOT_IGNORED;
	}
	count("lists: %s with %s", role, rpath && runpath ? "RPATH and RUNPATH (RPATH ignored)" : rpath ? "RPATH" : runpath ? "RUNPATH" : "neither");
	if (ignored)
		count("lists: a slot with a tag the loader ignores");
}

static void write_placed(struct layout *layout, struct placed *p, bool program)
{
	model_template_write(program ? layout->program : layout->library, &p->object, p->real);
	p->written = true;
}

/* One line a file, for the failure report. */
static char *describe_layout(const struct layout *layout)
{
	char *text = test_format("  layout under %s (the working folder):\n", layout->root);
	for (size_t i = 0; i < layout->placed_count; i++) {
		const struct placed *p = &layout->placed[i];
		if (!p->written)
			continue;
		text = test_format("%s    %s%s%s:", text, p->path + strlen(layout->root) + 1, p->real != p->path ? " -> " : "",
				   p->real != p->path ? p->real + strlen(layout->root) + 1 : "");
		if (p->object.soname)
			text = test_format("%s SONAME %s;", text, p->object.soname);
		for (int k = 0; k < MODEL_SLOTS; k++)
			if (p->object.slots[k].tag != MODEL_SLOT_IGNORED)
				text = test_format("%s %s '%s';", text, tag_name(p->object.slots[k].tag), p->object.slots[k].value);
		text = test_format("%s%s\n", text, p->object.nodeflib ? " NODEFLIB" : "");
	}
	return text;
}

/* ---- coverage ---------------------------------------------------------------------------------- */

struct counter {
	char key[192];
	unsigned long count;
};

static struct counter counters[512];
static size_t counter_count;

static void add_count(const char *key, unsigned long n)
{
	for (size_t i = 0; i < counter_count; i++)
		if (strcmp(counters[i].key, key) == 0) {
			counters[i].count += n;
			return;
		}
	ck_assert(counter_count < sizeof(counters) / sizeof(counters[0]));
	snprintf(counters[counter_count].key, sizeof(counters[0].key), "%s", key);
	counters[counter_count++].count = n;
}

static void count(const char *format, ...) __attribute__((format(printf, 1, 2)));

static void count(const char *format, ...)
{
	char key[192];
	va_list args;
	va_start(args, format);
	vsnprintf(key, sizeof(key), format, args);
	va_end(args);
	add_count(key, 1);
}

static int compare_counters(const void *a, const void *b)
{
	return strcmp(((const struct counter *)a)->key, ((const struct counter *)b)->key);
}

static void print_coverage(void)
{
	qsort(counters, counter_count, sizeof(counters[0]), compare_counters);
	char group[192] = "";
	for (size_t i = 0; i < counter_count; i++) {
		const char *colon = strchr(counters[i].key, ':');
		size_t n = colon ? (size_t)(colon - counters[i].key) : 0;
		if (strlen(group) != n || strncmp(group, counters[i].key, n) != 0) {
			snprintf(group, sizeof(group), "%.*s", (int)n, counters[i].key);
			printf("  %s:\n", group);
		}
		printf("    %7lu  %s\n", counters[i].count, colon ? colon + 2 : counters[i].key);
	}
}

static void count_features(const char *group, unsigned features)
{
	for (int f = 0; f < FEATURE_COUNT; f++)
		if (features & BIT(f))
			count("%s: %s", group, feature_names[f]);
}

/* ---- running a case ----------------------------------------------------------------------------- */

static const char *const clean_env[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=", "LD_DEBUG=", "LD_TRACE_LOADED_OBJECTS=", "NVINTERPOSE_PATH=",
					 "NVINTERPOSE_LOG=", "NVINTERPOSE_POLICY=", "NVINTERPOSE_LOG_FILE=", "NVINTERPOSE_DISABLE=", NULL };

/* argv run in folder with clean_env, then extra (NULL-terminated). */
static struct test_run run_in(const char *folder, const char *const *argv, const char *const *extra)
{
	const char *env[32];
	size_t n = 0;
	for (size_t i = 0; clean_env[i]; i++)
		env[n++] = clean_env[i];
	for (size_t i = 0; extra && extra[i] && n < 31; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	char home[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(home, sizeof(home)));
	ck_assert_int_eq(chdir(folder), 0);
	struct test_run run = test_run(argv, env, 60);
	ck_assert_int_eq(chdir(home), 0);
	return run;
}

/* The file a path names, for matching the loader's names to the layout's files. */
static char *real_path_in(const char *folder, const char *path)
{
	char *full = path[0] == '/' ? strdup(path) : test_format("%s/%s", folder, path);
	char *real = realpath(full, NULL);
	return real ? real : full;
}

/* $ORIGIN of an object loaded as path from folder cwd (glibc's _dl_new_object): the folder part of
   the path as given, after cwd when it is relative, never normalized. */
static char *origin_of(const char *cwd, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (path[0] == '/')
		return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	return slash ? test_format("%s/%.*s", cwd, (int)(slash - path), path) : strdup(cwd);
}

/* The loader's debug output (LD_DEBUG=libs) on the search of name that ended at path: the label of
   the list that held it ("RPATH from file X", "LD_LIBRARY_PATH", "RUNPATH from file X", "system
   search path", "cache"), or NULL. */
static char *answering_list(const char *output, const char *name, const char *path)
{
	char *find = test_format("find library=%s [", name);
	char *trying = test_format("trying file=%s\n", path);
	const char *label = NULL;
	size_t label_length = 0;
	bool in_block = false;
	for (const char *line = output; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end = strchr(line, '\n');
		size_t length = end ? (size_t)(end - line) : strlen(line);
		const char *search_path = memmem(line, length, " search path=", 13);
		if (memmem(line, length, "find library=", 13))
			in_block = memmem(line, length, find, strlen(find)) != NULL;
		else if (in_block && search_path) {
			const char *open = memmem(line, length, "\t\t(", 3);
			label = open ? open + 3 : NULL;
			label_length = open ? (size_t)(line + length - label - 1) : 0;
		} else if (in_block && memmem(line, length, " search cache=", 14)) {
			label = "cache";
			label_length = 5;
		} else if (in_block && memmem(line, length + 1, trying, strlen(trying)) && label) {
			return strndup(label, label_length);
		}
	}
	return in_block && label && label_length == 5 && strncmp(label, "cache", 5) == 0 ? strdup("cache") : NULL;
}

/* The subfolder of a searched folder that path lies in: "glibc-hwcaps", "legacy" or NULL. */
static const char *subfolder_kind(const char *path, const char *name)
{
	for (size_t i = 0; i < machine.searched_count; i++) {
		char *tail = test_format("/%s/%s", machine.searched[i], name);
		size_t n = strlen(tail), length = strlen(path);
		if (length > n && strcmp(path + length - n, tail) == 0)
			return strncmp(machine.searched[i], "glibc-hwcaps/", 13) == 0 ? "glibc-hwcaps" : "legacy";
	}
	return NULL;
}

static const struct placed *placed_at(const struct layout *layout, const char *path)
{
	char *real = real_path_in(layout->root, path);
	for (size_t i = 0; i < layout->placed_count; i++) {
		const struct placed *p = &layout->placed[i];
		char *mine = real_path_in(layout->root, p->real);
		bool same = strcmp(mine, real) == 0;
		free(mine);
		if (same && p->written) {
			free(real);
			return p;
		}
	}
	free(real);
	return NULL;
}

/* What one answer tells of the grammar: the step (and whose list), the features of that list, the
   subfolder, symlinks. asker and program are the files whose own and the program's RPATH are. */
static void count_answer(const char *group, const struct layout *layout, const char *output, const char *name, const char *path,
			 const struct placed *asker, const struct placed *program, unsigned library_path_features)
{
	char *label = answering_list(output, name, path);
	unsigned features = 0;
	if (!label) {
		count("%s: by a path or unknown", group);
	} else if (strncmp(label, "RPATH from file ", 16) == 0 || strncmp(label, "RUNPATH from file ", 18) == 0) {
		bool rpath = label[1] == 'P';
		const struct placed *owner = placed_at(layout, label + (rpath ? 16 : 18));
		if (!asker) {
			/* LD_DEBUG=files: "file=NAME [0];  needed by ASKER [0]" before the search. */
			char *file = test_format("file=%s [", name);
			const char *at = strstr(output, file);
			const char *by = at ? strstr(at, "needed by ") : NULL;
			if (by && by < strchr(at, '\n')) {
				by += 10;
				char *who = strndup(by, strcspn(by, " \n"));
				asker = placed_at(layout, who);
				free(who);
			}
			free(file);
		}
		/* The loader labels a folder with the list that named it first in the process: a label
		   that is neither the asker's nor the program's may be such a folder. */
		count("%s: %s%s", group, rpath ? "RPATH" : "RUNPATH",
		      !owner ? " (of a file not in the layout)" : owner == asker ? " (the asker's own)" : owner == program ? " (the program's)"
		      : rpath ? " (a loader's in the chain, or labelled so)" : " (labelled with another list that named the folder)");
		if (owner)
			features = rpath ? owner->rpath_features : owner->runpath_features;
	} else if (strcmp(label, "LD_LIBRARY_PATH") == 0) {
		count("%s: LD_LIBRARY_PATH", group);
		features = library_path_features;
	} else {
		count("%s: %s", group, label);
	}
	count_features("feature of the list that answered", features);
	const char *sub = subfolder_kind(path, name);
	if (sub)
		count("subfolder that answered: %s", sub);
	struct stat st;
	char *full = path[0] == '/' ? strdup(path) : test_format("%s/%s", layout->root, path);
	if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode))
		count("symlink: the answer was a symlink to a file");
	for (int b = 0; b < BASE_COUNT; b++)
		if (layout->aliases[b] && strncmp(path, layout->aliases[b], strlen(layout->aliases[b])) == 0)
			count("symlink: the answer lay in a folder named through a symlink");
	free(full);
	free(label);
}

/* ---- one case ----------------------------------------------------------------------------------- */

enum kind { KIND_PROGRAM_TREE, KIND_LIBRARY_TREE, KIND_BARE_NAME, KIND_NEEDED };

enum caller_kind {
	CALLER_PROGRAM,              /* the program's own code */
	CALLER_DLOPENED,             /* a library the program dlopened by path */
	CALLER_NEEDED_BY_PROGRAM,    /* the program's DT_NEEDED */
	CALLER_NEEDED_BY_DLOPENED,   /* the DT_NEEDED of a library the program dlopened */
	CALLER_NEEDED_BY_NEEDED,     /* the DT_NEEDED of the program's DT_NEEDED */
	CALLER_KIND_COUNT
};

static const char *const caller_kind_names[] = {
	[CALLER_PROGRAM] = "the program",
	[CALLER_DLOPENED] = "a library the program dlopened",
	[CALLER_NEEDED_BY_PROGRAM] = "the program's DT_NEEDED",
	[CALLER_NEEDED_BY_DLOPENED] = "the DT_NEEDED of a dlopened library",
	[CALLER_NEEDED_BY_NEEDED] = "the DT_NEEDED of a DT_NEEDED (a chain of loaders)",
};

struct suite_state {
	struct model_template library, program;
	char *base;     /* every case's folder is below */
	char *markers;  /* NVINTERPOSE_PATH: a marker copy of every NVIDIA name */
	const char *preload[2]; /* the runtime as built, and at -O0 (the hooks must keep the caller's frame at both) */
	bool keep;
	unsigned long failures;
};

struct outcome {
	bool failed;
	char *report;
};

static void disagree(struct outcome *outcome, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void disagree(struct outcome *outcome, const char *format, ...)
{
	va_list args;
	char *text = NULL;
	va_start(args, format);
	ck_assert_int_ge(vasprintf(&text, format, args), 0);
	va_end(args);
	outcome->failed = true;
	outcome->report = outcome->report ? test_format("%s%s", outcome->report, text) : text;
}

/* A path to p as a program or dlopen names it: absolute, through a symlinked folder, relative. */
static char *spell_path(struct layout *layout, const struct placed *p, bool relative_allowed)
{
	struct rng *r = layout->rng;
	unsigned way = pick(r, 100);
	for (int b = BASE_COUNT - 1; b > 0 && way < 25; b--) {
		size_t n = strlen(layout->bases[b]);
		if (layout->aliases[b] && strncmp(p->path, layout->bases[b], n) == 0 && p->path[n] == '/') {
			count("path: named through a symlinked folder");
			return test_format("%s%s", layout->aliases[b], p->path + n);
		}
	}
	if (relative_allowed && way >= 70) {
		const char *rel = p->path + strlen(layout->root) + 1;
		count("path: relative");
		return strchr(rel, '/') && chance(r, 60) ? strdup(rel) : test_format("./%s", rel);
	}
	return strdup(p->path);
}

static const char *const tree_names[] = { "libmodel-a.so.1", "libmodel-b.so.1", "libmodel-c.so.1", "libcusparse.so.77", "libnvJitLink.so.77" };
static const char *const bare_names[] = { "libcusparse.so.77", "libnvJitLink.so.77", "libcublas.so.77", "libcurand.so.77" };
static const char *const needed_names[] = { "libnvJitLink.so.77", "libcusparse.so.77" };
#define NVIDIA_CALLER "libcufft.so.77"
#define NVIDIA_PARENT "libcusolver.so.77"

static unsigned copies(struct rng *r)
{
	unsigned n = pick(r, 100);
	return n < 14 ? 0 : n < 56 ? 1 : n < 84 ? 2 : 3;
}

/* A reference to p as a DT_NEEDED of the object at asker_folder: its bare name mostly, or a path
   (absolute, or with $ORIGIN). */
static const char *needed_reference(struct layout *layout, const struct placed *p, const char *asker_folder, unsigned path_percent)
{
	struct rng *r = layout->rng;
	if (!chance(r, path_percent))
		return p->name;
	if (chance(r, 40)) {
		char *rel = relative_path(asker_folder, p->folder);
		count("DT_NEEDED: a path with $ORIGIN");
		return test_format("$ORIGIN/%s%s%s", rel, rel[0] ? "/" : "", p->name);
	}
	count("DT_NEEDED: an absolute path");
	return p->path;
}

/* ---- program trees: the inspector against LD_TRACE_LOADED_OBJECTS ---- */

struct dependency {
	char *name, *path; /* path NULL: not found */
	char *how;
};

static size_t parse_trace(const char *output, struct dependency *out, size_t capacity)
{
	size_t n = 0;
	for (const char *line = output; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (line[0] != '\t')
			continue;
		char *text = strndup(line + 1, strcspn(line + 1, "\n"));
		char *arrow = strstr(text, " => ");
		char *address = strstr(text, " (0x");
		struct dependency d = { 0 };
		if (arrow) {
			*arrow = '\0';
			d.name = text;
			if (strcmp(arrow + 4, "not found") != 0 && address) {
				*address = '\0';
				d.path = arrow + 4;
			}
		} else if (address) {
			*address = '\0';
			d.name = d.path = text;
		}
		if (!d.name || strcmp(d.name, "linux-vdso.so.1") == 0 || strcmp(d.name, machine.interpreter) == 0)
			continue;
		if (n < capacity)
			out[n++] = d;
	}
	return n;
}

static char *json_string(const char **s)
{
	if (strncmp(*s, "null", 4) == 0) {
		*s += 4;
		return NULL;
	}
	ck_assert_int_eq(**s, '"');
	char *out = malloc(strlen(*s) + 1), *w = out;
	for ((*s)++; **s && **s != '"'; (*s)++) {
		if (**s == '\\')
			(*s)++;
		*w++ = **s;
	}
	*w = '\0';
	(*s)++;
	return out;
}

/* The dependencies of the inspector's JSON that load an object or are not found (not those that
   name an object already loaded). */
static size_t parse_inspector(const char *json, struct dependency *out, size_t capacity, size_t *already)
{
	size_t n = 0;
	*already = 0;
	for (const char *s = strstr(json, "{\"name\":"); s; s = strstr(s, "{\"name\":")) {
		s += 8;
		struct dependency d = { 0 };
		d.name = json_string(&s);
		if (strncmp(s, ",\"path\":", 8) != 0)
			continue;
		s += 8;
		d.path = json_string(&s);
		if (strncmp(s, ",\"how\":", 7) != 0)
			continue;
		s += 7;
		d.how = json_string(&s);
		if (strcmp(d.how, "already_loaded") == 0) {
			(*already)++;
			continue;
		}
		if (n < capacity)
			out[n++] = d;
	}
	return n;
}

/* A DT_NEEDED with a slash is asked for as its tokens expand (dl-deps.c expands it before the
   load), which is the path when it is found: the inspector names it as written. */
static char *dependency_text(const struct dependency *d)
{
	if (strchr(d->name, '/'))
		return test_format("(a path) => %s", d->path ? d->path : "not found");
	return test_format("%s => %s", d->name, d->path ? d->path : "not found");
}

static int compare_strings(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *sorted_text(const struct dependency *list, size_t n)
{
	char **lines = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		lines[i] = dependency_text(&list[i]);
	qsort(lines, n, sizeof(char *), compare_strings);
	char *text = strdup("");
	for (size_t i = 0; i < n; i++)
		text = test_format("%s      %s\n", text, lines[i]);
	free(lines);
	return text;
}

static void tree_case(struct suite_state *suite, struct layout *layout, bool library_root, struct outcome *outcome)
{
	struct rng *r = layout->rng;
	count("case: %s", library_root ? "a library's tree (the loader run on it, as ldd does)" : "a program's tree");
	/* Names and their copies first: the lists then name their folders. */
	unsigned name_count = 2 + pick(r, 3);
	const char *names[5];
	for (unsigned i = 0; i < 5; i++)
		names[i] = tree_names[i];
	for (unsigned i = 0; i < 5; i++) {
		unsigned k = i + pick(r, 5 - i);
		const char *t = names[i];
		names[i] = names[k];
		names[k] = t;
	}
	size_t first_of[6];
	for (unsigned i = 0; i < name_count; i++) {
		first_of[i] = layout->placed_count;
		unsigned n = copies(r);
		if (n == 0)
			count("copies: a name with none (missing)");
		else if (n > 1)
			count("copies: a name with several");
		for (unsigned c = 0; c < n; c++)
			place_file(layout, names[i], false, true);
	}
	first_of[name_count] = layout->placed_count;
	struct placed *root = place_file(layout, library_root ? "libmodel-root.so" : "model-program", true, false);
	if (!library_root && root->real != root->path) {
		/* A program's $ORIGIN is the folder of its real file (/proc/self/exe). */
		root->folder = strndup(root->real, (size_t)(strrchr(root->real, '/') - root->real));
		count("path: the program through a symlink");
	}
	/* A reference to a copy of name i (a path names one copy; a bare name all of them). */
	for (size_t i = 0; i < first_of[name_count]; i++) {
		struct placed *p = &layout->placed[i];
		unsigned own = 0;
		while (own + 1 < name_count && first_of[own + 1] <= i)
			own++;
		const char *needed[2] = { NULL, NULL };
		for (int k = 0; k < 2; k++) {
			if (!chance(r, k ? 50 : 70))
				continue;
			unsigned next = own + 1 < name_count && chance(r, 80) ? own + 1 + pick(r, name_count - own - 1) : pick(r, name_count);
			size_t n = first_of[next + 1] - first_of[next];
			needed[k] = n ? needed_reference(layout, &layout->placed[first_of[next] + pick(r, (unsigned)n)], p->folder, 8)
				      : names[next];
		}
		make_object(layout, p, chance(r, 90) ? p->name : NULL, needed, 12);
		write_placed(layout, p, false);
	}
	const char *root_needed[2] = { names[0], names[1] };
	if (first_of[1] > first_of[0])
		root_needed[0] = needed_reference(layout, &layout->placed[first_of[0]], root->folder, 10);
	make_object(layout, root, library_root && chance(r, 50) ? "libmodel-root.so" : NULL, root_needed, 15);
	write_placed(layout, root, !library_root);
	count_lists(library_root ? "the root library" : "the program", root);
	if (root->object.nodeflib)
		count("NODEFLIB: the root has it");
	unsigned library_path_features = 0;
	char *library_path = chance(r, 55) ? make_list(layout, root->folder, true, &library_path_features) : NULL;
	count_features("feature in a case", layout->features);

	char *spelled = spell_path(layout, root, true);
	const char *env[4] = { NULL };
	size_t e = 0;
	if (library_path)
		env[e++] = test_format("LD_LIBRARY_PATH=%s", library_path);
	/* Without ld.so.cache at times (a library run under the loader can be): the system folders
	   answer then, and NODEFLIB keeps them out. */
	bool no_cache = library_root && chance(r, 40);
	if (no_cache)
		count("case: a library's tree without ld.so.cache (--inhibit-cache)");
	const char *inspect_argv[] = { test_setting("NVI_INSPECT"), "--json", no_cache ? "--cache" : spelled, no_cache ? "none" : NULL,
				       no_cache ? spelled : NULL, NULL };
	struct test_run inspected = run_in(layout->root, inspect_argv, env);
	env[e++] = "LD_TRACE_LOADED_OBJECTS=1";
	env[e++] = "LD_DEBUG=libs,files";
	const char *program_argv[] = { spelled, NULL };
	const char *library_argv[] = { machine.interpreter, no_cache ? "--inhibit-cache" : spelled, no_cache ? spelled : NULL, NULL }; /* as ldd runs it */
	struct test_run traced = run_in(layout->root, library_root ? library_argv : program_argv, env);

	struct dependency loader[MAX_ITEMS], inspector[MAX_ITEMS];
	size_t already = 0;
	size_t loader_count = parse_trace(traced.output, loader, MAX_ITEMS);
	size_t inspector_count = inspected.status <= 1 ? parse_inspector(inspected.output, inspector, MAX_ITEMS, &already) : 0;
	char *loader_text = sorted_text(loader, loader_count), *inspector_text = sorted_text(inspector, inspector_count);
	char *header = test_format("  %s%s%s%s\n", library_root ? no_cache ? "LD_TRACE_LOADED_OBJECTS=1 ld.so --inhibit-cache " : "LD_TRACE_LOADED_OBJECTS=1 ld.so " : "LD_TRACE_LOADED_OBJECTS=1 ", spelled, library_path ? " with LD_LIBRARY_PATH=" : "",
				   library_path ? library_path : "");
	if (inspected.status > 1 || loader_count == 0)
		disagree(outcome, "%s  the inspector (status %d) or the loader gave nothing to compare:\n%s\n%s", header, inspected.status,
		     inspected.output, traced.output);
	else if (strcmp(loader_text, inspector_text) != 0)
		disagree(outcome, "%s  the loader loads:\n%s  the inspector says:\n%s", header, loader_text, inspector_text);
	if (outcome->failed)
		return;
	for (size_t i = 0; i < inspector_count; i++) {
		const struct dependency *d = &inspector[i];
		count("dependency (inspector = loader): %s", d->path ? d->how : "not found");
		if (!d->path && strcmp(d->name, "libc.so.6") == 0)
			count("NODEFLIB: a system library refused (not found)");
		if (d->path && strcmp(d->how, "path") != 0)
			count_answer("a program tree's dependency answered by", layout, traced.output, d->name, d->path, NULL, root,
				     library_path_features);
	}
	if (already)
		count("dependency (inspector = loader): already loaded (by name or file)");
}

/* ---- callers: the runtime's run against the plain loader's ---- */

/* The RESULT of the line "model: COMMAND ARG: RESULT", or NULL when there is none. */
static char *model_result(const char *output, const char *command, const char *arg)
{
	char *key = test_format("model: %s %s: ", command, arg);
	const char *at = strstr(output, key);
	if (!at)
		return NULL;
	at += strlen(key);
	return strndup(at, strcspn(at, "\n"));
}

/* The file the command's line says was loaded, or NULL for an error or none. */
static char *loaded_file(const char *result)
{
	if (!result || strncmp(result, "error: ", 7) == 0 || strcmp(result, "none") == 0)
		return NULL;
	return strdup(result);
}

/* True when the runtime said, for name, that it could not know whether the loader finds it. */
static bool runtime_said_unknown(const char *output, const char *name)
{
	char *key = test_format("%s for ", name);
	for (const char *at = strstr(output, key); at; at = strstr(at + 1, key)) {
		const char *end = strchr(at, '\n');
		const char *unknown = strstr(at, "unknown whether the loader finds it");
		if (unknown && (!end || unknown < end))
			return true;
	}
	return false;
}

static bool is_regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void caller_case(struct suite_state *suite, struct layout *layout, bool needed_kind, struct outcome *outcome)
{
	struct rng *r = layout->rng;
	enum caller_kind caller_kind = (enum caller_kind)pick(r, CALLER_KIND_COUNT);
	count("case: %s by %s", needed_kind ? "the DT_NEEDED of an NVIDIA library dlopened by path" : "a bare-name dlopen of an NVIDIA name",
	      caller_kind_names[caller_kind]);
	bool nvidia_caller = !needed_kind && caller_kind != CALLER_PROGRAM && chance(r, 35);
	const char *name = needed_kind ? needed_names[pick(r, 2)] : bare_names[pick(r, 4)];

	/* The files, placed first so that the lists can name their folders. */
	struct placed *program = place_file(layout, "model-program", true, false);
	if (program->real != program->path) {
		program->folder = strndup(program->real, (size_t)(strrchr(program->real, '/') - program->real));
		count("path: the program through a symlink");
	}
	struct placed *caller = NULL, *loader = NULL, *parent = NULL;
	if (caller_kind == CALLER_NEEDED_BY_DLOPENED || caller_kind == CALLER_NEEDED_BY_NEEDED)
		loader = place_file(layout, "libmodel-d.so.1", true, false);
	if (caller_kind != CALLER_PROGRAM)
		caller = place_file(layout, nvidia_caller ? NVIDIA_CALLER : "libmodel-caller.so.1", true, false);
	if (needed_kind)
		parent = place_file(layout, NVIDIA_PARENT, false, false);
	size_t first_copy = layout->placed_count;
	unsigned n = copies(r);
	if (n == 0)
		count("copies: a name with none (missing)");
	else if (n > 1)
		count("copies: a name with several");
	for (unsigned c = 0; c < n; c++)
		place_file(layout, name, false, true);
	/* A copy beside the asker, where the runtime looks once the loader has not found it. */
	const struct placed *beside = parent ? parent : nvidia_caller ? caller : NULL;
	if (beside && chance(r, 30)) {
		char *path = test_format("%s/%s", beside->folder, name);
		if (!is_taken(layout, path)) {
			struct placed *p = &layout->placed[layout->placed_count++];
			*p = (struct placed){ .path = path, .folder = beside->folder, .real = path, .name = name };
			count("copies: one beside the asker");
		}
	}
	for (size_t i = first_copy; i < layout->placed_count; i++) {
		const char *none[2] = { NULL, NULL };
		make_object(layout, &layout->placed[i], chance(r, 92) ? name : NULL, none, 10);
		write_placed(layout, &layout->placed[i], false);
	}
	const char *none[2] = { NULL, NULL };
	if (parent) {
		const char *needed[2] = { name, NULL };
		make_object(layout, parent, NVIDIA_PARENT, needed, 20);
		write_placed(layout, parent, false);
	}
	if (caller) {
		make_object(layout, caller, caller->name, none, 20);
		write_placed(layout, caller, false);
	}
	if (loader) {
		const char *needed[2] = { needed_reference(layout, caller, loader->folder, 70), NULL };
		make_object(layout, loader, loader->name, needed, 20);
		write_placed(layout, loader, false);
	}
	const char *program_needed[2] = { NULL, NULL };
	if (caller_kind == CALLER_NEEDED_BY_PROGRAM)
		program_needed[0] = needed_reference(layout, caller, program->folder, 70);
	if (caller_kind == CALLER_NEEDED_BY_NEEDED)
		program_needed[0] = needed_reference(layout, loader, program->folder, 70);
	make_object(layout, program, NULL, program_needed, 0);
	write_placed(layout, program, true);
	count_lists("the program", program);
	if (caller)
		count_lists("the dlopen caller", caller);
	if (loader)
		count_lists("the caller's loader", loader);
	if (parent)
		count_lists("the library dlopened by path", parent);
	const struct placed *asker = parent ? parent : caller ? caller : program;
	if (asker->object.nodeflib)
		count("NODEFLIB: the asker has it");
	unsigned library_path_features = 0;
	char *library_path = chance(r, 50) ? make_list(layout, program->folder, true, &library_path_features) : NULL;
	count_features("feature in a case", layout->features);

	/* The commands. */
	const char *argv[16];
	size_t a = 0;
	argv[a++] = spell_path(layout, program, false);
	char *target = parent ? spell_path(layout, parent, true) : strdup(name);
	if (parent && parent->real != parent->path)
		count("path: the dlopened library is a symlink");
	if (caller_kind == CALLER_DLOPENED || caller_kind == CALLER_NEEDED_BY_DLOPENED) {
		argv[a++] = "open";
		argv[a++] = spell_path(layout, caller_kind == CALLER_DLOPENED ? caller : loader, true);
	}
	const char *command = caller ? "via" : "open";
	if (caller) {
		argv[a++] = "find";
		argv[a++] = caller->name;
		argv[a++] = "via";
		argv[a++] = caller->name;
	} else {
		argv[a++] = "open";
	}
	argv[a++] = target;
	if (parent) {
		argv[a++] = "find";
		argv[a++] = name;
	}
	argv[a] = NULL;
	char *commands = strdup("");
	for (size_t i = 0; i < a; i++)
		commands = test_format("%s %s", commands, argv[i]);

	const char *env[8] = { NULL };
	size_t e = 0;
	if (library_path)
		env[e++] = test_format("LD_LIBRARY_PATH=%s", library_path);
	env[e] = "LD_DEBUG=libs";
	struct test_run plain = run_in(layout->root, argv, env);
	bool debug_build = chance(r, 50);
	count("runtime: %s", debug_build ? "built at -O0" : "as built");
	env[e++] = suite->preload[debug_build];
	env[e++] = test_format("NVINTERPOSE_PATH=%s", suite->markers);
	env[e++] = "NVINTERPOSE_LOG=debug";
	struct test_run with = run_in(layout->root, argv, env);

	char *header = test_format("  run%s%s%s\n  (the runtime %s)\n", library_path ? " with LD_LIBRARY_PATH=" : "", library_path ? library_path : "",
				   commands, debug_build ? "built at -O0" : "as built");
	char *caller_plain = caller ? model_result(plain.output, "find", caller->name) : strdup("(the program)");
	char *caller_with = caller ? model_result(with.output, "find", caller->name) : strdup("(the program)");
	bool void_plain = !caller_plain || strcmp(caller_plain, "none") == 0;
	bool void_with = !caller_with || strcmp(caller_with, "none") == 0;
	if (void_plain || void_with) {
		/* The caller itself could not be loaded (a DT_NEEDED by bare name that no list reaches):
		   nothing to judge but that the runtime changed nothing of it. */
		if (void_plain != void_with || plain.status != with.status)
			disagree(outcome, "%s  the caller loads differently: plain (status %d):\n%s\n  with the runtime (status %d):\n%s", header,
			     plain.status, plain.output, with.status, with.output);
		count("outcome: void (the caller itself was not found)");
		return;
	}
	char *found = loaded_file(model_result(plain.output, parent ? "find" : command, parent ? name : target));
	char *result = loaded_file(model_result(with.output, parent ? "find" : command, parent ? name : target));
	if (plain.status != 0 || with.status != 0) {
		disagree(outcome, "%s  exit status %d plain, %d with the runtime:\n%s\n%s", header, plain.status, with.status, plain.output, with.output);
		return;
	}
	if (found) {
		if (!result || strcmp(found, result) != 0)
			disagree(outcome, "%s  the loader loads %s for %s; with the runtime: %s\n  plain:\n%s\n  with the runtime:\n%s", header, found, name,
			     result ? result : "nothing", plain.output, with.output);
		else
			count("outcome: the loader found it, the runtime kept its file");
		if (!outcome->failed)
			count_answer(needed_kind ? "a dlopened library's DT_NEEDED answered by" : "a bare-name dlopen answered by", layout,
				     plain.output, name, found, asker, program, library_path_features);
		return;
	}
	/* The loader finds none: the runtime's first place that has it, or nothing said to be unknown. */
	char *expected = NULL;
	const char *place = "NVINTERPOSE_PATH (the marker)";
	if (beside) {
		char *folder = origin_of(layout->root, parent ? target : caller_with);
		expected = test_format("%s/%s", folder, name);
		place = "the asker's folder";
		/* For a DT_NEEDED, only a copy whose SONAME is the name: the loader takes a loaded object
		   for a DT_NEEDED name by its SONAME. */
		const struct placed *copy = is_regular_file(expected) ? placed_at(layout, expected) : NULL;
		if (!copy || (parent && !(copy->object.soname && strcmp(copy->object.soname, name) == 0)))
			expected = NULL;
	}
	if (!expected) {
		expected = test_format("%s/%s", suite->markers, name);
		place = "NVINTERPOSE_PATH (the marker)";
	}
	if (result && strcmp(result, expected) == 0)
		count("outcome: the loader found none, the runtime supplied %s", place);
	else if (!result && runtime_said_unknown(with.output, name))
		count("outcome: the loader found none, the runtime did nothing: unknown, and said so");
	else
		disagree(outcome, "%s  the loader finds no %s; the runtime should load %s, or say it cannot know; it loaded %s\n  plain:\n%s\n  with the runtime:\n%s",
		     header, name, expected, result ? result : "nothing", plain.output, with.output);
}

/* ---- the suite ----------------------------------------------------------------------------------- */

static unsigned long setting_number(const char *name, unsigned long fallback)
{
	const char *value = getenv(name);
	char *end = NULL;
	unsigned long n = value && value[0] ? strtoul(value, &end, 0) : fallback;
	ck_assert_msg(!value || !value[0] || (end && *end == '\0'), "%s=%s is not a number", name, value);
	return n;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

static void run_case(struct suite_state *suite, unsigned long long seed, unsigned long index)
{
	struct rng rng = { seed };
	char *root = test_format("%s/case-%lu", suite->base, index);
	test_mkdirs(root);
	struct layout *layout = layout_new(&rng, root, &suite->library, &suite->program);
	struct outcome outcome = { 0 };
	unsigned kind = pick(&rng, 100);
	if (kind < 30)
		tree_case(suite, layout, false, &outcome);
	else if (kind < 40)
		tree_case(suite, layout, true, &outcome);
	else if (kind < 70)
		caller_case(suite, layout, false, &outcome);
	else
		caller_case(suite, layout, true, &outcome);
	count("outcome: %s", outcome.failed ? "DISAGREEMENT" : "agreement");
	if (outcome.failed) {
		if (suite->failures++ < REPORTED_FAILURES)
			printf("\nDISAGREEMENT, case %lu: rebuild it with NVI_MODEL_SEED=%llu NVI_MODEL_CASES=1 (layout kept in %s)\n%s%s\n", index, seed,
			       root, describe_layout(layout), outcome.report);
	} else if (!suite->keep) {
		remove_tree(root);
	}
}

/* The cases, shared out to jobs worker processes (case i to worker i % jobs); each writes its counts
   to a file the parent adds up. */
static void run_cases(struct suite_state *suite, unsigned long long seed, unsigned long cases, unsigned long jobs)
{
	if (jobs < 1)
		jobs = 1;
	if (jobs > 8)
		jobs = 8;
	pid_t workers[8];
	fflush(stdout);
	for (unsigned long w = 0; w < jobs; w++) {
		workers[w] = fork();
		ck_assert_int_ge(workers[w], 0);
		if (workers[w] != 0)
			continue;
		for (unsigned long i = w; i < cases; i += jobs)
			run_case(suite, seed + i, i);
		FILE *f = fopen(test_format("%s/counts-%lu", suite->base, w), "w");
		fprintf(f, "%lu\tfailures\n", suite->failures);
		for (size_t k = 0; k < counter_count; k++)
			fprintf(f, "%lu\t%s\n", counters[k].count, counters[k].key);
		fclose(f);
		fflush(stdout);
		_exit(0);
	}
	for (unsigned long w = 0; w < jobs; w++) {
		int status = 0;
		ck_assert_int_eq(waitpid(workers[w], &status, 0), workers[w]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "worker %lu ended with status %d", w, status);
		char *text = test_read_file(test_format("%s/counts-%lu", suite->base, w));
		ck_assert_ptr_nonnull(text);
		for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *tab = strchr(line, '\t');
			unsigned long n = strtoul(line, NULL, 10);
			if (strcmp(tab + 1, "failures") == 0) {
				suite->failures += n;
				continue;
			}
			add_count(tab + 1, n);
		}
		free(text);
	}
}

START_TEST(test_generated_layouts_agree_with_the_loader)
{
	struct suite_state suite = { 0 };
	unsigned long long seed = setting_number("NVI_MODEL_SEED", DEFAULT_SEED);
	unsigned long cases = setting_number("NVI_MODEL_CASES", setting_number("NVI_MODEL_DEFAULT_CASES", 500));
	suite.keep = setting_number("NVI_MODEL_KEEP", 0) != 0;
	suite.preload[0] = test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME"));
	suite.preload[1] = test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME_O0"));
	const char *tmp = getenv("TMPDIR");
	suite.base = test_format("%s/nvinterpose-model-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(suite.base));
	model_templates_build(suite.base, &suite.library, &suite.program);
	learn_machine(&suite.program);
	suite.markers = test_format("%s/markers", suite.base);
	test_mkdirs(suite.markers);
	const char *nvidia[] = { "libcusparse.so.77", "libnvJitLink.so.77", "libcublas.so.77", "libcurand.so.77" };
	for (size_t i = 0; i < sizeof(nvidia) / sizeof(nvidia[0]); i++) {
		struct model_object marker = { .soname = nvidia[i] };
		model_template_write(&suite.library, &marker, test_format("%s/%s", suite.markers, nvidia[i]));
	}
	printf("loader model: %lu cases from seed %llu; $LIB=%s, $PLATFORM=%s; subfolders the loader tries:", cases, seed, machine.lib,
	       machine.platform);
	for (size_t i = 0; i < machine.searched_count; i++)
		printf(" %s", machine.searched[i]);
	printf("; and some it does not:");
	for (size_t i = 0; i < machine.unsearched_count; i++)
		printf(" %s", machine.unsearched[i]);
	printf("\n");
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	run_cases(&suite, seed, cases, setting_number("NVI_MODEL_JOBS", (unsigned long)sysconf(_SC_NPROCESSORS_ONLN)));
	clock_gettime(CLOCK_MONOTONIC, &end);
	double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
	printf("loader model: %lu cases in %.1f s, %lu disagreements; coverage:\n", cases, seconds, suite.failures);
	print_coverage();
	if (suite.failures == 0 && !suite.keep)
		remove_tree(suite.base);
	ck_assert_msg(suite.failures == 0, "%lu of %lu generated layouts disagree with the loader (the first ones are printed above)",
		      suite.failures, cases);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("loader_model");
	TCase *tc = tcase_create("loader_model");
	/* Long runs (NVI_MODEL_CASES=10000) need more than the default. */
	const char *cases_text = getenv("NVI_MODEL_CASES");
	if (!cases_text || !cases_text[0])
		cases_text = getenv("NVI_MODEL_DEFAULT_CASES");
	unsigned long cases = cases_text ? strtoul(cases_text, NULL, 0) : 500;
	tcase_set_timeout(tc, 120.0 + 0.5 * (double)cases);
	tcase_add_test(tc, test_generated_layouts_agree_with_the_loader);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
