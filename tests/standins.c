#define _GNU_SOURCE
#include "standins.h"

#include "common.h"

#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void standin_builtins(const char *path, int value, const char *soname)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *flags = test_format("-DVALUE=%d", value);
	test_build_library("value.c", path, soname ? soname : base, flags);
}

struct standin_wheel standin_nvrtc_wheel(int with_builtins)
{
	struct standin_wheel wheel;
	wheel.root = test_tmpdir();
	wheel.lib = test_format("%s/site-packages/nvidia/cuda_nvrtc/lib", wheel.root);
	test_mkdirs(wheel.lib);
	wheel.nvrtc = test_format("%s/libnvrtc.so.77", wheel.lib);
	wheel.builtins = test_format("%s/libnvrtc-builtins.so.77.1", wheel.lib);
	test_build_library("nvrtc_like.c", wheel.nvrtc, "libnvrtc.so.77", "");
	if (with_builtins)
		standin_builtins(wheel.builtins, 42, NULL);
	return wheel;
}

const char *standin_preload(void) { return test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME")); }

struct standin_wheel standin_nvrtc_wheel_with_driver(bool reaches_no_driver)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(1);
	test_build_library("value.c", test_format("%s/libcuda.so.1", wheel.lib), "libcuda.so.1", "");
	if (reaches_no_driver)
		test_build_library("nvrtc_like.c", wheel.nvrtc, "libnvrtc.so.77", "-Wl,-z,nodefaultlib");
	return wheel;
}

static int compare_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The "maps: " lines of output, sorted (the order of mappings is no part of the rule). */
static char *mapped(const char *output)
{
	char *lines[64];
	size_t count = 0, length = 1;
	for (const char *at = strstr(output, "maps: "); at && count < 64; at = strstr(at + 1, "\nmaps: ")) {
		at += at[0] == '\n';
		lines[count] = strndup(at, strcspn(at, "\n"));
		length += strlen(lines[count++]) + 1;
	}
	qsort(lines, count, sizeof(lines[0]), compare_text);
	char *joined = calloc(1, length);
	for (size_t i = 0; i < count; i++)
		strcat(strcat(joined, lines[i]), "\n");
	return joined;
}

/* The line "call nvrtc_like_driver: N" of output. */
static char *driver_result(const char *output)
{
	const char *at = strstr(output, "call nvrtc_like_driver: ");
	ck_assert_msg(at, "the driver was not asked for: %s", output);
	return strndup(at, strcspn(at, "\n"));
}

void standin_check_driver_is_left_to_the_loader(const char *policy)
{
	const char *env[] = { standin_preload(), policy ? test_format("NVINTERPOSE_POLICY=%s", policy) : NULL, NULL };
	/* Whatever the loader finds here: the same with the runtime, the stand-in never. */
	struct standin_wheel wheel = standin_nvrtc_wheel_with_driver(false);
	char *in_wheel = test_format("maps: %s/", realpath(wheel.lib, NULL));
	struct test_run plain = test_probe(NULL, test_format("call %s nvrtc_like_driver maps libcuda.so", wheel.nvrtc));
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile call %s nvrtc_like_driver maps libcuda.so",
							 wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "the origin is registered: %s", run.output);
	ck_assert_str_eq(driver_result(run.output), driver_result(plain.output));
	ck_assert_msg(!test_contains(run.output, in_wheel), "the wheel's stand-in was mapped: %s", run.output);
	ck_assert_str_eq(mapped(run.output), mapped(plain.output));
	/* The loader finds none: the runtime is asked, and supplies none either. */
	wheel = standin_nvrtc_wheel_with_driver(true);
	plain = test_probe_without_cache(NULL, test_format("call %s nvrtc_like_driver maps libcuda.so", wheel.nvrtc));
	ck_assert_msg(test_contains(plain.output, "call nvrtc_like_driver: 0") && !test_contains(plain.output, "maps: "),
		      "the loader finds no driver for the asker: %s", plain.output);
	run = test_probe_without_cache(env, test_format("call %s nvrtc_like_compile call %s nvrtc_like_driver maps libcuda.so",
							wheel.nvrtc, wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 42"), "the origin is registered: %s", run.output);
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_driver: 0") && !test_contains(run.output, "maps: "),
		      "no driver, the wheel's stand-in least of all: %s", run.output);
}

char *standin_collating_locales(void)
{
	char *folder = test_format("%s/locales", test_tmpdir());
	test_mkdirs(folder);
	const char *argv[] = { "localedef", "-i", "en_US", "-f", "UTF-8", test_format("%s/en_US.UTF-8", folder), NULL };
	struct test_run run = test_run(argv, NULL, 120);
	if (run.status != 0) {
		printf("no en_US.UTF-8 locale could be compiled here (localedef: %d): %s\n", run.status, run.output);
		return NULL;
	}
	return folder;
}

const char *standin_cut_name(enum standin_cut cut) { return cut == STANDIN_CUT_DYNAMIC ? "cut before its dynamic section" : "cut inside its data"; }

void standin_cut_library(const char *path, enum standin_cut cut)
{
	size_t size = 0;
	char *bytes = test_read_stream(fopen(path, "rb"), &size);
	const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)bytes;
	ck_assert_msg(size > sizeof(*header) && header->e_phoff + header->e_phnum * sizeof(ElfW(Phdr)) <= size, "%s", path);
	const ElfW(Phdr) *phdr = (const ElfW(Phdr) *)(bytes + header->e_phoff);
	size_t dynamic_start = 0, dynamic_end = 0, data_end = 0;
	for (int i = 0; i < header->e_phnum; i++) {
		if (phdr[i].p_type == PT_DYNAMIC)
			dynamic_start = phdr[i].p_offset, dynamic_end = phdr[i].p_offset + phdr[i].p_filesz;
		else if (phdr[i].p_type == PT_LOAD && phdr[i].p_offset + phdr[i].p_filesz > data_end)
			data_end = phdr[i].p_offset + phdr[i].p_filesz;
	}
	size_t length = cut == STANDIN_CUT_DYNAMIC ? dynamic_start : data_end - 32768;
	ck_assert_msg(cut == STANDIN_CUT_DYNAMIC ? length < dynamic_end : length > dynamic_end,
		      "%s: the dynamic section ends at %zu, the cut is at %zu (built with " STANDIN_PADDING "?)", path, dynamic_end, length);
	ck_assert_int_eq(truncate(path, (off_t)length), 0);
	free(bytes);
}

void standin_cut_builtins(const char *path, enum standin_cut cut)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	test_build_library("value.c", path, base, "-DVALUE=42 " STANDIN_PADDING);
	standin_cut_library(path, cut);
}

/* The line of output that starts with prefix, or "(none)". */
static char *line_starting(const char *output, const char *prefix)
{
	for (const char *at = output; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL)
		if (strncmp(at, prefix, strlen(prefix)) == 0)
			return test_format("%.*s", (int)strcspn(at, "\n"), at);
	return "(none)";
}

/* settings with one more entry (or none), as an environment. */
static const char **environment_with(const char *const *settings, const char *more)
{
	const char **env = calloc(6, sizeof(*env));
	size_t n = 0;
	for (; settings && settings[n] && n < 4; n++)
		env[n] = settings[n];
	env[n] = more;
	return env;
}

void standin_check_every_way_in(const struct standin_runs *runs, const char *const *settings, const char *library)
{
	const char *runtime = test_setting("NVI_RUNTIME");
	struct standin_runs way = *runs;
	way.label = test_format("%s, preloaded", runs->label);
	way.env = environment_with(settings, test_format("LD_PRELOAD=%s", runtime));
	standin_check_like_plain(&way);
	way.label = test_format("%s, attached before", runs->label);
	way.env = environment_with(settings, NULL);
	way.args = test_format("late %s %s", runtime, runs->args);
	standin_check_like_plain(&way);
	way.label = test_format("%s, attached after", runs->label);
	way.args = test_format("open %s late %s %s", library, runtime, runs->args);
	standin_check_like_plain(&way);
	if (test_glibc_at_least(2, 34)) {
		way.label = test_format("%s, audit", runs->label);
		way.env = environment_with(settings, test_format("LD_AUDIT=%s", runtime));
		way.args = runs->args;
		standin_check_like_plain(&way);
	}
}

void standin_check_like_plain(const struct standin_runs *runs)
{
	struct test_run plain = (runs->plain_run ? runs->plain_run : test_probe)(runs->plain_env, runs->plain_args);
	struct test_run with = (runs->run ? runs->run : test_probe)(runs->env, runs->args);
	ck_assert_msg(with.status < 128, "%s: ended by signal %d (the plain run: %d)\n%s", runs->label, with.status - 128, plain.status,
		      with.output);
	char *expected = line_starting(plain.output, runs->result);
	ck_assert_msg(strcmp(expected, "(none)") != 0, "%s: the plain run printed no '%s': %s", runs->label, runs->result, plain.output);
	ck_assert_msg(strcmp(line_starting(with.output, runs->result), expected) == 0, "%s: not the plain run's '%s'\n%s\nplain:\n%s",
		      runs->label, expected, with.output, plain.output);
}
