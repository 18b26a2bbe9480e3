/* The exit report: counts, and one line for each thing counted, kept while the report is on in a
   bounded store (what does not fit is counted, and the report says how many lines it left out). */
#include "report.h"

#include "config.h"
#include "libnames.h"
#include "platform.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
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

/* The (name, caller's folder) pairs whose miss was reported, by a 64-bit hash of both (two pairs
   that share one are a chance far below anything else that can go wrong), with how many times
   each missed. */
static unsigned long long pair_hash[REPORT_MISS_PAIRS];
static long long pair_misses[REPORT_MISS_PAIRS];
static size_t pair_count;
static bool pairs_full_said;

static void reset_in_child(void)
{
	atomic_flag_clear(&lock);
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

static bool report_on(void) { return config_get()->report_pid > 0; }

static const char *front_name;

void report_name_front(const char *front) { front_name = front; }

/* pair: the miss pair a line is for, or -1. */
static void count(enum kind kind, int pair, const char *format, ...) __attribute__((format(LOG_FORMAT, 3, 4)));
static void count(enum kind kind, int pair, const char *format, ...)
{
	char line[1024];
	va_list args;
	va_start(args, format);
	int n = vsnprintf(line, sizeof(line), format, args);
	va_end(args);
	size_t length = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	take_lock();
	counts[kind]++;
	if (report_on()) {
		if (line_count < REPORT_LINES && text_used + length + 1 <= sizeof(text)) {
			line_kind[line_count] = (unsigned char)kind;
			line_pair[line_count] = pair;
			line_start[line_count++] = text_used;
			memcpy(text + text_used, line, length + 1);
			text_used += length + 1;
		} else {
			lines_left_out++;
		}
	}
	drop_lock();
}

bool report_misses_wanted(bool driver)
{
	return log_enabled(driver ? LOG_INFO : LOG_WARN) || log_events_enabled() || report_on();
}

#define MISS_COUNTED (-1) /* reported before, or past the table: counted, nothing more */
#define MISS_NEW (-2)     /* not reported yet, and not added */

/* A miss of the pair: counted when it was reported before or the table is full (said once);
   otherwise added when add is true (its index returned), else MISS_NEW. */
static int note_miss(const char *name, const char *caller, bool add)
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
	} else if (add) {
		pair = (int)pair_count++;
		pair_hash[pair] = hash;
		pair_misses[pair] = 1;
	} else {
		pair = MISS_NEW;
	}
	drop_lock();
	if (full_now)
		log_message(LOG_WARN, "more than %d different libraries were not found: the others are counted, not reported", REPORT_MISS_PAIRS);
	return pair;
}

bool report_miss_repeated(const char *name, const char *caller) { return note_miss(name, caller, false) == MISS_COUNTED; }

void report_miss(const struct report_miss *miss)
{
	int pair = note_miss(miss->name, miss->caller, true);
	if (pair < 0)
		return;
	const char *family = miss->family >= 0 ? libnames[miss->family].family : NULL;
	const char *policy = config_policy_name(config_get()->policy);
	/* The places, as many as one line holds; the event has them all. */
	char places[700];
	size_t used = 0;
	places[0] = '\0';
	for (size_t i = 0; i < miss->looked_count && used < sizeof(places); i++) {
		const struct log_looked *place = &miss->looked[i];
		int n = snprintf(places + used, sizeof(places) - used, "%s%s (%s)", i ? ", " : "",
				 place->folder ? place->folder : "ld.so.cache", place->step);
		used = n < 0 ? sizeof(places) : used + (size_t)n;
	}
	if (used >= sizeof(places))
		strcpy(places + sizeof(places) - 5, " ...");
	char reason[PLATFORM_PATH_TEXT];
	snprintf(reason, sizeof(reason), miss->other ? "%s; another version is there: %s" : "%s", miss->reason, miss->other);
	log_message(miss->driver || miss->other ? LOG_INFO : LOG_WARN, "%s wanted by %s (%s): not found; looked in %s", miss->name,
		    miss->caller ? miss->caller : "an unknown object", reason, places[0] ? places : "no folder");
	log_event(&(struct log_event){ .event = "miss", .name = miss->name, .caller = miss->caller, .family = family,
				       .policy = policy, .reason = reason, .looked = miss->looked,
				       .looked_count = miss->looked_count });
	count(KIND_MISS, pair, "miss %s wanted by %s (%s): looked in %zu places", miss->name,
	      miss->caller ? miss->caller : "an unknown object", reason, miss->looked_count);
}

void report_origin(const char *family, const char *folder, const char *name)
{
	count(KIND_ORIGIN, -1, "origin %s: %s (%s)", family, folder, name);
}

void report_redirect(const char *event, const char *name, const char *path, const char *caller)
{
	count(KIND_REDIRECT, -1, "%s %s for %s: %s", event, name, caller ? caller : "an unknown object", path);
}

void report_mixed_origin(const char *name, const char *loaded, const char *own, const char *caller)
{
	count(KIND_MIXED, -1, "mixed origin %s: loaded from %s; %s would take %s", name, loaded, caller, own);
}

void report_at_exit(void)
{
	const struct config *config = config_get();
	if (!report_on())
		return;
	take_lock();
	struct log_summary summary = { .report_pid = config->report_pid,
				       .origins = counts[KIND_ORIGIN],
				       .redirects = counts[KIND_REDIRECT],
				       .misses = counts[KIND_MISS],
				       .mixed_origins = counts[KIND_MIXED] };
	if (platform_process_id() == config->report_pid) {
		log_report("process %ld%s%s%s, policy %s: %lld origins registered, %lld redirects, %lld misses, %lld mixed origins",
			   platform_process_id(), front_name ? " (" : "", front_name ? front_name : "", front_name ? ")" : "",
			   config_policy_name(config->policy), summary.origins, summary.redirects, summary.misses, summary.mixed_origins);
		for (enum kind kind = 0; kind < KIND_COUNT; kind++)
			for (size_t i = 0; i < line_count; i++)
				if (line_kind[i] == kind && line_pair[i] >= 0 && pair_misses[line_pair[i]] > 1)
					log_report("%s (%lld times)", text + line_start[i], pair_misses[line_pair[i]]);
				else if (line_kind[i] == kind)
					log_report("%s", text + line_start[i]);
		if (lines_left_out)
			log_report("%zu more lines left out", lines_left_out);
	}
	drop_lock();
	log_event(&(struct log_event){ .event = "summary", .policy = config_policy_name(config->policy),
				       .reason = "exit", .summary = &summary });
}
