/* Attach at any time: a runtime dlopen'ed into a running process becomes the target of the
 * process's dlopen and dlmopen bindings, as if it had been preloaded.
 *
 *   - GOT slots. In every loaded object but the runtime, the loader and the vDSO, the relocations
 *     against dlopen and dlmopen that fill a pointer-sized slot with the function's address
 *     (JUMP_SLOT, GLOB_DAT, the 64-bit absolute kind) are read. A slot that holds libc's function,
 *     the one the runtime itself calls, is pointed at the hook. A slot that holds another function
 *     (an interposer's: ASan, a profiler's injection library) is left alone and reported. A lazy
 *     slot (still the object's own PLT) binds later through the symbol below.
 *   - libc's dynamic symbols (before glibc 2.34, libdl's). Each entry of dlopen and dlmopen whose
 *     value is the function (the default and the old symbol versions are the same function) gets
 *     st_value = hook - l_addr, so that objects relocated later, lazy binding and dlsym resolve to
 *     the hook with no re-patching.
 *
 * When: in the runtime's constructor, which dlopen runs with the loader's lock held (no load in
 * flight, every listed object relocated), and in nvi_rescan once no load that began before it is
 * still relocating. dl_iterate_phdr lists an object before the loader has relocated it; writing a
 * lazy slot the loader then adjusts, or re-protecting a RELRO page it has yet to write, would
 * crash the host. Slots are read and written inside dl_iterate_phdr's callback, never from a list
 * kept outside it (dlclose unmaps an object after taking it off the list): the loader's list lock,
 * which serializes those callbacks process-wide, is the one lock between patchers. The hot path
 * never patches. Each write is one aligned pointer store: a caller racing it jumps to the old
 * target or to the new one, both valid. The protections are the loader's own (PT_LOAD, then
 * PT_GNU_RELRO's whole pages read-only; the page size from sysconf); a refused mprotect skips that
 * patch, keeps the others and is reported. What was done is kept for nvi_list_patches and said
 * with the events patch and patch-skipped. */
#define _GNU_SOURCE
#include "patch.h"

#include "config.h"
#include "dynamic.h"
#include "front.h"
#include "log.h"
#include "real.h"
#include "start.h"
#include "walk.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#if __ELF_NATIVE_CLASS == 64
#define RELOCATION_SYMBOL ELF64_R_SYM
#define RELOCATION_TYPE ELF64_R_TYPE
#else
#define RELOCATION_SYMBOL ELF32_R_SYM
#define RELOCATION_TYPE ELF32_R_TYPE
#endif

/* The hooks' entry points (passthru.S). */
extern char preload_hook_dlopen[], preload_hook_dlmopen[];

struct target {
	const char *name;
	ElfW(Addr) real; /* libc's function: what the runtime itself calls */
	ElfW(Addr) hook;
};

enum { TARGET_DLOPEN, TARGET_DLMOPEN, TARGET_COUNT };
static struct target targets[TARGET_COUNT];

static size_t page_size;
static ElfW(Addr) vdso; /* its ELF header (AT_SYSINFO_EHDR), 0 without one */

/* ---- What was done: records appended inside the walks, read without a lock ----------------- */

#define PATCH_MAX_RECORDS 512
#define PATCH_TEXT_BYTES (128 * 1024)

#define RECORD_BUCKETS 1024

struct record {
	struct nvi_patch patch;
	_Atomic int count;
	unsigned long object_hash;
	int next; /* the next record whose object hash shares its bucket, or -1 */
};

static struct record records[PATCH_MAX_RECORDS];
static int first_in_bucket[RECORD_BUCKETS]; /* a record index + 1; 0 when none */
static _Atomic size_t record_count;
static _Atomic size_t reported_count;
static char text[PATCH_TEXT_BYTES];
static size_t text_used;

static const char *keep_text(const char *s)
{
	size_t length = strlen(s) + 1;
	if (length > sizeof(text) - text_used)
		return "(name not kept)";
	const char *kept = memcpy(text + text_used, s, length);
	text_used += length;
	return kept;
}

static bool same_text(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static unsigned long hash_of(const char *s)
{
	unsigned long hash = 5381;
	for (; *s; s++)
		hash = hash * 33 + (unsigned char)*s;
	return hash;
}

/* Adds count to the record of (object, symbol, place, state, target, error), made when new. Runs
   inside a walk (the loader's list lock serializes the writers). */
static void record(const char *object, const char *symbol, const char *place, const char *state, const char *target, int count,
		   int error)
{
	size_t n = atomic_load_explicit(&record_count, memory_order_relaxed);
	unsigned long object_hash = hash_of(object);
	int *bucket = &first_in_bucket[object_hash % RECORD_BUCKETS];
	for (int i = *bucket - 1; i >= 0; i = records[i].next) {
		const struct nvi_patch *patch = &records[i].patch;
		if (records[i].object_hash == object_hash && patch->symbol == symbol && patch->place == place && patch->state == state &&
		    patch->error == error && same_text(patch->object, object) && same_text(patch->target, target)) {
			atomic_fetch_add(&records[i].count, count);
			return;
		}
	}
	if (n == PATCH_MAX_RECORDS)
		return;
	records[n].next = *bucket - 1;
	*bucket = (int)n + 1;
	records[n].patch = (struct nvi_patch){ .object = keep_text(object), .symbol = symbol, .place = place, .state = state,
					       .target = target ? keep_text(target) : NULL, .error = error };
	atomic_store(&records[n].count, count);
	records[n].object_hash = object_hash;
	atomic_store_explicit(&record_count, n + 1, memory_order_release);
}

static const char *const place_got = "got", *const place_dynsym = "dynsym";
static const char *const state_patched = "patched", *const state_foreign = "foreign", *const state_refused = "refused";

static const char *slots_named(const struct nvi_patch *patch, int count)
{
	if (patch->place == place_got)
		return count == 1 ? "GOT slot" : "GOT slots";
	return count == 1 ? "dynamic-symbol entry" : "dynamic-symbol entries";
}

/* Says what the records made since the last report hold, outside the walks; why: what patched. */
static void report(const char *why)
{
	size_t from = atomic_load(&reported_count), to = atomic_load_explicit(&record_count, memory_order_acquire);
	while (from < to && !atomic_compare_exchange_weak(&reported_count, &from, to))
		;
	const char *policy = config_policy_name(config_get()->policy);
	for (size_t i = from; i < to; i++) {
		const struct nvi_patch *patch = &records[i].patch;
		enum log_level level = patch->state == state_patched ? LOG_INFO : LOG_WARN;
		if (!log_enabled(level) && !log_events_enabled())
			continue;
		const char *object = patch->object[0] ? patch->object : "(main program)";
		int count = atomic_load(&records[i].count);
		char reason[PATH_MAX + 128];
		if (patch->state == state_patched)
			snprintf(reason, sizeof(reason), "%s: %d %s patched%s", patch->symbol, count, slots_named(patch, count),
				 patch->place == place_dynsym ? " (later bindings and dlsym find the hook)" : "");
		else if (patch->state == state_foreign)
			snprintf(reason, sizeof(reason), "%s: %d %s left alone: %s another function, %s%s", patch->symbol, count,
				 slots_named(patch, count), count == 1 ? "it holds" : "they hold", patch->target ? "in " : "outside every object",
				 !patch->target ? "" : patch->target[0] ? patch->target : "the main program");
		else
			snprintf(reason, sizeof(reason), "%s: %d %s not patched: mprotect refused (%s)", patch->symbol, count,
				 slots_named(patch, count), strerror(patch->error));
		log_message(level, "%s: %s: %s", why, object, reason);
		log_event(&(struct log_event){ .event = patch->state == state_patched ? "patch" : "patch-skipped", .name = patch->symbol,
					       .path = object, .policy = policy, .reason = reason });
	}
}

int front_list_patches(struct nvi_patch *patches, size_t capacity)
{
	size_t n = atomic_load_explicit(&record_count, memory_order_acquire);
	for (size_t i = 0; patches && i < n && i < capacity; i++) {
		patches[i] = records[i].patch;
		patches[i].count = atomic_load(&records[i].count);
	}
	return (int)n;
}

/* ---- The loaded objects ------------------------------------------------------------------- */

static bool object_holds(const struct dl_phdr_info *info, ElfW(Addr) address)
{
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *load = &info->dlpi_phdr[i];
		if (load->p_type == PT_LOAD && address - (info->dlpi_addr + load->p_vaddr) < load->p_memsz)
			return true;
	}
	return false;
}

/* The runtime itself, the loader (which holds _r_debug) and the vDSO are never patched. */
static bool is_left_out(const struct dl_phdr_info *info)
{
	return object_holds(info, (ElfW(Addr))patch_attach) || object_holds(info, (ElfW(Addr))&_r_debug) ||
	       (vdso && object_holds(info, vdso));
}

static int protection_of(ElfW(Word) flags)
{
	return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) | (flags & PF_X ? PROT_EXEC : 0);
}

/* The protection the loader gave page: that of the last load segment whose pages hold it (the
   loader maps each segment over the page it shares with the one before), read-only within the
   whole pages of PT_GNU_RELRO (the loader rounds both of its ends down). */
static int loader_protection(const struct dl_phdr_info *info, ElfW(Addr) page)
{
	int protection = 0;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
		ElfW(Addr) start = info->dlpi_addr + segment->p_vaddr, end = start + segment->p_memsz;
		if (segment->p_type == PT_LOAD && page >= (start & ~(page_size - 1)) && page < ((end + page_size - 1) & ~(page_size - 1)))
			protection = protection_of(segment->p_flags);
	}
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
		ElfW(Addr) start = info->dlpi_addr + segment->p_vaddr, end = start + segment->p_memsz;
		if (segment->p_type == PT_GNU_RELRO && page >= (start & ~(page_size - 1)) && page < (end & ~(page_size - 1)))
			protection = PROT_READ;
	}
	return protection;
}

/* Stores value at the aligned address slot of the object, opening its page for the store when
   the loader left it read-only. 0, or the errno of a refused mprotect (nothing written then).
   Taking write permission away again cannot be refused where granting it was allowed. */
static int store_address(const struct dl_phdr_info *info, ElfW(Addr) slot, ElfW(Addr) value)
{
	ElfW(Addr) page = slot & ~(page_size - 1);
	int protection = loader_protection(info, page);
	bool writable = (protection & PROT_WRITE) != 0;
	if (!writable && mprotect((void *)page, page_size, protection | PROT_WRITE) != 0)
		return errno;
	__atomic_store_n((ElfW(Addr) *)slot, value, __ATOMIC_RELEASE);
	if (!writable)
		mprotect((void *)page, page_size, protection);
	return 0;
}

/* ---- The walks ----------------------------------------------------------------------------- */

struct pass {
	bool first;
	bool check_adds; /* nvi_rescan: stop when the loader added an object since adds was read */
	unsigned long long adds;
	bool stale;      /* it stopped so */
	int slots, objects, entries, left_alone, refused;
};

/* First callback of a walk: false (stop the walk) when an object was added since pass->adds. */
static bool still_settled(struct pass *pass, const struct dl_phdr_info *info)
{
	if (!pass->first)
		return true;
	pass->first = false;
	if (pass->check_adds && info->dlpi_adds != pass->adds)
		pass->stale = true;
	return !pass->stale;
}

struct owner {
	ElfW(Addr) address;
	bool found;
	char name[PATH_MAX];
};

static int find_owner(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct owner *owner = arg;
	(void)size;
	if (!object_holds(info, owner->address))
		return 0;
	snprintf(owner->name, sizeof(owner->name), "%s", info->dlpi_name);
	owner->found = true;
	return 1;
}

static bool is_one_of(size_t index, const size_t *indexes, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (indexes[i] == index)
			return true;
	return false;
}

/* The slots of one object's relocations against target. The relative relocations that lead
   DT_RELA (DT_RELACOUNT of them) name no symbol and are skipped, as the loader skips them. */
static void patch_slots(const struct dl_phdr_info *info, const struct dynamic_tables *tables, const struct target *target,
			struct pass *pass)
{
	size_t indexes[DYNAMIC_NAMED_SYMBOLS_MAX];
	size_t named = dynamic_symbols_named(tables, target->name, indexes, DYNAMIC_NAMED_SYMBOLS_MAX);
	if (!named)
		return;
	int patched = 0, foreign = 0, refused = 0, error = 0;
	ElfW(Addr) foreign_value = 0;
	const struct {
		const ElfW(Rela) *table;
		size_t from, to;
	} ranges[] = { { tables->relocations, tables->relative_count, tables->relocation_count },
		       { tables->plt_relocations, 0, tables->plt_relocation_count } };
	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++)
		for (size_t i = ranges[r].from; i < ranges[r].to; i++) {
			const ElfW(Rela) *relocation = &ranges[r].table[i];
			ElfW(Addr) slot = info->dlpi_addr + relocation->r_offset;
			if (!is_one_of(RELOCATION_SYMBOL(relocation->r_info), indexes, named) || relocation->r_addend != 0 ||
			    !dynamic_relocation_fills_address_slot(tables->machine, RELOCATION_TYPE(relocation->r_info)) ||
			    slot % sizeof(ElfW(Addr)) != 0 || !dynamic_inside_load_segment(tables, slot, sizeof(ElfW(Addr))))
				continue;
			ElfW(Addr) value = __atomic_load_n((ElfW(Addr) *)slot, __ATOMIC_ACQUIRE);
			if (value == target->real) {
				int failed = store_address(info, slot, target->hook);
				if (failed)
					refused++, error = failed;
				else
					patched++;
			} else if (value != target->hook && value != 0 && !object_holds(info, value)) {
				foreign++;
				foreign_value = value;
			}
		}
	if (patched) {
		record(info->dlpi_name, target->name, place_got, state_patched, NULL, patched, 0);
		pass->slots += patched;
		pass->objects++;
	}
	if (foreign) {
		/* Whose function it is: the walk's lock is the loader's recursive one. */
		struct owner owner = { .address = foreign_value };
		dl_iterate_phdr(find_owner, &owner);
		record(info->dlpi_name, target->name, place_got, state_foreign, owner.found ? owner.name : NULL, foreign, 0);
		pass->left_alone += foreign;
	}
	if (refused) {
		record(info->dlpi_name, target->name, place_got, state_refused, NULL, refused, error);
		pass->refused += refused;
	}
}

static int patch_object_slots(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct pass *pass = arg;
	struct dynamic_tables tables;
	(void)size;
	if (!still_settled(pass, info))
		return 1;
	if (is_left_out(info) || !dynamic_read_tables(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &tables))
		return 0;
	for (size_t t = 0; t < TARGET_COUNT; t++)
		patch_slots(info, &tables, &targets[t], pass);
	return 0;
}

/* The dynamic-symbol entries of the object that defines target's function (libc). */
static int patch_definitions(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct pass *pass = arg;
	(void)size;
	if (!still_settled(pass, info))
		return 1;
	for (size_t t = 0; t < TARGET_COUNT; t++) {
		const struct target *target = &targets[t];
		struct dynamic_tables tables;
		if (!object_holds(info, target->real) || !dynamic_read_tables(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &tables))
			continue;
		size_t indexes[DYNAMIC_NAMED_SYMBOLS_MAX];
		size_t named = dynamic_hashed_symbols_named(&tables, target->name, indexes, DYNAMIC_NAMED_SYMBOLS_MAX);
		int patched = 0, refused = 0, error = 0;
		for (size_t i = 0; i < named; i++) {
			const ElfW(Sym) *symbol = &tables.symbols[indexes[i]];
			ElfW(Addr) field = (ElfW(Addr))&symbol->st_value;
			if (symbol->st_shndx == SHN_UNDEF || info->dlpi_addr + symbol->st_value != target->real ||
			    field % sizeof(ElfW(Addr)) != 0)
				continue;
			/* The loader adds l_addr to st_value, modulo 2^N like this subtraction. */
			int failed = store_address(info, field, target->hook - info->dlpi_addr);
			if (failed)
				refused++, error = failed;
			else
				patched++;
		}
		if (patched) {
			record(info->dlpi_name, target->name, place_dynsym, state_patched, NULL, patched, 0);
			pass->entries += patched;
		}
		if (refused) {
			record(info->dlpi_name, target->name, place_dynsym, state_refused, NULL, refused, error);
			pass->refused += refused;
		}
	}
	return 0;
}

static bool prepare(void)
{
	const struct config *config = config_get();
	if (config->disabled || !config->patch)
		return false;
	real_resolve();
	if (!real_dlopen || !real_dlmopen)
		return false;
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	vdso = getauxval(AT_SYSINFO_EHDR);
	targets[TARGET_DLOPEN] = (struct target){ "dlopen", (ElfW(Addr))real_dlopen, (ElfW(Addr))preload_hook_dlopen };
	targets[TARGET_DLMOPEN] = (struct target){ "dlmopen", (ElfW(Addr))real_dlmopen, (ElfW(Addr))preload_hook_dlmopen };
	return true;
}

/* Libc's symbols first: a slot a racing lazy binding fills after the slot walk passed its object
   then gets the hook. */
static void patch_all(struct pass *pass)
{
	walk_loaded_objects(patch_definitions, pass);
	if (pass->stale)
		return;
	pass->first = true;
	walk_loaded_objects(patch_object_slots, pass);
}

void patch_attach(void)
{
	if (!prepare())
		return;
	int saved_errno = errno;
	struct pass pass = { .first = true };
	patch_all(&pass);
	log_message(LOG_INFO, "attach: %d GOT slots in %d objects and %d dynamic-symbol entries now lead to the hooks; %d slots left alone, %d patches refused",
		    pass.slots, pass.objects, pass.entries, pass.left_alone, pass.refused);
	report("attach");
	errno = saved_errno;
}

static int read_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

void patch_rescan(void)
{
	if (!prepare())
		return;
	int saved_errno = errno;
	/* A dlopen holds the loader's lock for the whole load, relocation included: one more (of the
	   program, which loads nothing) returns only once every load begun before it is done. When the
	   loader's count of added objects is still the one read before that dlopen, every object the
	   walk lists was added, and so relocated, by a load that had finished. */
	for (int attempt = 0; attempt < 3; attempt++) {
		struct pass pass = { .first = true, .check_adds = true };
		walk_loaded_objects(read_adds, &pass.adds);
		void *program = real_dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
		if (program)
			real_dlclose(program);
		patch_all(&pass);
		if (!pass.stale) {
			report("attach");
			errno = saved_errno;
			return;
		}
	}
	log_message(LOG_WARN, "nvi_rescan: libraries kept loading meanwhile; the bindings of those loaded since the attach are left for the next call");
	errno = saved_errno;
}

bool patch_for_deep_binding(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (!prepare())
		return false;
	if (atomic_flag_test_and_set(&done))
		return true;
	/* libc's entries are no load's to adjust: written at any time, one aligned store each. An
	   entry that already leads to the hooks (attached late) is left as it is. */
	struct pass pass = { .first = true };
	walk_loaded_objects(patch_definitions, &pass);
	report("deep binding");
	return true;
}

/* ---- One runtime per process ---------------------------------------------------------------- */

static struct front_api primary;
static bool has_primary;

const struct front_api *front_primary(void) { return has_primary ? &primary : NULL; }

struct earlier_runtime {
	bool found;
	char path[PATH_MAX];
	struct front_api api;
};

/* The objects loaded before this copy, in the loader's order: the first that defines the API is
   the process's runtime. */
static int find_earlier_runtime(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct earlier_runtime *earlier = arg;
	struct dynamic_tables tables;
	(void)size;
	if (object_holds(info, (ElfW(Addr))patch_attach))
		return 1; /* this copy: nothing before it */
	if (!info->dlpi_name[0] || !dynamic_may_define(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, "nvi_version") ||
	    !dynamic_read_tables(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &tables) ||
	    !(earlier->api.version = (const char *(*)(void))dynamic_defined_function(&tables, "nvi_version")))
		return 0;
	earlier->api.family_origin = (int (*)(const char *, char *, size_t))dynamic_defined_function(&tables, "nvi_family_origin");
	earlier->api.register_folder = (int (*)(const char *, const char *))dynamic_defined_function(&tables, "nvi_register_folder");
	earlier->api.list_origins =
		(int (*)(const char *, struct nvi_origin *, size_t))dynamic_defined_function(&tables, "nvi_list_origins");
	earlier->api.rescan = (int (*)(void))dynamic_defined_function(&tables, "nvi_rescan");
	earlier->api.list_patches =
		(int (*)(struct nvi_patch *, size_t))dynamic_defined_function(&tables, "nvi_list_patches");
	earlier->api.list_families = (int (*)(const char **, size_t))dynamic_defined_function(&tables, "nvi_list_families");
	earlier->api.report =
		(int (*)(struct nvi_report_totals *, struct nvi_report_entry *, size_t))dynamic_defined_function(&tables, "nvi_report");
	snprintf(earlier->path, sizeof(earlier->path), "%s", info->dlpi_name);
	earlier->found = true;
	return 1;
}

bool patch_find_earlier_runtime(void)
{
	struct earlier_runtime earlier = { .found = false };
	walk_loaded_objects(find_earlier_runtime, &earlier);
	real_resolve();
	/* Held, so that its functions stay where they were found. Where the loader has no dlopen yet
	   (before glibc 2.34, no libdl.so.2 loaded), nothing was loaded by dlopen: the earlier copy
	   came with the program and stays. */
	if (!earlier.found || (real_dlopen && !real_dlopen(earlier.path, RTLD_LAZY | RTLD_NOLOAD)))
		return false;
	primary = earlier.api;
	has_primary = true;
	start_read_settings();
	log_message(LOG_INFO, "%s (version %s) is the runtime of this process; this copy forwards its API there", earlier.path,
		    primary.version());
	return true;
}
