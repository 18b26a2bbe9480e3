/* The exit report: counts, and one line for each thing counted, kept while the report is on in a
   bounded store (what does not fit is counted, and the report says how many lines it left out).
   Each line is kept with the fields it was made from, which nvi_report hands out as data. */
#include "report.h"

#include "config.h"
#include "libnames.h"
#include "platform.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLATFORM_PATH_TEXT 4400

enum kind { KIND_ORIGIN, KIND_REDIRECT, KIND_MISS, KIND_MIXED, KIND_COUNT };

#define REPORT_TEXT 32768
#define REPORT_LINES 256

static atomic_flag lock = ATOMIC_FLAG_INIT;
static long long counts[KIND_COUNT];
static char text[REPORT_TEXT];
static size_t text_used, line_count, lines_left_out;
static size_t line_start[REPORT_LINES];
static unsigned char line_kind[REPORT_LINES];
static int line_pair[REPORT_LINES]; /* a miss line's pair, or -1 */
static bool line_warning[REPORT_LINES];

/* The fields kept after each line's text, in this order, each NUL-terminated; line_null says
   which were NULL (kept as ""). */
enum field { FIELD_NAME, FIELD_FAMILY, FIELD_EVENT, FIELD_ASKER, FIELD_PATH, FIELD_REASON, FIELD_OWN, FIELD_PLACES, FIELD_COUNT };
static unsigned char line_null[REPORT_LINES];
static size_t line_places[REPORT_LINES];

/* The (name, caller's folder) pairs whose miss was reported, by a 64-bit hash of both (two pairs
   that share one are a chance far below anything else that can go wrong), with how many times
   each missed. */
static unsigned long long pair_hash[REPORT_MISS_PAIRS];
static long long pair_misses[REPORT_MISS_PAIRS];
static size_t pair_count;
static bool pairs_full_said;

/* The sonames whose mixed origin was looked for. A name is compared only once it is counted, so
   nothing half-written is read. */
#define MIXED_NAMES 64
#define MIXED_NAME_MAX 255 /* a file name's longest on Linux (NAME_MAX), where mixed origins are looked for */
static atomic_flag mixed_lock = ATOMIC_FLAG_INIT;
static char mixed_names[MIXED_NAMES][MIXED_NAME_MAX + 1];
static size_t mixed_count;

/* A fork while another thread holds a lock: the child takes each anew. The child keeps the
   sonames looked at, since its objects are its parent's. */
static void reset_in_child(void)
{
	atomic_flag_clear(&lock);
	atomic_flag_clear(&mixed_lock);
	memset(counts, 0, sizeof(counts));
	text_used = line_count = lines_left_out = 0;
	pair_count = 0;
	pairs_full_said = false;
}

static void take_lock(void)
{
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
}

static void drop_lock(void) { atomic_flag_clear_explicit(&lock, memory_order_release); }

static bool try_lock(void) { return !atomic_flag_test_and_set_explicit(&lock, memory_order_acquire); }

/* FNV-1a over the name, a NUL, and the caller's folder (all of the caller before its last '/'). */
static unsigned long long hash_of_pair(const char *name, const char *caller)
{
	unsigned long long hash = 14695981039346656037ULL;
	const char *slash = caller ? strrchr(caller, '/') : NULL;
	size_t folder = slash ? (size_t)(slash - caller) : caller ? strlen(caller) : 0;
	for (const char *s = name; *s; s++)
		hash = (hash ^ (unsigned char)*s) * 1099511628211ULL;
	hash = (hash ^ 0) * 1099511628211ULL;
	for (size_t i = 0; i < folder; i++)
		hash = (hash ^ (unsigned char)caller[i]) * 1099511628211ULL;
	return hash;
}

/* The pair's index, or -1 when it was not reported yet (or the table is full). Under the lock. */
static int find_pair(unsigned long long hash)
{
	for (size_t i = 0; i < pair_count; i++)
		if (pair_hash[i] == hash)
			return (int)i;
	return -1;
}

void report_init(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set(&done))
		platform_after_fork_in_child(reset_in_child);
}

/* A report was asked for: lines are kept, and misses list their places. */
static bool report_on(void) { return config_get()->report_pid > 0 || config_get()->report_kept; }

static const char *front_name;

void report_name_front(const char *front) { front_name = front; }

/* What a report line holds besides its text. */
struct line_fields {
	const char *field[FIELD_COUNT];
	size_t places; /* a miss: how many places were looked in */
	bool warning;  /* said at warning level */
};

/* Counts one thing and keeps its line and fields, when the report is on and they fit. pair: the
   miss pair a line is for, or -1. */
static void count(enum kind kind, int pair, const struct line_fields *fields, const char *line)
{
	size_t length[FIELD_COUNT + 1], need = 0;
	const char *part[FIELD_COUNT + 1] = { line };
	for (int i = 0; i < FIELD_COUNT; i++)
		part[i + 1] = fields->field[i] ? fields->field[i] : "";
	for (int i = 0; i <= FIELD_COUNT; i++)
		need += (length[i] = strlen(part[i])) + 1;
	take_lock();
	counts[kind]++;
	if (report_on()) {
		if (line_count < REPORT_LINES && text_used + need <= sizeof(text)) {
			line_kind[line_count] = (unsigned char)kind;
			line_pair[line_count] = pair;
			line_warning[line_count] = fields->warning;
			line_places[line_count] = fields->places;
			line_null[line_count] = 0;
			for (int i = 0; i < FIELD_COUNT; i++)
				if (!fields->field[i])
					line_null[line_count] |= (unsigned char)(1u << i);
			line_start[line_count++] = text_used;
			for (int i = 0; i <= FIELD_COUNT; i++) {
				memcpy(text + text_used, part[i], length[i] + 1);
				text_used += length[i] + 1;
			}
		} else {
			lines_left_out++;
		}
	}
	drop_lock();
}

enum report_miss_weight report_miss_weight(enum policy_request request, const char *caller, int family, bool driver)
{
	if (driver)
		return REPORT_MISS_QUIET;
	if (request == POLICY_NEEDED)
		return REPORT_MISS_REQUIRED; /* the loader fails the load without it */
	int asker = caller ? libnames_match(libnames_basename(caller), NULL) : -1;
	switch (libnames_need(asker, family)) {
	case LIBNAME_NEED_REQUIRED: return REPORT_MISS_REQUIRED;
	case LIBNAME_NEED_OPTIONAL: return REPORT_MISS_QUIET;
	case LIBNAME_NEED_NONE: break;
	}
	return REPORT_MISS_ASKED;
}

static enum log_level miss_level(enum report_miss_weight weight)
{
	return weight == REPORT_MISS_REQUIRED ? LOG_ERROR : weight == REPORT_MISS_ASKED ? LOG_WARN : LOG_INFO;
}

bool report_misses_wanted(enum report_miss_weight weight)
{
	return log_enabled(miss_level(weight)) || log_events_enabled() || report_on();
}

bool report_askers_wanted(void)
{
	return log_enabled(LOG_INFO) || log_events_enabled() || report_on() || policy_watches_mixed_origins(config_get()->policy);
}

#define MISS_COUNTED (-1) /* reported before, or past the table: counted, nothing more */

/* A miss of the pair. It is counted when it was reported before or the table is full (which is
   said once). Otherwise it is added, and its index returned. */
static int note_miss(const char *name, const char *caller)
{
	unsigned long long hash = hash_of_pair(name, caller);
	bool full_now = false;
	take_lock();
	int pair = find_pair(hash);
	if (pair >= 0 || pair_count == REPORT_MISS_PAIRS) {
		if (pair >= 0)
			pair_misses[pair]++;
		counts[KIND_MISS]++;
		full_now = pair < 0 && !pairs_full_said;
		pairs_full_said = pairs_full_said || full_now;
		pair = MISS_COUNTED;
	} else {
		pair = (int)pair_count++;
		pair_hash[pair] = hash;
		pair_misses[pair] = 1;
	}
	drop_lock();
	if (full_now)
		log_message(LOG_WARN, "more than %d different libraries were not found: the others are counted, not reported", REPORT_MISS_PAIRS);
	return pair;
}

bool report_miss_known(const char *name, const char *caller)
{
	unsigned long long hash = hash_of_pair(name, caller);
	take_lock();
	bool known = find_pair(hash) >= 0 || pair_count == REPORT_MISS_PAIRS;
	drop_lock();
	return known;
}

bool report_mixed_origin_first(const char *name)
{
	bool first = true;
	while (atomic_flag_test_and_set_explicit(&mixed_lock, memory_order_acquire))
		;
	for (size_t i = 0; i < mixed_count && first; i++)
		first = strcmp(mixed_names[i], name) != 0;
	if (first && mixed_count < MIXED_NAMES && strlen(name) <= MIXED_NAME_MAX)
		strcpy(mixed_names[mixed_count++], name);
	atomic_flag_clear_explicit(&mixed_lock, memory_order_release);
	return first;
}

static const char *family_name(int family) { return family >= 0 ? libnames[family].family : NULL; }

static const char *policy_name(void) { return config_policy_name(config_get()->policy); }

/* One outcome in the words of its three records: the log line, the event and the report's line. */
struct record {
	enum log_level level;
	bool by_default; /* a warning said at every level (log_warning_by_default) */
	struct log_event event;
	enum kind kind;
	int pair; /* a miss's pair, or -1 */
	char line[1024], counted[1024];
	char reason[PLATFORM_PATH_TEXT];
	struct line_fields fields;
	char places[700]; /* a miss: its places, one a line */
};

/* A line of a record, cut where it does not fit as the log cuts its lines. */
static void write_text(char *out, size_t size, const char *format, ...) __attribute__((format(LOG_FORMAT, 3, 4)));
static void write_text(char *out, size_t size, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(out, size, format, args);
	va_end(args);
}

static const char *caller_or_unknown(const struct outcome *outcome)
{
	return outcome->caller ? outcome->caller : "an unknown object";
}

/* The places, as many as size holds, separated by separator; the event has them all. */
static void list_places(const struct outcome *miss, const char *separator, char *places, size_t size)
{
	size_t used = 0;
	places[0] = '\0';
	for (size_t i = 0; i < miss->looked_count && used < size; i++) {
		const struct log_looked *place = &miss->looked[i];
		int n = snprintf(places + used, size - used, "%s%s (%s)", i ? separator : "", place->folder ? place->folder : "ld.so.cache",
				 place->step);
		used = n < 0 ? size : used + (size_t)n;
	}
	if (used >= size)
		strcpy(places + size - 5, " ...");
}

static void record_miss(const struct outcome *miss, struct record *record)
{
	char places[700];
	list_places(miss, ", ", places, sizeof(places));
	list_places(miss, "\n", record->places, sizeof(record->places));
	write_text(record->reason, sizeof(record->reason), miss->other ? "%s; another version is there: %s" : "%s",
		 miss->answer->miss_reason, miss->other);
	const char *caller = caller_or_unknown(miss);
	enum report_miss_weight weight = miss->other ? REPORT_MISS_QUIET : miss->weight;
	record->level = miss_level(weight) == LOG_INFO ? LOG_INFO : LOG_WARN;
	record->by_default = weight == REPORT_MISS_REQUIRED;
	write_text(record->line, sizeof(record->line), "%s wanted by %s (%s): not found; looked in %s", miss->name, caller,
		 record->reason, places[0] ? places : "no folder");
	record->event = (struct log_event){ .event = "miss", .reason = record->reason, .looked = miss->looked,
					    .looked_count = miss->looked_count };
	record->kind = KIND_MISS;
	write_text(record->counted, sizeof(record->counted), "miss %s wanted by %s (%s): looked in %s", miss->name, caller,
		 record->reason, places[0] ? places : "no folder");
	record->fields = (struct line_fields){ .field[FIELD_REASON] = record->reason, .field[FIELD_PLACES] = record->places,
					       .places = miss->looked_count, .warning = record->level == LOG_WARN };
}

/* The event of a load: what was asked for, and for a bare name, which rule chose the copy. */
static const char *loaded_event(const struct outcome *loaded)
{
	switch (loaded->request) {
	case POLICY_NEEDED: return "needed";
	case POLICY_AUDIT: return "audit-answer";
	case POLICY_ATTACH: return "attach-load";
	case POLICY_DLOPEN: break;
	}
	return loaded->answer->action == POLICY_LOAD_OWN ? "coherent" : "redirect";
}

static void record_loaded(const struct outcome *loaded, struct record *record)
{
	const char *event = loaded_event(loaded), *reason = loaded->answer->text;
	record->level = LOG_INFO;
	write_text(record->line, sizeof(record->line), "%s for %s: %s %s (%s)", loaded->name,
		 loaded->caller_words ? loaded->caller_words : caller_or_unknown(loaded),
		 loaded->request == POLICY_AUDIT ? "the loader is given" : "loaded", loaded->path, reason);
	record->event = (struct log_event){ .event = event, .path = loaded->path, .reason = reason };
	record->kind = KIND_REDIRECT;
	write_text(record->counted, sizeof(record->counted), "%s %s for %s: %s", event, loaded->name, caller_or_unknown(loaded),
		 loaded->path);
	record->fields = (struct line_fields){ .field[FIELD_PATH] = loaded->path, .field[FIELD_REASON] = reason };
}

static void record_mixed_origin(const struct outcome *mixed, struct record *record)
{
	char own[PLATFORM_PATH_TEXT + 96] = "";
	if (mixed->own && mixed->already_loaded)
		write_text(own, sizeof(own), "; %s would take %s", mixed->caller, mixed->own);
	else if (mixed->own)
		write_text(own, sizeof(own), "; its own installation holds %s%s", mixed->own,
			   config_get()->policy == POLICY_COHERENT ? "" : " (the coherent policy would take it)");
	record->level = LOG_WARN;
	record->by_default = true;
	if (mixed->already_loaded)
		write_text(record->line, sizeof(record->line), "mixed origins: %s is already loaded from %s%s%s", mixed->name, mixed->path,
			   mixed->own ? "" : ", another installation than that of ", mixed->own ? own : mixed->caller);
	else
		write_text(record->line, sizeof(record->line), "mixed origins: %s gets %s from another installation: %s%s", mixed->caller,
			   mixed->name, mixed->path, own);
	record->event = (struct log_event){ .event = "mixed-origin", .path = mixed->path, .own = mixed->own,
					    .reason = mixed->already_loaded ? "first loaded wins: already loaded from another folder"
									    : "from another installation than the caller's" };
	record->kind = KIND_MIXED;
	write_text(record->counted, sizeof(record->counted), "mixed origin %s for %s: from %s%s%s", mixed->name, mixed->caller,
		 mixed->path, mixed->own ? "; its own installation holds " : "", mixed->own ? mixed->own : "");
	record->fields = (struct line_fields){ .field[FIELD_PATH] = mixed->path, .field[FIELD_REASON] = record->event.reason,
					       .field[FIELD_OWN] = mixed->own, .warning = true };
}

void report_outcome(const struct outcome *outcome)
{
	int pair = outcome->kind == OUTCOME_MISSED ? note_miss(outcome->name, outcome->caller) : -1;
	struct record *record = calloc(1, sizeof(*record));
	if (!record || (outcome->kind == OUTCOME_MISSED && pair < 0)) {
		free(record);
		return;
	}
	switch (outcome->kind) {
	case OUTCOME_LOADED: record_loaded(outcome, record); break;
	case OUTCOME_MIXED_ORIGIN: record_mixed_origin(outcome, record); break;
	case OUTCOME_MISSED: record_miss(outcome, record); break;
	}
	record->event.name = outcome->name;
	record->event.caller = outcome->caller;
	record->event.family = family_name(outcome->family);
	record->event.policy = policy_name();
	record->fields.field[FIELD_NAME] = outcome->name;
	record->fields.field[FIELD_FAMILY] = record->event.family;
	record->fields.field[FIELD_EVENT] = record->event.event;
	record->fields.field[FIELD_ASKER] = outcome->caller;
	count(record->kind, pair, &record->fields, record->counted);
	if (record->by_default)
		log_warning_by_default("%s", record->line);
	else
		log_message(record->level, "%s", record->line);
	log_event(&record->event);
	free(record);
}

void report_origin(const char *family, const char *folder, const char *name)
{
	char line[1024];
	write_text(line, sizeof(line), "origin %s: %s (%s)", family, folder, name);
	count(KIND_ORIGIN, -1,
	      &(struct line_fields){ .field[FIELD_NAME] = name, .field[FIELD_FAMILY] = family, .field[FIELD_EVENT] = "register",
				     .field[FIELD_PATH] = folder },
	      line);
}

/* Where the report's lines go: stderr, or a block for the run's report file. */
struct report_sink {
	char *block; /* NULL: stderr */
	size_t used, size;
};

static void emit(struct report_sink *sink, const char *format, ...) __attribute__((format(LOG_FORMAT, 2, 3)));
static void emit(struct report_sink *sink, const char *format, ...)
{
	char line[1200];
	va_list args;
	va_start(args, format);
	vsnprintf(line, sizeof(line), format, args);
	va_end(args);
	if (!sink->block) {
		log_report("%s", line);
		return;
	}
	/* Each line as stderr would show it (log_text_escape), and a line end. */
	if (sink->used + 1 < sink->size) {
		sink->used += log_text_escape(sink->block + sink->used, sink->size - sink->used - 1, line);
		sink->block[sink->used++] = '\n';
	}
}

/* This copy's report: the figures, then one line for each thing counted. Under the lock. */
static void write_report(struct report_sink *sink, const struct log_summary *summary, const struct config *config)
{
	emit(sink, "process %ld%s%s%s, policy %s: %lld origins registered, %lld redirects, %lld misses, %lld mixed origins",
	     platform_process_id(), front_name ? " (" : "", front_name ? front_name : "", front_name ? ")" : "",
	     config_policy_name(config->policy), summary->origins, summary->redirects, summary->misses, summary->mixed_origins);
	for (enum kind kind = 0; kind < KIND_COUNT; kind++)
		for (size_t i = 0; i < line_count; i++)
			if (line_kind[i] == kind && line_pair[i] >= 0 && pair_misses[line_pair[i]] > 1)
				emit(sink, "%s (%lld times)", text + line_start[i], pair_misses[line_pair[i]]);
			else if (line_kind[i] == kind)
				emit(sink, "%s", text + line_start[i]);
	if (lines_left_out)
		emit(sink, "%zu more lines left out", lines_left_out);
}

/* The reports the run's other processes appended (at most this much is read). */
#define REPORT_RUN_MAX (16u << 20)

/* The number of processes whose reports run holds (their first lines), and, with print, each line
   on stderr. A process with two copies of the runtime (the audit front's) is counted once. */
static size_t run_reports(char *run, bool print)
{
	size_t processes = 0;
	long last = 0;
	for (char *line = run, *end; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		long pid;
		if (sscanf(line, "process %ld", &pid) == 1 && pid != last) {
			processes++;
			last = pid;
		}
		if (print)
			log_report("%s", line);
		if (end)
			*end = '\n';
	}
	return processes;
}

void report_at_exit(enum report_exit how)
{
	const struct config *config = config_get();
	if (!report_on())
		return;
	bool reports = platform_reports_for(config->report_pid);
	/* The run's other processes have ended, most of them: their reports are read before the lock. */
	char *others = reports && config->report_file[0] ? platform_take_file(config->report_file, REPORT_RUN_MAX) : NULL;
	if (how == REPORT_EXIT_TRY_LOCK ? !try_lock() : (take_lock(), false)) {
		if (reports)
			log_report("process %ld: no report: a thread that ended with the process held the report's lock",
				   platform_process_id());
		free(others);
		return;
	}
	struct log_summary summary = { .report_pid = config->report_pid,
				       .origins = counts[KIND_ORIGIN],
				       .redirects = counts[KIND_REDIRECT],
				       .misses = counts[KIND_MISS],
				       .mixed_origins = counts[KIND_MIXED] };
	bool counted = summary.origins || summary.redirects || summary.misses || summary.mixed_origins;
	if (reports) {
		size_t processes = others ? run_reports(others, false) : 0;
		if (processes)
			log_report("%zu processes reported", processes + 1);
		write_report(&(struct report_sink){ 0 }, &summary, config);
		if (others)
			run_reports(others, true);
	} else if (counted && config->report_file[0]) {
		/* Another process of the run: its report goes to the run's file, whole in one append. */
		struct report_sink block = { .size = REPORT_TEXT + 2 * REPORT_LINES * 80 + 4096 };
		if ((block.block = malloc(block.size))) {
			write_report(&block, &summary, config);
			platform_append_line(config->report_file, block.block, block.used);
			free(block.block);
		}
	}
	drop_lock();
	free(others);
	log_event(&(struct log_event){ .event = "summary", .policy = config_policy_name(config->policy),
				       .reason = "exit", .summary = &summary });
}

static const char *const kind_names[KIND_COUNT] = { "origin", "supplied", "miss", "mixed-origin" };

int report_list(struct nvi_report_totals *totals, struct nvi_report_entry *entries, size_t capacity)
{
	take_lock();
	if (totals)
		*totals = (struct nvi_report_totals){ .origins = counts[KIND_ORIGIN], .supplied = counts[KIND_REDIRECT],
						      .misses = counts[KIND_MISS], .mixed_origins = counts[KIND_MIXED],
						      .left_out = (long long)lines_left_out, .kept = report_on() };
	for (size_t i = 0; entries && i < line_count && i < capacity; i++) {
		const char *field[FIELD_COUNT], *at = text + line_start[i];
		for (int f = 0; f < FIELD_COUNT; f++) {
			at += strlen(at) + 1;
			field[f] = line_null[i] & (1u << f) ? NULL : at;
		}
		int pair = line_pair[i];
		entries[i] = (struct nvi_report_entry){ .kind = kind_names[line_kind[i]], .name = field[FIELD_NAME],
							.family = field[FIELD_FAMILY], .event = field[FIELD_EVENT],
							.asker = field[FIELD_ASKER], .path = field[FIELD_PATH],
							.reason = field[FIELD_REASON], .own = field[FIELD_OWN],
							.places = field[FIELD_PLACES], .place_count = (int)line_places[i],
							.times = pair >= 0 ? pair_misses[pair] : 1, .warning = line_warning[i] };
	}
	int total = (int)line_count;
	drop_lock();
	return total;
}
