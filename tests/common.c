#define _GNU_SOURCE
#include "common.h"
#include "environment.h"

#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <ftw.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char *test_setting(const char *name)
{
	const char *value = getenv(name);
	ck_assert_msg(value && value[0], "%s is not set: run the tests through meson test", name);
	return value;
}

char *test_shared_check(const char *name)
{
	const char *checks = getenv("NVI_SHARED_CHECKS");
	char *path = NULL;
	if (!checks || !checks[0] || asprintf(&path, "%s/%s", checks, name) < 0) {
		printf("skipped: NVI_SHARED_CHECKS is not set, so %s cannot be found\n", name);
		return NULL;
	}
	if (access(path, R_OK) != 0) {
		printf("skipped: %s is absent (the shared checks sit beside the project's checkout)\n", path);
		free(path);
		return NULL;
	}
	return path;
}

char *test_format(const char *format, ...)
{
	va_list args;
	char *s = NULL;
	va_start(args, format);
	ck_assert_int_ge(vasprintf(&s, format, args), 0);
	va_end(args);
	return s;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static char *tmpdirs[64];
static size_t tmpdir_count;

static void remove_tmpdirs(void)
{
	for (size_t i = 0; i < tmpdir_count; i++)
		nftw(tmpdirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	tmpdir_count = 0;
}

/* The test's TMPDIR (clean_env makes a fresh one for each test), or /tmp. */
static const char *temporary_base(void)
{
	const char *base = getenv("TMPDIR");
	return base && base[0] == '/' ? base : "/tmp";
}

char *test_tmpdir(void)
{
	char *dir = test_format("%s/nvinterpose-test-XXXXXX", temporary_base());
	ck_assert_ptr_nonnull(mkdtemp(dir));
	if (tmpdir_count == 0)
		atexit(remove_tmpdirs);
	if (tmpdir_count < sizeof(tmpdirs) / sizeof(tmpdirs[0]))
		tmpdirs[tmpdir_count++] = dir;
	return dir;
}

const char *test_mkdirs(const char *path)
{
	char *copy = strdup(path);
	for (char *s = copy + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(copy, 0755);
			*s = '/';
		}
	ck_assert_msg(mkdir(copy, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", copy, strerror(errno));
	free(copy);
	return path;
}

void test_write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
	fputs(content, f);
	fclose(f);
}

char *test_read_stream(FILE *f, size_t *length)
{
	char *data = NULL;
	size_t scratch = 0, *size = length ? length : &scratch;
	FILE *out = open_memstream(&data, size);
	char buffer[4096];
	size_t n;
	while ((n = fread(buffer, 1, sizeof(buffer), f)) > 0)
		fwrite(buffer, 1, n, out);
	fclose(out);
	fclose(f);
	return data;
}

char *test_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	return f ? test_read_stream(f, NULL) : NULL;
}

static int find_interpreter(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP) {
			*(const char **)arg = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
			return 1;
		}
	return 1; /* the main program comes first */
}

const char *test_interpreter(void)
{
	const char *path = NULL;
	dl_iterate_phdr(find_interpreter, &path);
	ck_assert_ptr_nonnull(path);
	return path;
}

void test_copy_file(const char *from, const char *to)
{
	const char *argv[] = { "cp", "-f", from, to, NULL };
	struct test_run run = test_run(argv, NULL, 60);
	ck_assert_msg(run.status == 0, "cp %s %s: %s", from, to, run.output);
	free(run.output);
}

size_t test_regular_files(const char *folder, const char *pattern, char ***paths)
{
	DIR *dir = opendir(folder);
	ck_assert_msg(dir != NULL, "cannot list %s: %s", folder, strerror(errno));
	size_t count = 0;
	*paths = NULL;
	for (struct dirent *entry; (entry = readdir(dir));) {
		char *path = test_format("%s/%s", folder, entry->d_name);
		struct stat st;
		if (fnmatch(pattern, entry->d_name, 0) != 0 || lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		*paths = realloc(*paths, (count + 1) * sizeof(**paths));
		(*paths)[count++] = path;
	}
	closedir(dir);
	return count;
}

void test_build_library(const char *source, const char *path, const char *soname, const char *flags)
{
	char *command = test_format("'%s' -shared -fPIC -O1 -o '%s' '%s/%s' %s%s %s -ldl", test_setting("NVI_CC"), path,
				    test_setting("NVI_FIXTURES"), source, soname[0] ? "-Wl,-soname," : "", soname,
				    flags ? flags : "");
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, NULL, 120);
	ck_assert_msg(run.status == 0, "building %s failed: %s\n%s", path, command, run.output);
	free(run.output);
	free(command);
}

char *test_build_program(const char *source, const char *folder, const char *flags)
{
	char *program = test_format("%s/program", folder);
	char *command = test_format("'%s' -o '%s' '%s/%s' %s", test_setting("NVI_CC"), program, test_setting("NVI_FIXTURES"), source, flags);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, NULL, 120);
	ck_assert_msg(run.status == 0, "building %s failed: %s\n%s", program, command, run.output);
	free(run.output);
	free(command);
	return program;
}

bool test_glibc_at_least(int major, int minor)
{
	int running_major = 0, running_minor = 0;
	return sscanf(gnu_get_libc_version(), "%d.%d", &running_major, &running_minor) == 2 &&
	       (running_major > major || (running_major == major && running_minor >= minor));
}

struct test_run test_run(const char *const *argv, const char *const *env, int timeout)
{
	struct test_run result = { .status = -1, .output = NULL };
	char *path = test_format("%s/nvinterpose-output-XXXXXX", temporary_base());
	int fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	free(path);
	char **child_env = test_environment_build(environ, TEST_ENVIRONMENT_CHILD, env);
	ck_assert_ptr_nonnull(child_env);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, STDIN_FILENO);
		execvpe(argv[0], (char *const *)argv, child_env);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	free(child_env);
	int status = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t done = waitpid(pid, &status, WNOHANG);
		if (done == pid)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(2000);
	}
	result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	lseek(fd, 0, SEEK_SET);
	result.output = test_read_stream(fdopen(fd, "r"), NULL);
	return result;
}

/* ---- the other kind of CPU -------------------------------------------------------------------- */

/* Under kind 1: the emulator's words before a program, and the setting for programs that start
   others. Natively "" and NULL. */
static const char *cpu_prefix = "";
static const char *cpu_words[4];
static const char *cpu_spawn_setting;

/* The first executable file named name in the folders of PATH, or NULL. */
static char *find_on_path(const char *name)
{
	const char *path = getenv("PATH");
	for (const char *s = path; s && *s;) {
		size_t length = strcspn(s, ":");
		char *candidate = test_format("%.*s/%s", (int)length, s, name);
		if (length && candidate[0] == '/' && access(candidate, X_OK) == 0)
			return candidate;
		free(candidate);
		s += length + (s[length] == ':');
	}
	return NULL;
}

bool test_cpu_kind(int kind)
{
	cpu_prefix = "";
	cpu_words[0] = NULL;
	cpu_spawn_setting = NULL;
	if (kind == 0)
		return true;
#if defined(__x86_64__)
	const char *sanitize = getenv("NVI_SANITIZE");
	if (sanitize && strstr(sanitize, "address")) {
		printf("skipped: as the other kind of CPU: under AddressSanitizer, whose runtime must come first in a process (a program's "
		       "children are sent through the emulator by a preloaded library)\n");
		return false;
	}
	char *qemu = find_on_path("qemu-x86_64-static");
	if (!qemu) {
		printf("skipped: as the other kind of CPU: qemu-x86_64-static is not installed (Debian: qemu-user-static)\n");
		return false;
	}
	/* Haswell's features (less those qemu's TCG lacks, which it warns of at every start) where
	   the loader says x86_64 here; qemu64 (no AVX2) where it says haswell or another value. */
	char *native = test_loader_expansion("/$PLATFORM");
	const char *model = strcmp(native, "/x86_64") == 0 ? "Haswell,pcid=off,x2apic=off,tsc-deadline=off,hle=off,invpcid=off,rtm=off" : "qemu64";
	cpu_prefix = test_format("'%s' -cpu '%s' ", qemu, model);
	cpu_words[0] = qemu;
	cpu_words[1] = "-cpu";
	cpu_words[2] = model;
	char *emulated = test_loader_expansion("/$PLATFORM");
	if (strcmp(emulated, native) == 0) {
		printf("skipped: as the other kind of CPU: under qemu-x86_64-static -cpu %s the loader's $PLATFORM is %s, as here\n", model, native + 1);
		cpu_prefix = "";
		cpu_words[0] = NULL;
		return false;
	}
	char *shim = test_format("%s/libspawn-emulated.so.77", test_tmpdir());
	test_build_library("spawn_emulated.c", shim, "libspawn-emulated.so.77",
			   test_format("-DEMULATOR='\"%s\"' -DCPU_MODEL='\"%s\"'", qemu, model));
	cpu_spawn_setting = test_format("LD_PRELOAD=%s", shim);
	printf("as the other kind of CPU: qemu-x86_64-static -cpu %s, where the loader's $PLATFORM is %s (here %s)\n", model, emulated + 1,
	       native + 1);
	return true;
#else
	printf("skipped: as the other kind of CPU: on this architecture the loader's $PLATFORM is the kernel's AT_PLATFORM alone\n");
	return false;
#endif
}

const char *test_cpu_prefix(void) { return cpu_prefix; }

const char **test_cpu_argv(const char *const *argv)
{
	size_t words = 0, count = 0;
	while (cpu_words[words])
		words++;
	while (argv[count])
		count++;
	const char **emulated = calloc(words + count + 1, sizeof(*emulated));
	memcpy(emulated, cpu_words, words * sizeof(*emulated));
	memcpy(emulated + words, argv, count * sizeof(*emulated));
	return emulated;
}

const char *test_cpu_spawn_setting(void) { return cpu_spawn_setting; }

struct test_run test_probe(const char *const *env, const char *args)
{
	char *command = test_format("exec %s'%s' %s", cpu_prefix, test_setting("NVI_PROBE"), args);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, env, 120);
	free(command);
	return run;
}

struct test_run test_probe_without_cache(const char *const *env, const char *args)
{
	char *command = test_format("exec %s'%s' --inhibit-cache '%s' %s", cpu_prefix, test_interpreter(), test_setting("NVI_PROBE"), args);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct test_run run = test_run(argv, env, 300);
	free(command);
	return run;
}

char *test_loader_expansion(const char *element)
{
	/* The loader prints the LD_LIBRARY_PATH list it searches, each folder after its subfolders. */
	const char *env[] = { test_format("LD_LIBRARY_PATH=%s", element), "LD_DEBUG=libs", NULL };
	/* No shell in between: its own loader would answer first. */
	const char *argv[] = { test_setting("NVI_PROBE"), NULL };
	struct test_run run = test_run(test_cpu_argv(argv), env, 120);
	const char *line = strstr(run.output, "search path=");
	ck_assert_msg(line, "the loader printed no search path for %s: %s", element, run.output);
	const char *end = strstr(line, "\t\t(LD_LIBRARY_PATH)");
	ck_assert_msg(end, "%s", run.output);
	const char *last = end;
	while (last > line && last[-1] != ':' && last[-1] != '=')
		last--;
	return test_format("%.*s", (int)(end - last), last);
}

const char *test_system_path(const char *machine, const char *glibc)
{
	const char *bin = test_mkdirs(test_format("%s/system-%s-%s", test_tmpdir(), machine ? machine : "this", glibc));
	char *getconf = test_format("%s/getconf", bin);
	test_write_file(getconf, test_format("#!/bin/sh\n[ \"$1\" = GNU_LIBC_VERSION ] && echo 'glibc %s' || exec /usr/bin/getconf \"$@\"\n", glibc));
	ck_assert_int_eq(chmod(getconf, 0755), 0);
	if (machine) {
		char *uname = test_format("%s/uname", bin);
		test_write_file(uname, test_format("#!/bin/sh\n[ \"$1\" = -m ] && echo %s || exec /bin/uname \"$@\"\n", machine));
		ck_assert_int_eq(chmod(uname, 0755), 0);
	}
	return test_format("PATH=%s:/usr/bin:/bin", bin);
}

struct test_capture test_capture_stderr(void)
{
	struct test_capture capture = { .path = test_format("%s/stderr", test_tmpdir()) };
	int fd = open(capture.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	capture.saved = dup(STDERR_FILENO);
	ck_assert_int_ge(capture.saved, 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return capture;
}

char *test_captured(struct test_capture *capture)
{
	dup2(capture->saved, STDERR_FILENO);
	close(capture->saved);
	char *output = test_read_file(capture->path);
	ck_assert_ptr_nonnull(output);
	return output;
}

bool test_contains(const char *haystack, const char *needle) { return haystack && strstr(haystack, needle); }

size_t test_count(const char *haystack, const char *needle)
{
	size_t n = 0;
	for (const char *s = haystack; s && (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

int test_main(Suite *suite)
{
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---- JSON (RFC 8259) and UTF-8: the oracle of every output that claims to be JSON ---------- */

bool test_utf8(const char *text, size_t length)
{
	const unsigned char *s = (const unsigned char *)text, *end = s + length;
	while (s < end) {
		unsigned char c = *s;
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (n == 0 || (size_t)(end - s) < n)
			return false;
		unsigned code = n == 1 ? c : c & (0x7f >> n);
		for (size_t i = 1; i < n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			code = code << 6 | (s[i] & 0x3f);
		}
		/* overlong forms, surrogates, past U+10FFFF */
		if ((n == 3 && code < 0x800) || (n == 4 && code < 0x10000) || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff)
			return false;
		s += n;
	}
	return true;
}

static bool json_value(const char **s, int depth);

static void json_space(const char **s)
{
	while (**s == ' ' || **s == '\n' || **s == '\t' || **s == '\r')
		(*s)++;
}

static bool json_string(const char **s)
{
	if (**s != '"')
		return false;
	for ((*s)++; **s != '"'; (*s)++) {
		if ((unsigned char)**s < 0x20)
			return false; /* the end of the text too */
		if (**s == '\\') {
			(*s)++;
			if (**s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)(*s)[i]))
						return false;
				*s += 4;
			} else if (!**s || !strchr("\"\\/bfnrt", **s)) {
				return false;
			}
		}
	}
	(*s)++;
	return true;
}

static bool json_members(const char **s, char close, int depth, bool keyed)
{
	(*s)++;
	json_space(s);
	if (**s == close) {
		(*s)++;
		return true;
	}
	for (;;) {
		json_space(s);
		if (keyed) {
			if (!json_string(s))
				return false;
			json_space(s);
			if (*(*s)++ != ':')
				return false;
		}
		if (!json_value(s, depth + 1))
			return false;
		json_space(s);
		if (**s == close) {
			(*s)++;
			return true;
		}
		if (*(*s)++ != ',')
			return false;
	}
}

/* A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (strtod takes more: hex, inf). */
static bool json_number(const char **s)
{
	const char *p = *s;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (isdigit((unsigned char)*p))
			p++;
	else
		return false;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	*s = p;
	return true;
}

static bool json_value(const char **s, int depth)
{
	json_space(s);
	if (depth > 200)
		return false;
	if (**s == '{')
		return json_members(s, '}', depth, true);
	if (**s == '[')
		return json_members(s, ']', depth, false);
	if (**s == '"')
		return json_string(s);
	for (const char *word = "true\0false\0null\0"; *word; word += strlen(word) + 1)
		if (strncmp(*s, word, strlen(word)) == 0) {
			*s += strlen(word);
			return true;
		}
	return json_number(s);
}

bool test_json_document(const char *text)
{
	const char *s = text;
	if (!test_utf8(text, strlen(text)) || !json_value(&s, 0))
		return false;
	json_space(&s);
	return *s == '\0';
}

size_t test_json_members(const char *object, struct test_json_member *members, size_t capacity)
{
	const char *s = object;
	size_t count = 0;
	json_space(&s);
	if (*s++ != '{')
		return (size_t)-1;
	json_space(&s);
	if (*s == '}')
		return 0;
	for (;;) {
		json_space(&s);
		const char *key = s;
		if (!json_string(&s) || count == capacity)
			return (size_t)-1;
		members[count].key = test_json_string(key, (size_t)(s - key));
		json_space(&s);
		if (*s++ != ':')
			return (size_t)-1;
		json_space(&s);
		members[count].value = s;
		if (!json_value(&s, 1))
			return (size_t)-1;
		members[count].length = (size_t)(s - members[count].value);
		count++;
		json_space(&s);
		if (*s == '}')
			return count;
		if (*s++ != ',')
			return (size_t)-1;
	}
}

static void put_utf8(char **out, unsigned code)
{
	unsigned char *o = (unsigned char *)*out;
	if (code < 0x80)
		*o++ = (unsigned char)code;
	else if (code < 0x800) {
		*o++ = (unsigned char)(0xc0 | code >> 6);
		*o++ = (unsigned char)(0x80 | (code & 0x3f));
	} else if (code < 0x10000) {
		*o++ = (unsigned char)(0xe0 | code >> 12);
		*o++ = (unsigned char)(0x80 | (code >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (code & 0x3f));
	} else {
		*o++ = (unsigned char)(0xf0 | code >> 18);
		*o++ = (unsigned char)(0x80 | (code >> 12 & 0x3f));
		*o++ = (unsigned char)(0x80 | (code >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (code & 0x3f));
	}
	*out = (char *)o;
}

char *test_json_string(const char *value, size_t length)
{
	if (length == 4 && strncmp(value, "null", 4) == 0)
		return NULL;
	ck_assert_msg(length >= 2 && value[0] == '"' && value[length - 1] == '"', "not a JSON string: %.*s", (int)length, value);
	char *decoded = malloc(length * 2 + 1), *out = decoded;
	for (const char *s = value + 1; s < value + length - 1; s++) {
		if (*s != '\\') {
			*out++ = *s;
			continue;
		}
		s++;
		const char *simple = strchr("\"\\/bfnrt", *s);
		if (*s != 'u') {
			*out++ = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
			continue;
		}
		unsigned code = (unsigned)strtoul((char[5]){ s[1], s[2], s[3], s[4], 0 }, NULL, 16);
		s += 4;
		if (code >= 0xd800 && code < 0xdc00 && s[1] == '\\' && s[2] == 'u') {
			unsigned low = (unsigned)strtoul((char[5]){ s[3], s[4], s[5], s[6], 0 }, NULL, 16);
			code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
			s += 6;
		}
		put_utf8(&out, code);
	}
	*out = '\0';
	return decoded;
}

/* ---- the event log ---------------------------------------------------------------------------- */

#define EVENT_KINDS_MAX 32

struct event_kind {
	const char *event;
	size_t field_count;
	const char *fields[24];
};

static struct event_kind event_kinds[EVENT_KINDS_MAX];
static size_t event_kind_count;

/* The log room's table of events (log_event_kind, log_event_field), which the documents show. */
static void read_event_table(void)
{
	if (event_kind_count)
		return;
	for (const char *event; (event = log_event_kind(event_kind_count));) {
		ck_assert_msg(event_kind_count < EVENT_KINDS_MAX, "more than %d kinds of event", EVENT_KINDS_MAX);
		struct event_kind *kind = &event_kinds[event_kind_count++];
		kind->event = event;
		for (const char *field; (field = log_event_field(event_kind_count - 1, kind->field_count));) {
			ck_assert_msg(kind->field_count < sizeof(kind->fields) / sizeof(kind->fields[0]), "%s: too many fields", event);
			kind->fields[kind->field_count++] = field;
		}
	}
	ck_assert_msg(event_kind_count > 0, "the log room lists no kind of event");
}

size_t test_event_kinds(const char ***events)
{
	static const char *names[EVENT_KINDS_MAX];
	read_event_table();
	for (size_t i = 0; i < event_kind_count; i++)
		names[i] = event_kinds[i].event;
	*events = names;
	return event_kind_count;
}

static bool is_field(const struct event_kind *kind, const char *key)
{
	for (size_t i = 0; i < kind->field_count; i++)
		if (strcmp(kind->fields[i], key) == 0)
			return true;
	return false;
}

static const char *const number_fields[] = { "report_pid", "origins", "redirects", "misses", "mixed_origins", "looked_omitted" };

static bool is_number_field(const char *key)
{
	for (size_t i = 0; i < sizeof(number_fields) / sizeof(number_fields[0]); i++)
		if (strcmp(number_fields[i], key) == 0)
			return true;
	return false;
}

/* FIELD_hex beside a text field whose bytes were not UTF-8: those bytes, in hex digits. */
static void check_hex_twin(const char *line, const struct test_json_member *members, size_t count, size_t i)
{
	size_t length = strlen(members[i].key) - 4;
	char *hex = test_json_string(members[i].value, members[i].length);
	ck_assert_msg(hex && strlen(hex) % 2 == 0 && strspn(hex, "0123456789abcdef") == strlen(hex), "%s: not hex: %s",
		      members[i].key, line);
	bool twin = false;
	for (size_t k = 0; k < count; k++)
		twin |= strlen(members[k].key) == length && strncmp(members[k].key, members[i].key, length) == 0 &&
			members[k].value[0] == '"';
	ck_assert_msg(twin, "%s without its text field: %s", members[i].key, line);
}

void test_check_event_line(const char *line)
{
	read_event_table();
	ck_assert_msg(test_utf8(line, strlen(line)), "not UTF-8: %s", line);
	ck_assert_msg(test_json_document(line), "not one JSON document: %s", line);
	struct test_json_member members[64];
	size_t count = test_json_members(line, members, 64);
	ck_assert_msg(count != (size_t)-1 && count >= 3, "not an object of fields: %s", line);
	ck_assert_msg(strcmp(members[0].key, "time") == 0 && strcmp(members[1].key, "pid") == 0 &&
			      strcmp(members[2].key, "event") == 0, "time, pid, event do not come first: %s", line);
	ck_assert_msg(isdigit((unsigned char)members[0].value[0]) && isdigit((unsigned char)members[1].value[0]) &&
			      strspn(members[1].value, "0123456789") == members[1].length, "time or pid not a number: %s", line);
	char *event = test_json_string(members[2].value, members[2].length);
	const struct event_kind *kind = NULL;
	for (size_t i = 0; event && i < event_kind_count; i++)
		if (strcmp(event_kinds[i].event, event) == 0)
			kind = &event_kinds[i];
	ck_assert_msg(kind, "an event kind the log room's table does not list: %s", line);
	/* Every field of the kind, once, in the table's order; nothing else but the marks of a cut or
	   of bytes that are not UTF-8. */
	size_t next = 0;
	for (size_t i = 3; i < count; i++) {
		const char *key = members[i].key;
		for (size_t k = 0; k < i; k++)
			ck_assert_msg(strcmp(members[k].key, key) != 0, "%s twice: %s", key, line);
		size_t length = strlen(key);
		if (length > 4 && strcmp(key + length - 4, "_hex") == 0) {
			check_hex_twin(line, members, count, i);
			continue;
		}
		if (strcmp(key, "truncated") == 0 || strcmp(key, "looked_omitted") == 0)
			continue;
		ck_assert_msg(next < kind->field_count && strcmp(kind->fields[next], key) == 0,
			      "%s where the table has %s for %s: %s", key, next < kind->field_count ? kind->fields[next] : "nothing more",
			      event, line);
		next++;
		const char *value = members[i].value;
		if (is_number_field(key))
			ck_assert_msg(value[0] == '-' || isdigit((unsigned char)value[0]), "%s is not a number: %s", key, line);
		else if (strcmp(key, "looked") == 0)
			ck_assert_msg(value[0] == '[', "looked is not a list: %s", line);
		else
			ck_assert_msg(value[0] == '"' || strncmp(value, "null", 4) == 0, "%s is not text or null: %s", key, line);
	}
	ck_assert_msg(next == kind->field_count, "%s lacks %s: %s", event, kind->fields[next], line);
	/* The rules every kind keeps: a reason, and (but for a load whose request was not seen) the
	   object that asked. */
	char *reason = test_event_value(line, "reason");
	ck_assert_msg(reason && reason[0], "no reason: %s", line);
	if (is_field(kind, "caller") && !test_contains(reason, "the request was not seen"))
		ck_assert_msg(test_event_value(line, "caller"), "no caller: %s", line);
}

char *test_event_value(const char *line, const char *key)
{
	struct test_json_member members[64];
	size_t count = test_json_members(line, members, 64);
	ck_assert_msg(count != (size_t)-1, "not an object: %s", line);
	for (size_t i = 0; i < count; i++)
		if (strcmp(members[i].key, key) == 0)
			return members[i].value[0] == '"' || members[i].value[0] == 'n'
				       ? test_json_string(members[i].value, members[i].length)
				       : strndup(members[i].value, members[i].length);
	ck_abort_msg("no %s in %s", key, line);
	return NULL;
}

size_t test_event_lines(const char *path, char ***lines)
{
	char *text = test_read_file(path);
	ck_assert_msg(text, "no event log at %s", path);
	size_t count = 0, capacity = 16;
	*lines = malloc(capacity * sizeof(**lines));
	ck_assert_msg(!text[0] || text[strlen(text) - 1] == '\n', "the event log ends inside a line: %s", text);
	for (char *line = text, *end; (end = strchr(line, '\n')); line = end + 1) {
		*end = '\0';
		test_check_event_line(line);
		if (count == capacity)
			*lines = realloc(*lines, (capacity *= 2) * sizeof(**lines));
		(*lines)[count++] = line;
	}
	return count;
}

char *test_find_event(const char *path, const char *event, const char *key, const char *value)
{
	char **lines;
	size_t count = test_event_lines(path, &lines);
	for (size_t i = 0; i < count; i++) {
		char *kind = test_event_value(lines[i], "event");
		if (strcmp(kind, event) != 0)
			continue;
		char *field = key ? test_event_value(lines[i], key) : NULL;
		if (!key || (field && value && strcmp(field, value) == 0) || (!field && !value))
			return lines[i];
	}
	return NULL;
}

/* ---- the installed tree and the documents ------------------------------------------------- */

char *test_meson_install(void)
{
	const char *meson = getenv("NVI_MESON");
	if (!meson || !meson[0]) {
		printf("skipped: meson was not found when the tests were configured (NVI_MESON)\n");
		return NULL;
	}
	if (access(meson, X_OK) != 0) {
		printf("skipped: %s (NVI_MESON) is not here: the tests were configured on another machine (a cross build)\n", meson);
		return NULL;
	}
	char *destdir = test_tmpdir();
	char *command = test_format("'%s' install -C '%s' --no-rebuild --quiet --destdir '%s' 2>&1", meson, test_setting("NVI_BUILD_ROOT"), destdir);
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	const char *env[] = { NULL };
	struct test_run installed = test_run(argv, env, 300);
	ck_assert_msg(installed.status == 0, "meson install: %s", installed.output);
	return destdir;
}

/* Roff's escapes undone, as a reader of the page sees the text: \- as -, \(dq as ", \e as \, \&
   and \: as nothing. */
static char *unescape_roff(const char *text)
{
	static const struct {
		const char *escape, *text;
	} escapes[] = { { "\\-", "-" }, { "\\(dq", "\"" }, { "\\e", "\\" }, { "\\&", "" }, { "\\:", "" } };
	char *out = malloc(strlen(text) + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	while (*text) {
		size_t i = 0;
		while (i < sizeof(escapes) / sizeof(escapes[0]) && strncmp(text, escapes[i].escape, strlen(escapes[i].escape)) != 0)
			i++;
		if (i == sizeof(escapes) / sizeof(escapes[0])) {
			*o++ = *text++;
			continue;
		}
		o = stpcpy(o, escapes[i].text);
		text += strlen(escapes[i].escape);
	}
	*o = '\0';
	return out;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct test_document *)a)->path, ((const struct test_document *)b)->path);
}

/* Adds the files of folder (relative to the source root) whose names end with suffix. */
static void add_documents(struct test_document *documents, size_t *count, size_t capacity, const char *folder, const char *suffix)
{
	const char *root = test_setting("NVI_SOURCE_ROOT");
	DIR *dir = opendir(test_format("%s/%s", root, folder));
	ck_assert_msg(dir, "%s/%s: %s", root, folder, strerror(errno));
	for (struct dirent *entry; (entry = readdir(dir));) {
		size_t length = strlen(entry->d_name);
		if (length < strlen(suffix) || strcmp(entry->d_name + length - strlen(suffix), suffix) != 0)
			continue;
		ck_assert_msg(*count < capacity, "more than %zu documents", capacity);
		char *path = strcmp(folder, ".") == 0 ? test_format("%s", entry->d_name) : test_format("%s/%s", folder, entry->d_name);
		char *text = test_read_file(test_format("%s/%s", root, path));
		ck_assert_msg(text, "%s: cannot be read", path);
		documents[(*count)++] = (struct test_document){ path, strcmp(suffix, ".in") == 0 ? unescape_roff(text) : text };
	}
	closedir(dir);
}

size_t test_documents(const struct test_document **documents)
{
	static struct test_document found[64];
	static size_t count;
	if (!count) {
		add_documents(found, &count, 64, "docs", ".md");
		add_documents(found, &count, 64, "man", ".in");
		add_documents(found, &count, 64, ".", "HACKING.md");
		qsort(found, count, sizeof(found[0]), by_path);
	}
	*documents = found;
	return count;
}

/* The line at line (its leading blanks skipped), with the indented lines under it when block. */
static char *document_line(const char *line, bool block)
{
	const char *end = strchr(line, '\n');
	while (block && end && (strncmp(end + 1, "    ", 4) == 0 || end[1] == '\t'))
		end = strchr(end + 1, '\n');
	return test_format("%.*s", end ? (int)(end - line) : (int)strlen(line), line);
}

size_t test_document_lines(const char *prefix, bool block, struct test_document_line *lines, size_t capacity)
{
	const struct test_document *documents;
	size_t count = 0, documents_count = test_documents(&documents);
	for (size_t d = 0; d < documents_count; d++)
		for (const char *line = documents[d].text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
			const char *text = line + strspn(line, " \t");
			if (strncmp(text, prefix, strlen(prefix)) != 0)
				continue;
			char *found = document_line(text, block);
			bool seen = false;
			for (size_t i = 0; i < count; i++)
				seen |= strcmp(lines[i].text, found) == 0;
			if (seen)
				continue;
			ck_assert_msg(count < capacity, "more than %zu lines start with %s", capacity, prefix);
			lines[count++] = (struct test_document_line){ documents[d].path, found };
		}
	return count;
}
