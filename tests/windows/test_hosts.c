/* The runtime in the two test hosts (host_cpython.c, host_embedder.c), each run without the
 * runtime (the control: the failure is real), with nvinterpose.dll loaded first, and through
 * nvinterpose-run.exe, over stand-ins laid out as the CUDA 12 wheels lay out the real DLLs:
 *
 *   scratch\CASE\site-packages\nvidia\cuda_nvrtc\bin\nvrtc64_120_0.dll, nvrtc-builtins64_120.dll
 *   scratch\CASE\site-packages\nvidia\cusparse\bin\cusparse64_12.dll    imports nvJitLink_120_0.dll
 *   scratch\CASE\site-packages\nvidia\nvjitlink\bin\nvJitLink_120_0.dll
 *   scratch\CASE\site-packages\nvidia\cusolver\bin\cusolver64_11.dll    delay-loads nvJitLink_120_0.dll
 *   scratch\CASE\site-packages\nvi_extension\_standin.pyd               imports cusparse64_12.dll
 *   scratch\CASE\site-packages\nvidia\cusolver\bin\cusolverMg64_11.dll  imports cusparse64_12.dll
 *   scratch\CASE\site-packages\nvi_partial\_partial.pyd                 imports cusparse64_12.dll and a DLL nobody has
 *   scratch\CASE\site-packages\nvidia\cufft\bin\cufft64_11.dll, nvidia\curand\bin\curand64_10.dll: import each other
 *   scratch\CASE\other\nvJitLink_120_0.dll, nvrtc-builtins64_120.dll   another installation's copies (value 90)
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
	wchar_t cusolver[HARNESS_PATH_MAX], cusolver_mg[HARNESS_PATH_MAX];
	wchar_t extension[HARNESS_PATH_MAX], partial[HARNESS_PATH_MAX];
	wchar_t cufft[HARNESS_PATH_MAX], cufft_bin[HARNESS_PATH_MAX], curand_bin[HARNESS_PATH_MAX];
	wchar_t other[HARNESS_PATH_MAX];
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
static wchar_t standin_jitlink_other[HARNESS_PATH_MAX], standin_partial[HARNESS_PATH_MAX];
static wchar_t standin_cufft[HARNESS_PATH_MAX], standin_curand[HARNESS_PATH_MAX];

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
	copy_into(standin_extension, folder, L"cusolverMg64_11.dll", layout->cusolver_mg);
	make_folder(folder, site_packages, L"nvi_extension");
	copy_into(standin_extension, folder, L"_standin.pyd", layout->extension);
	make_folder(folder, site_packages, L"nvi_partial");
	copy_into(standin_partial, folder, L"_partial.pyd", layout->partial);
	make_folder(layout->cufft_bin, site_packages, L"nvidia\\cufft\\bin");
	copy_into(standin_cufft, layout->cufft_bin, L"cufft64_11.dll", layout->cufft);
	make_folder(layout->curand_bin, site_packages, L"nvidia\\curand\\bin");
	copy_into(standin_curand, layout->curand_bin, L"curand64_10.dll", NULL);
	make_folder(layout->other, layout->root, L"other");
	copy_into(standin_jitlink_other, layout->other, L"nvJitLink_120_0.dll", NULL);
	copy_into(standin_jitlink_other, layout->other, BUILTINS, NULL);
}

/* Runs host the way in given with the steps (host.h), for DLL_FIRST after first (steps that come
   before the runtime's, "" for none) and the runtime's step; prints what it said and returns its
   exit code. */
static long run_host_after(const struct host *host, enum way_in way_in, const wchar_t *first, const wchar_t *steps, char *output)
{
	static wchar_t line[LINE_MAX_CHARS];
	int n;
	if (way_in == LAUNCHER)
		n = _snwprintf(line, LINE_MAX_CHARS, L"\"%ls\" -- \"%ls\" %ls %ls", launcher_path, host->path, first, steps);
	else if (way_in == DLL_FIRST)
		n = _snwprintf(line, LINE_MAX_CHARS, L"\"%ls\" %ls runtime \"%ls\" %ls", host->path, first, runtime_path, steps);
	else
		n = _snwprintf(line, LINE_MAX_CHARS, L"\"%ls\" %ls %ls", host->path, first, steps);
	if (n < 0 || n >= LINE_MAX_CHARS)
		harness_skip("the command line for %s does not fit", host->name);
	printf("%s, %s:\n", host->name, way_in_names[way_in]);
	long code = harness_run(line, output, OUTPUT_BYTES);
	harness_print_indented(output);
	return code;
}

static long run_host(const struct host *host, enum way_in way_in, const wchar_t *steps, char *output)
{
	return run_host_after(host, way_in, L"", steps, output);
}

/* Through the launcher with options before the host. */
static long run_host_launcher(const struct host *host, const wchar_t *options, const wchar_t *steps, char *output)
{
	static wchar_t line[LINE_MAX_CHARS];
	int n = _snwprintf(line, LINE_MAX_CHARS, L"\"%ls\" %ls -- \"%ls\" %ls", launcher_path, options, host->path, steps);
	if (n < 0 || n >= LINE_MAX_CHARS)
		harness_skip("the command line for %s does not fit", host->name);
	printf("%s, through nvinterpose-run.exe %ls:\n", host->name, options);
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

/* Settings for the hosts this program starts (they inherit its environment); NULL clears one. */
static void set_setting(const wchar_t *name, const wchar_t *value) { SetEnvironmentVariableW(name, value); }

/* How many times part occurs in text. */
static int count_of(const char *text, const char *part)
{
	int count = 0;
	for (const char *s = text ? strstr(text, part) : NULL; s; s = strstr(s + 1, part))
		count++;
	return count;
}

/* The events the hosts wrote, read and then removed for the next run. */
static char *take_events(const struct layout *layout)
{
	char *events = harness_read_text(layout->events);
	DeleteFileW(layout->events);
	return events;
}

/* Leaves first: an NVIDIA DLL by path imports cuSPARSE from a sibling wheel, which imports nvJitLink
   from another; the runtime loads nvJitLink, then cuSPARSE, then the load is made again. Afterwards
   only the loader holds them: when the DLL is freed, they go with it. */
static void case_chain_and_release(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2];
	_snwprintf(steps, LINE_MAX_CHARS / 2,
		   L"load \"%ls\" which cusparse64_12.dll which nvJitLink_120_0.dll free cusolverMg64_11.dll which cusparse64_12.dll "
		   L"which nvJitLink_120_0.dll",
		   layout->cusolver_mg);
	set_setting(L"NVINTERPOSE_LOG_FILE", layout->events);
	for (int h = 0; h < 2; h++) {
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			long code = run_host(&hosts[h], way_in, steps, output);
			char *events = take_events(layout);
			if (way_in == WITHOUT) {
				harness_check(code == 0 && harness_contains(output, "load cusolverMg64_11.dll: error 126"), "%s, %s: the chain fails",
					      hosts[h].name, way_in_names[way_in]);
			} else {
				harness_check(code == 0 && harness_contains(output, "load cusolverMg64_11.dll: ok value 122") &&
						      count_of(output, "which cusparse64_12.dll: Z:") == 1 &&
						      count_of(output, "which nvJitLink_120_0.dll: Z:") == 1,
					      "%s, %s: cuSPARSE and nvJitLink come from their sibling wheels, and the DLL loads", hosts[h].name,
					      way_in_names[way_in]);
				harness_check(harness_contains(output, "free cusolverMg64_11.dll: ok") &&
						      count_of(output, "which cusparse64_12.dll: not loaded") == 1 &&
						      count_of(output, "which nvJitLink_120_0.dll: not loaded") == 1,
					      "%s, %s: the runtime kept no reference: both go when the DLL is freed", hosts[h].name, way_in_names[way_in]);
				harness_check(count_of(events, "\"event\":\"needed\"") == 2 && harness_contains(events, "\"name\":\"cusparse64_12.dll\"") &&
						      harness_contains(events, "\"reason\":\"wheel sibling\""),
					      "%s, %s: two needed events, each from a wheel sibling", hosts[h].name, way_in_names[way_in]);
			}
			free(events);
		}
	}
	set_setting(L"NVINTERPOSE_LOG_FILE", NULL);
}

/* Never worse: a load the runtime can help only in part (cuSPARSE, in a folder the host added, misses
   nvJitLink, which the runtime supplies; a DLL nobody has is missing too) still fails with the
   loader's own error, and the runtime keeps no reference. Wine's loader leaves the DLLs a failed
   load mapped loaded (cuSPARSE here, and through it nvJitLink), as it does without the runtime when
   both are found; Windows' unloads them. Once cuSPARSE is freed (Wine) or was never kept (Windows),
   nvJitLink is gone too: only cuSPARSE's import held it. */
static void case_partial_failure(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2];
	_snwprintf(steps, LINE_MAX_CHARS / 2,
		   L"add \"%ls\" load \"%ls\" free cusparse64_12.dll which cusparse64_12.dll which nvJitLink_120_0.dll", layout->cusparse_bin,
		   layout->partial);
	set_setting(L"NVINTERPOSE_LOG_FILE", layout->events);
	for (int h = 0; h < 2; h++) {
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			long code = run_host(&hosts[h], way_in, steps, output);
			char *events = take_events(layout);
			harness_check(code == 0 && harness_contains(output, "load _partial.pyd: error 126") &&
					      harness_contains(output, "which cusparse64_12.dll: not loaded") &&
					      harness_contains(output, "which nvJitLink_120_0.dll: not loaded"),
				      "%s, %s: the load fails with the loader's error 126, and nothing the runtime loaded is held",
				      hosts[h].name, way_in_names[way_in]);
			if (way_in != WITHOUT)
				harness_check(count_of(events, "\"event\":\"needed\",\"name\":\"nvJitLink_120_0.dll\"") == 1,
					      "%s, %s: the runtime did load nvJitLink for the one retry", hosts[h].name,
					      way_in_names[way_in]);
			free(events);
		}
	}
	set_setting(L"NVINTERPOSE_LOG_FILE", NULL);
}

/* Two NVIDIA DLLs that import each other from two wheel folders: the loader maps the pair when it
   finds both; the runtime, which loads an import before the DLL that needs it, cannot, and the
   load fails as it does without the runtime, promptly, with nothing left loaded. */
static void case_cycle(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2];
	_snwprintf(steps, LINE_MAX_CHARS / 2, L"load \"%ls\" which curand64_10.dll", layout->cufft);
	for (int h = 0; h < 2; h++) {
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			long code = run_host(&hosts[h], way_in, steps, output);
			harness_check(code == 0 && harness_contains(output, "load cufft64_11.dll: error 126") &&
					      harness_contains(output, "which curand64_10.dll: not loaded"),
				      "%s, %s: the cycle ends in the loader's error, nothing left loaded", hosts[h].name, way_in_names[way_in]);
		}
	}
	_snwprintf(steps, LINE_MAX_CHARS / 2, L"add \"%ls\" add \"%ls\" load \"%ls\"", layout->cufft_bin, layout->curand_bin, layout->cufft);
	for (int h = 0; h < 2; h++) {
		long code = run_host(&hosts[h], WITHOUT, steps, output);
		harness_check(code == 0 && harness_contains(output, "load cufft64_11.dll: ok value 2"),
			      "%s, without the runtime, both folders added by hand: the loader maps the pair", hosts[h].name);
	}
}

/* A name nobody has: a warning naming the asker and the runtime's places with the loader's error, a
   miss event listing them, and the exit report, printed by the process it names and by no other
   (its child stays quiet). */
static void case_misses_and_report(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2], jitlink[HARNESS_PATH_MAX];
	harness_join(jitlink, layout->jitlink_bin, L"nvJitLink_120_0.dll");
	if (!DeleteFileW(jitlink))
		harness_skip("cannot remove %s", harness_utf8(jitlink));
	set_setting(L"NVINTERPOSE_LOG", L"warn");
	set_setting(L"NVINTERPOSE_LOG_FILE", layout->events);
	for (int h = 0; h < 2; h++) {
		for (enum way_in way_in = 0; way_in < WAY_IN_COUNT; way_in++) {
			/* Through the launcher --report asks. Otherwise the host names itself before it loads the
			   runtime, as a program sets os.environ before it loads the DLL. */
			_snwprintf(steps, LINE_MAX_CHARS / 2, L"load \"%ls\" load \"%ls\" ask nvrtc-builtins64_999.dll child \"name nvrtc-builtins64_999.dll\"",
				   layout->cusparse, layout->nvrtc);
			long code = way_in == LAUNCHER ? run_host_launcher(&hosts[h], L"--report", steps, output)
						       : run_host_after(&hosts[h], way_in, L"setenv NVINTERPOSE_REPORT=pid", steps, output);
			char *events = take_events(layout);
			if (way_in == WITHOUT) {
				harness_check(code == 0 && harness_contains(output, "load cusparse64_12.dll: error 126") &&
						      !harness_contains(output, "nvinterpose:") && !events,
					      "%s, without the runtime: the loads fail, and nothing is said", hosts[h].name);
				free(events);
				continue;
			}
			const char *how = way_in_names[way_in];
			harness_check(harness_contains(output, "warning: nvJitLink_120_0.dll wanted by ") &&
					      harness_contains(output, "cusparse64_12.dll (an import; the loader's error 126): not found; looked in ") &&
					      harness_contains(output, "nvidia\\cusparse\\bin (caller_folder), ") &&
					      harness_contains(output, "bin (wheel_sibling)") &&
					      harness_contains(events, "nvidia\\\\nvjitlink\\\\bin\",\"step\":\"wheel_sibling\""),
				      "%s, %s: the import's miss is a warning naming cuSPARSE, the loader's error and the places", hosts[h].name, how);
			harness_check(harness_contains(output, "warning: nvrtc-builtins64_999.dll wanted by ") &&
					      harness_contains(output, "(LoadLibrary by bare name; the loader's error 126): not found; looked in "),
				      "%s, %s: a bare name's miss too", hosts[h].name, how);
			harness_check(count_of(events, "\"event\":\"miss\"") == 3 &&
					      harness_contains(events, "\"reason\":\"an import; the loader's error 126\",\"looked\":[{\"folder\":") &&
					      harness_contains(events, "\"step\":\"caller_folder\"") && harness_contains(events, "\"step\":\"wheel_sibling\""),
				      "%s, %s: miss events with every place looked in (the child's own too: 3)", hosts[h].name, how);
			harness_check(count_of(output, "report: process ") == 1 && harness_contains(output, " misses, 0 mixed origins") &&
					      harness_contains(output, "report: miss nvJitLink_120_0.dll wanted by ") &&
					      harness_contains(output, "report: miss nvrtc-builtins64_999.dll wanted by ") &&
					      (harness_contains(output, "(wheel_sibling) (5 times)") || harness_contains(output, " ... (5 times)")),
				      "%s, %s: one exit report, the named process's, with its misses and how often each happened", hosts[h].name, how);
			harness_check(harness_contains(output, "child: exit 0") && count_of(events, "\"event\":\"summary\"") == 2,
				      "%s, %s: the child ran and wrote its summary event, and printed no report", hosts[h].name, how);
			free(events);
		}
	}
	set_setting(L"NVINTERPOSE_LOG", NULL);
	set_setting(L"NVINTERPOSE_LOG_FILE", NULL);
}

/* Coherent: another installation's copies lie in a folder the host added with AddDllDirectory, where
   the loader takes them for a load that searches the added folders. Under fallback the loader's
   choice stands; under coherent NVRTC's builtins and cuSPARSE's nvJitLink come from their own wheels,
   and a copy loaded first stays (first loaded wins), said as a mixed origin. */
static void case_coherent(struct layout *layout)
{
	static char output[OUTPUT_BYTES];
	wchar_t steps[LINE_MAX_CHARS / 2], other_jitlink[HARNESS_PATH_MAX];
	harness_join(other_jitlink, layout->other, L"nvJitLink_120_0.dll");
	set_setting(L"NVINTERPOSE_LOG_FILE", layout->events);
	/* The runtime's own AddDllDirectory of NVRTC's folder would put the own copy in the loader's
	   way too (the order of added folders is unspecified): here the loader's choice is the host's. */
	set_setting(L"NVINTERPOSE_ADD_DLL_DIRECTORY", L"0");
	for (int h = 0; h < 2; h++) {
		/* The way that searches the added folders in both hosts: LoadLibraryExW(DEFAULT_DIRS). */
		_snwprintf(steps, LINE_MAX_CHARS / 2, L"add \"%ls\" load \"%ls\" ask %ls load \"%ls\"", layout->other, layout->nvrtc, BUILTINS,
			   layout->cusparse);
		long code = run_host(&hosts[h], WITHOUT, steps, output);
		harness_check(code == 0 && harness_contains(output, "ask LoadLibraryExW(DEFAULT_DIRS) " "nvrtc-builtins64_120.dll: ok value 90") &&
				      harness_contains(output, "load cusparse64_12.dll: ok value 91"),
			      "%s, without the runtime: the loader takes the other installation's copies", hosts[h].name);
		set_setting(L"NVINTERPOSE_POLICY", L"fallback");
		code = run_host(&hosts[h], DLL_FIRST, steps, output);
		free(take_events(layout));
		harness_check(code == 0 && harness_contains(output, "ask LoadLibraryExW(DEFAULT_DIRS) nvrtc-builtins64_120.dll: ok value 90") &&
				      harness_contains(output, "load cusparse64_12.dll: ok value 91"),
			      "%s, fallback: the loader's choice stands", hosts[h].name);
		set_setting(L"NVINTERPOSE_POLICY", L"coherent");
		for (enum way_in way_in = DLL_FIRST; way_in < WAY_IN_COUNT; way_in++) {
			code = run_host(&hosts[h], way_in, steps, output);
			char *events = take_events(layout);
			harness_check(code == 0 && count_of(output, ": ok value 130") == 5 && harness_contains(output, "load cusparse64_12.dll: ok value 121"),
				      "%s, coherent, %s: NVRTC's builtins (all 5 ways) and cuSPARSE's nvJitLink come from their own wheels",
				      hosts[h].name, way_in_names[way_in]);
			harness_check(harness_contains(events, "\"event\":\"coherent\",\"name\":\"nvrtc-builtins64_120.dll\"") &&
					      harness_contains(events, "\"event\":\"needed\",\"name\":\"nvJitLink_120_0.dll\"") &&
					      harness_contains(events, "\"reason\":\"coherent: the asker's folder or its wheel siblings\""),
				      "%s, coherent, %s: the events say which rule took each copy", hosts[h].name, way_in_names[way_in]);
			free(events);
		}
		/* The other copy loaded first: it stays, and the mixed origin is said. */
		_snwprintf(steps, LINE_MAX_CHARS / 2, L"load \"%ls\" load \"%ls\"", other_jitlink, layout->cusparse);
		set_setting(L"NVINTERPOSE_LOG", L"warn");
		code = run_host(&hosts[h], DLL_FIRST, steps, output);
		char *events = take_events(layout);
		harness_check(code == 0 && harness_contains(output, "load cusparse64_12.dll: ok value 91") &&
				      harness_contains(output, "warning: mixed origins: nvJitLink_120_0.dll is already loaded from ") &&
				      harness_contains(events, "\"event\":\"mixed-origin\""),
			      "%s, coherent: first loaded wins, and the mixed origin is a warning and an event", hosts[h].name);
		free(events);
		set_setting(L"NVINTERPOSE_LOG", NULL);
		set_setting(L"NVINTERPOSE_POLICY", NULL);
	}
	set_setting(L"NVINTERPOSE_LOG_FILE", NULL);
	set_setting(L"NVINTERPOSE_ADD_DLL_DIRECTORY", NULL);
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
	{ "chain_and_release", case_chain_and_release },
	{ "partial_failure", case_partial_failure },
	{ "cycle", case_cycle },
	{ "misses_and_report", case_misses_and_report },
	{ "coherent", case_coherent },
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
	harness_path_from_environment("NVI_STANDIN_JITLINK_OTHER", standin_jitlink_other);
	harness_path_from_environment("NVI_STANDIN_PARTIAL", standin_partial);
	harness_path_from_environment("NVI_STANDIN_CUFFT", standin_cufft);
	harness_path_from_environment("NVI_STANDIN_CURAND", standin_curand);
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
