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

static void reset_in_child(void)
{
	atomic_flag_clear(&lock);
	memset(counts, 0, sizeof(counts));
	text_used = line_count = lines_left_out = 0;
}

void report_init(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set(&done))
		platform_after_fork_in_child(reset_in_child);
}

static bool report_on(void) { return config_get()->report_pid > 0; }

static void count(enum kind kind, const char *format, ...) __attribute__((format(LOG_FORMAT, 2, 3)));
static void count(enum kind kind, const char *format, ...)
{
	char line[1024];
	va_list args;
	va_start(args, format);
	int n = vsnprintf(line, sizeof(line), format, args);
	va_end(args);
	size_t length = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
	counts[kind]++;
	if (report_on()) {
		if (line_count < REPORT_LINES && text_used + length + 1 <= sizeof(text)) {
			line_kind[line_count] = (unsigned char)kind;
			line_start[line_count++] = text_used;
			memcpy(text + text_used, line, length + 1);
			text_used += length + 1;
		} else {
			lines_left_out++;
		}
	}
	atomic_flag_clear_explicit(&lock, memory_order_release);
}

bool report_misses_wanted(bool driver)
{
	return log_enabled(driver ? LOG_INFO : LOG_WARN) || log_events_enabled() || report_on();
}

void report_miss(const struct report_miss *miss)
{
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
	count(KIND_MISS, "miss %s wanted by %s (%s): looked in %zu places", miss->name,
	      miss->caller ? miss->caller : "an unknown object", reason, miss->looked_count);
}

void report_origin(const char *family, const char *folder, const char *name)
{
	count(KIND_ORIGIN, "origin %s: %s (%s)", family, folder, name);
}

void report_redirect(const char *event, const char *name, const char *path, const char *caller)
{
	count(KIND_REDIRECT, "%s %s for %s: %s", event, name, caller ? caller : "an unknown object", path);
}

void report_mixed_origin(const char *name, const char *loaded, const char *own, const char *caller)
{
	count(KIND_MIXED, "mixed origin %s: loaded from %s; %s would take %s", name, loaded, caller, own);
}

void report_at_exit(void)
{
	const struct config *config = config_get();
	if (!report_on())
		return;
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
	struct log_summary summary = { .report_pid = config->report_pid,
				       .origins = counts[KIND_ORIGIN],
				       .redirects = counts[KIND_REDIRECT],
				       .misses = counts[KIND_MISS],
				       .mixed_origins = counts[KIND_MIXED] };
	if (platform_process_id() == config->report_pid) {
		log_report("process %ld, policy %s: %lld origins registered, %lld redirects, %lld misses, %lld mixed origins",
			   platform_process_id(), config_policy_name(config->policy), summary.origins, summary.redirects,
			   summary.misses, summary.mixed_origins);
		for (enum kind kind = 0; kind < KIND_COUNT; kind++)
			for (size_t i = 0; i < line_count; i++)
				if (line_kind[i] == kind)
					log_report("%s", text + line_start[i]);
		if (lines_left_out)
			log_report("%zu more lines left out", lines_left_out);
	}
	atomic_flag_clear_explicit(&lock, memory_order_release);
	log_event(&(struct log_event){ .event = "summary", .policy = config_policy_name(config->policy),
				       .reason = "exit", .summary = &summary });
}
