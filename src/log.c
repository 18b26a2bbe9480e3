/* Logging without allocation: every line is formatted on the stack and leaves in one write(2), so
   lines from threads and processes sharing a file never interleave and the loader's locks may be
   held around it. */
#include "log.h"

#include "platform.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static _Atomic int threshold = LOG_ERROR;
static _Atomic int event_fd = -1;

static const char *const level_words[] = { "error", "warning", "info", "debug" };

void log_set_level(enum log_level level) { atomic_store(&threshold, level); }

bool log_enabled(enum log_level level) { return (int)level <= atomic_load_explicit(&threshold, memory_order_relaxed); }

static void write_all(int fd, const char *buffer, size_t length)
{
	while (length > 0) {
		ssize_t n = write(fd, buffer, length);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buffer += n;
		length -= (size_t)n;
	}
}

void log_message(enum log_level level, const char *format, ...)
{
	if (!log_enabled(level))
		return;
	int saved_errno = errno;
	char line[1024];
	int n = snprintf(line, sizeof(line), "nvinterpose: %s: ", level_words[level]);
	va_list args;
	va_start(args, format);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, format, args);
	va_end(args);
	size_t length = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (length > sizeof(line) - 2)
		length = sizeof(line) - 2;
	line[length++] = '\n';
	write_all(STDERR_FILENO, line, length);
	errno = saved_errno;
}

bool log_open_event_file(const char *path)
{
	int fd = platform_open_append(path);
	if (fd < 0) {
		log_message(LOG_ERROR, "NVINTERPOSE_LOG_FILE='%s' cannot be opened for appending: %s; no event log", path,
			    errno == EINVAL ? "not a regular file" : strerror(errno));
		return false;
	}
	int old = atomic_exchange(&event_fd, fd);
	if (old >= 0)
		close(old);
	return true;
}

size_t log_json_escape(char *out, size_t size, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		char escaped[7];
		size_t k = 0;
		if (c == '"' || c == '\\') {
			escaped[k++] = '\\';
			escaped[k++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(escaped, "\\u00", 4);
			escaped[4] = hex[c >> 4];
			escaped[5] = hex[c & 15];
			k = 6;
		} else {
			escaped[k++] = (char)c;
		}
		if (n + k >= size)
			break;
		memcpy(out + n, escaped, k);
		n += k;
	}
	if (size)
		out[n] = '\0';
	return n;
}

/* Appends ,"key":"value" (or null) to the line. */
static size_t append_field(char *line, size_t used, size_t size, const char *key, const char *value)
{
	int n = snprintf(line + used, size - used, value ? ",\"%s\":\"" : ",\"%s\":null", key);
	if (n < 0 || (size_t)n >= size - used)
		return used;
	used += (size_t)n;
	if (!value)
		return used;
	used += log_json_escape(line + used, size - used - 1, value);
	line[used++] = '"';
	return used;
}

bool log_events_enabled(void) { return atomic_load_explicit(&event_fd, memory_order_relaxed) >= 0 || log_enabled(LOG_DEBUG); }

void log_event(const struct log_event *event)
{
	int fd = atomic_load_explicit(&event_fd, memory_order_acquire);
	if (log_enabled(LOG_DEBUG))
		log_message(LOG_DEBUG, "%s %s%s%s (%s)", event->event, event->name ? event->name : "",
			    event->path ? " -> " : "", event->path ? event->path : "", event->reason ? event->reason : "");
	if (fd < 0)
		return;
	int saved_errno = errno;
	char line[8192];
	long long seconds;
	long microseconds;
	platform_wall_clock(&seconds, &microseconds);
	size_t used = (size_t)snprintf(line, sizeof(line), "{\"time\":%lld.%06ld,\"pid\":%ld", seconds, microseconds,
				       platform_process_id());
	used = append_field(line, used, sizeof(line) - 2, "event", event->event);
	used = append_field(line, used, sizeof(line) - 2, "name", event->name);
	used = append_field(line, used, sizeof(line) - 2, "path", event->path);
	used = append_field(line, used, sizeof(line) - 2, "caller", event->caller);
	used = append_field(line, used, sizeof(line) - 2, "family", event->family);
	used = append_field(line, used, sizeof(line) - 2, "policy", event->policy);
	used = append_field(line, used, sizeof(line) - 2, "reason", event->reason);
	line[used++] = '}';
	line[used++] = '\n';
	write_all(fd, line, used);
	errno = saved_errno;
}
