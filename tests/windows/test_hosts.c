/* The runtime in the two test hosts (host_cpython.c, host_embedder.c), each run without the
 * runtime (the control: the failure is real), with nvinterpose.dll loaded first, and through
 * nvinterpose-run.exe, over stand-ins laid out as the CUDA 12 wheels lay out the real DLLs:
 *
 *   scratch\CASE\site-packages\nvidia\cuda_nvrtc\bin\nvrtc64_120_0.dll, nvrtc-builtins64_120.dll
 *   scratch\CASE\site-packages\nvidia\cusparse\bin\cusparse64_12.dll    imports nvJitLink_120_0.dll
 *   scratch\CASE\site-packages\nvidia\nvjitlink\bin\nvJitLink_120_0.dll
 *   scratch\CASE\site-packages\nvidia\cusolver\bin\cusolver64_11.dll    delay-loads nvJitLink_120_0.dll
 *   scratch\CASE\site-packages\nvi_extension\_standin.pyd               imports cusparse64_12.dll
 *
 * Usage: test_hosts CASE; the cases are listed at the end. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTPUT_BYTES 65536
#define LINE_MAX_CHARS (HARNESS_PATH_MAX * 8)

#define BUILTINS L"nvrtc-builtins64_120.dll"

struct layout {
	wchar_t root[HARNESS_PATH_MAX];
	wchar_t nvrtc_bin[HARNESS_PATH_MAX], nvrtc[HARNESS_PATH_MAX];
	wchar_t cusparse_bin[HARNESS_PATH_MAX], cusparse[HARNESS_PATH_MAX];
	wchar_t jitlink_bin[HARNESS_PATH_MAX];
	wchar_t cusolver[HARNESS_PATH_MAX];
	wchar_t extension[HARNESS_PATH_MAX];
	wchar_t events[HARNESS_PATH_MAX];
};

/* A host program and how it is named in the checks. */
struct host {
	const char *name;
	wchar_t path[HARNESS_PATH_MAX];
};

/* How the runtime comes into the host: not at all (the control), loaded by the host as its first
   step, or through the launcher. */
enum way_in { WITHOUT, DLL_FIRST, LAUNCHER, WAY_IN_COUNT };
static const char *const way_in_names[WAY_IN_COUNT] = { "without the runtime", "nvinterpose.dll loaded first",
							 "through nvinterpose-run.exe" };

static struct host hosts[2] = { { "CPython host", L"" }, { "embedder host", L"" } };
static wchar_t runtime_path[HARNESS_PATH_MAX], launcher_path[HARNESS_PATH_MAX];
static wchar_t standin_nvrtc[HARNESS_PATH_MAX], standin_builtins[HARNESS_PATH_MAX], standin_jitlink[HARNESS_PATH_MAX];
static wchar_t standin_cusparse[HARNESS_PATH_MAX], standin_delayed[HARNESS_PATH_MAX], standin_extension[HARNESS_PATH_MAX];

static void copy_into(const wchar_t *from, const wchar_t *folder, const wchar_t *name, wchar_t *to)
{
	wchar_t path[HARNESS_PATH_MAX];
	harness_join(to ? to : path, folder, name);
	if (!harness_copy(from, to ? to : path))
		harness_skip("cannot copy %s into %s", harness_utf8(from), harness_utf8(folder));
}

static void make_folder(wchar_t *out, const wchar_t *root, const wchar_t *relative)
{
	harness_join(out, root, relative);
	if (!harness_make_folders(out))
		harness_skip("cannot create %s", harness_utf8(out));
}

static void make_layout(const char *name, struct layout *layout)
{
	wchar_t site_packages[HARNESS_PATH_MAX], folder[HARNESS_PATH_MAX];
	harness_fresh_folder(name, layout->root);
	harness_join(site_packages, layout->root, L"site-packages");
	harness_join(layout->events, layout->root, L"events.jsonl");
	make_folder(layout->nvrtc_bin, site_packages, L"nvidia\\cuda_nvrtc\\bin");
	copy_into(standin_nvrtc, layout->nvrtc_bin, L"nvrtc64_120_0.dll", layout->nvrtc);
	copy_into(standin_builtins, layout->nvrtc_bin, BUILTINS, NULL);
	make_folder(layout->cusparse_bin, site_packages, L"nvidia\\cusparse\\bin");
	copy_into(standin_cusparse, layout->cusparse_bin, L"cusparse64_12.dll", layout->cusparse);
	make_folder(layout->jitlink_bin, site_packages, L"nvidia\\nvjitlink\\bin");
	copy_into(standin_jitlink, layout->jitlink_bin, L"nvJitLink_120_0.dll", NULL);
	make_folder(folder, site_packages, L"nvidia\\cusolver\\bin");
	copy_into(standin_delayed, folder, L"cusolver64_11.dll", layout->cusolver);
	make_folder(folder, site_packages, L"nvi_extension");
	copy_into(standin_extension, folder, L"_standin.pyd", layout->extension);
}

/* Runs host the way in given with the steps (host.h), after the runtime's step for DLL_FIRST;
   prints what it said and returns its exit code. */
static long run_host(const struct host *host, enum way_in way_in, const wchar_t *steps, char *output)
{
	static wchar_t line[LINE_MAX_CHARS];
	int n;
	if (way_in == LAUNCHER)
		n = _snwprintf(line, LINE_MAX_CHARS, L"\"%ls\" -- \"%ls\" %ls", launcher_path, host->path, steps);
	else if (way_in == DLL_FIRST)
		n = _snwprintf(line, LINE_MAX_CHARS, L"\"%ls\" runtime \"%ls\" %ls", host->path, runtime_path, steps);
	else
		n = _snwprintf(line, LINE_MAX_CHARS, L"\"%ls\" %ls", host->path, steps);
	if (n < 0 || n >= LINE_MAX_CHARS)
		harness_skip("the command line for %s does not fit", host->name);
	printf("%s, %s:\n", host->name, way_in_names[way_in]);
	long code = harness_run(line, output, OUTPUT_BYTES);
	harness_print_indented(output);
	return code;
}

/* How many of output's lines start with start and end with end. */
static int count_lines(const char *output, const char *start, const char *end)
{
	int count = 0;
	for (const char *s = output; *s;) {
		size_t length = strcspn(s, "\r\n");
		size_t start_length = strlen(start), end_length = strlen(end);
		if (length >= start_length + end_length && strncmp(s, start, start_length) == 0 &&
		    strncmp(s + length - end_length, end, end_length) == 0)
			count++;
		s += length;
		s += strspn(s, "\r\n");
	}
	return count;
}

/* ---- The cases ----------------------------------------------------------------------------------- */

/* NVRTC loaded by path asks for its builtins by bare name in five ways: the runtime loaded before
   NVRTC, after it (between the load and the asking), and through the launcher. */
static void case_nvrtc_builtins(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2];
	for (int h = 0; h < 2; h++) {
		_snwprintf(steps, LINE_MAX_CHARS / 2, L"load \"%ls\" ask %ls", layout->nvrtc, BUILTINS);
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			long code = run_host(&hosts[h], way_in, steps, output);
			bool found = way_in != WITHOUT;
			int lines = count_lines(output, "ask ", found ? ": ok value 130" : ": error 126");
			harness_check(code == 0 && lines == 5, "%s, %s: NVRTC %s its builtins in all 5 ways (%d)", hosts[h].name,
				      way_in_names[way_in], found ? "finds" : "does not find", lines);
		}
		_snwprintf(steps, LINE_MAX_CHARS / 2, L"load \"%ls\" runtime \"%ls\" ask %ls", layout->nvrtc, runtime_path, BUILTINS);
		long code = run_host(&hosts[h], WITHOUT, steps, output);
		int lines = count_lines(output, "ask ", ": ok value 130");
		harness_check(code == 0 && lines == 5, "%s, nvinterpose.dll loaded after NVRTC: NVRTC finds its builtins in all 5 ways (%d)",
			      hosts[h].name, lines);
	}
}

/* cuSPARSE by full path: its import of nvJitLink lies in the sibling wheel's folder. */
static void case_cusparse_by_path(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2];
	_snwprintf(steps, LINE_MAX_CHARS / 2, L"load \"%ls\"", layout->cusparse);
	for (int h = 0; h < 2; h++) {
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			long code = run_host(&hosts[h], way_in, steps, output);
			const char *expected = way_in == WITHOUT ? "load cusparse64_12.dll: error 126" : "load cusparse64_12.dll: ok value 121";
			harness_check(code == 0 && harness_contains(output, expected), "%s, %s: %s", hosts[h].name, way_in_names[way_in],
				      expected);
		}
	}
	/* The layout is sound: with nvJitLink's folder added by hand, it loads without the runtime. */
	_snwprintf(steps, LINE_MAX_CHARS / 2, L"add \"%ls\" load \"%ls\"", layout->jitlink_bin, layout->cusparse);
	for (int h = 0; h < 2; h++) {
		long code = run_host(&hosts[h], WITHOUT, steps, output);
		harness_check(code == 0 && harness_contains(output, "load cusparse64_12.dll: ok value 121"),
			      "%s, without the runtime, nvJitLink's folder added by hand: cuSPARSE loads", hosts[h].name);
	}
}

/* An extension module (not NVIDIA's) imports cuSPARSE, whose folder the host added. */
static void case_extension(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2];
	_snwprintf(steps, LINE_MAX_CHARS / 2, L"add \"%ls\" load \"%ls\"", layout->cusparse_bin, layout->extension);
	for (int h = 0; h < 2; h++) {
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			long code = run_host(&hosts[h], way_in, steps, output);
			const char *expected = way_in == WITHOUT ? "load _standin.pyd: error 126" : "load _standin.pyd: ok value 122";
			harness_check(code == 0 && harness_contains(output, expected), "%s, %s: %s", hosts[h].name, way_in_names[way_in],
				      expected);
		}
	}
	_snwprintf(steps, LINE_MAX_CHARS / 2, L"add \"%ls\" add \"%ls\" load \"%ls\"", layout->cusparse_bin, layout->jitlink_bin,
		   layout->extension);
	for (int h = 0; h < 2; h++) {
		long code = run_host(&hosts[h], WITHOUT, steps, output);
		harness_check(code == 0 && harness_contains(output, "load _standin.pyd: ok value 122"),
			      "%s, without the runtime, both folders added by hand: the extension loads", hosts[h].name);
	}
}

/* A delay-loaded import: the load by path succeeds either way; the first call's delay-load helper
   asks for nvJitLink by bare name (-1: it did not get it). */
static void case_delay_load(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2];
	_snwprintf(steps, LINE_MAX_CHARS / 2, L"load \"%ls\"", layout->cusolver);
	for (int h = 0; h < 2; h++) {
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			long code = run_host(&hosts[h], way_in, steps, output);
			const char *expected = way_in == WITHOUT ? "load cusolver64_11.dll: ok value -1" : "load cusolver64_11.dll: ok value 120";
			harness_check(code == 0 && harness_contains(output, expected), "%s, %s: %s", hosts[h].name, way_in_names[way_in],
				      expected);
		}
	}
}

/* The wheel unpacked (test_wheel.py runs this case with NVI_RUNTIME and NVI_LAUNCHER at the
   unpacked package's nvinterpose.dll and nvinterpose-run.exe): its DLL is the one the hosts get,
   and it does the work. */
static void case_wheel(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2];
	_snwprintf(steps, LINE_MAX_CHARS / 2, L"load \"%ls\" ask %ls load \"%ls\" which nvinterpose.dll", layout->nvrtc, BUILTINS,
		   layout->cusparse);
	for (int h = 0; h < 2; h++) {
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			long code = run_host(&hosts[h], way_in, steps, output);
			bool helped = way_in != WITHOUT;
			int lines = count_lines(output, "ask ", helped ? ": ok value 130" : ": error 126");
			harness_check(code == 0 && lines == 5, "%s, %s: NVRTC %s its builtins (%d ways)", hosts[h].name, way_in_names[way_in],
				      helped ? "finds" : "does not find", lines);
			const char *cusparse = helped ? "load cusparse64_12.dll: ok value 121" : "load cusparse64_12.dll: error 126";
			harness_check(harness_contains(output, cusparse), "%s, %s: %s", hosts[h].name, way_in_names[way_in], cusparse);
			char which[HARNESS_PATH_MAX * 3 + 64];
			snprintf(which, sizeof(which), "which nvinterpose.dll: %s", helped ? harness_utf8(runtime_path) : "not loaded");
			harness_check(harness_contains(output, which), "%s, %s: %s", hosts[h].name, way_in_names[way_in], which);
		}
	}
}

static const struct {
	const char *name;
	void (*run)(struct layout *layout);
} cases[] = {
	{ "nvrtc_builtins", case_nvrtc_builtins },
	{ "cusparse_by_path", case_cusparse_by_path },
	{ "extension", case_extension },
	{ "delay_load", case_delay_load },
	{ "wheel", case_wheel },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: test_hosts CASE\n");
		return 2;
	}
	harness_path_from_environment("NVI_RUNTIME", runtime_path);
	harness_path_from_environment("NVI_LAUNCHER", launcher_path);
	harness_path_from_environment("NVI_HOST_CPYTHON", hosts[0].path);
	harness_path_from_environment("NVI_HOST_EMBEDDER", hosts[1].path);
	harness_path_from_environment("NVI_STANDIN_NVRTC", standin_nvrtc);
	harness_path_from_environment("NVI_STANDIN_BUILTINS", standin_builtins);
	harness_path_from_environment("NVI_STANDIN_JITLINK", standin_jitlink);
	harness_path_from_environment("NVI_STANDIN_CUSPARSE", standin_cusparse);
	harness_path_from_environment("NVI_STANDIN_DELAYED", standin_delayed);
	harness_path_from_environment("NVI_STANDIN_EXTENSION", standin_extension);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, argv[1]) != 0)
			continue;
		struct layout layout;
		make_layout(argv[1], &layout);
		cases[i].run(&layout);
		return harness_result();
	}
	fprintf(stderr, "test_hosts: no case '%s'\n", argv[1]);
	return 2;
}
