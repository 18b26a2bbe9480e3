/* The table of NVIDIA libraries and the two name matchers: which names belong to which family, what
   a name tells about itself (.alt, auditwheel hash, version), and which names must be left alone. */
#include "common.h"

#include "libnames.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A name that must match, and what it must say about itself. */
struct match_row {
	const char *name;
	const char *family;
	bool alt;
	bool hash_renamed;
	const char *version; /* Linux: the whole text after ".so."; Windows: the digits before ".dll" */
};

static const struct match_row linux_matches[] = {
	{ "libnvrtc.so.13", "nvrtc", false, false, "13" },
	{ "libnvrtc-builtins.so.13.0", "nvrtc-builtins", false, false, "13.0" },
	{ "libnvrtc-builtins.alt.so.13.0", "nvrtc-builtins", true, false, "13.0" },
	{ "libnvrtc.alt.so.13", "nvrtc", true, false, "13" },
	{ "libnvrtc-builtins-2dc4bf68.so.11.8", "nvrtc-builtins", false, true, "11.8" },
	{ "libnvrtc-2dc4bf68.so.11.2", "nvrtc", false, true, "11.2" },
	{ "libcudart.so.13.0.96", "cudart", false, false, "13.0.96" },
	{ "libnvrtc.so", "nvrtc", false, false, "" },
	{ "libcublasLt.so.13", "cublasLt", false, false, "13" },
	{ "libcublas.so.13", "cublas", false, false, "13" },
	{ "libcufftw.so.12", "cufftw", false, false, "12" },
	{ "libcufft.so.12", "cufft", false, false, "12" },
	{ "libcudnn_ops.so.9", "cudnn_ops", false, false, "9" },
	{ "libcudnn.so.9", "cudnn", false, false, "9" },
	{ "libcuda.so.1", "cuda", false, false, "1" },
	{ "libnvidia-ml.so.1", "nvidia-ml", false, false, "1" },
	/* auditwheel renames NAME.EXT to NAME-HASH.EXT, splitting at the first dot: an .alt library
	   becomes libnvrtc-HASH.alt.so.13, the hash before ".alt". */
	{ "libnvrtc-2dc4bf68.alt.so.13", "nvrtc", true, true, "13" },
};

static const struct match_row windows_matches[] = {
	{ "nvrtc64_130_0.dll", "nvrtc", false, false, "130_0" },
	{ "NVRTC64_120_0.DLL", "nvrtc", false, false, "120_0" },
	{ "nvrtc-builtins64_129.dll", "nvrtc-builtins", false, false, "129" },
	{ "cublasLt64_13.dll", "cublasLt", false, false, "13" },
	{ "cublas64_13.dll", "cublas", false, false, "13" },
	{ "nvvm64_40_0.dll", "nvvm", false, false, "64_40_0" },
	{ "nvvm70.dll", "nvvm", false, false, "70" },
	{ "cupti64_2025.1.0.dll", "cupti", false, false, "2025.1.0" },
	{ "cusparseLt.dll", "cusparseLt", false, false, "" },
	{ "nvcuda.dll", "cuda", false, false, "" },
	{ "nvml.dll", "nvidia-ml", false, false, "" },
};

static const char *const linux_refusals[] = {
	"libnvrtc-fake.so",         /* a suffix that is not an 8-digit hash */
	"libcudart_static.a",       /* not a shared object */
	"libnvrtc.so.13.bak",       /* a backup copy */
	"libnvrtc.so.",             /* a dot with no version after it */
	"libnvrtc-2dc4bf6.so.13",   /* a 7-digit hash */
	"libnvrtc-2dc4bf689.so.13", /* a 9-digit hash */
	"libnvrtc-2DC4BF68.so.13",  /* auditwheel writes sha256 hexdigest, lower case; upper case is not its */
	"libnvrtc.alt-2dc4bf68.so.13", /* auditwheel puts the hash before .alt, never after */
	"libnvrtc.so.13a",          /* a version with letters */
	"libnvrtc.so.1..3",         /* an empty version group */
	"libnvrtcx.so.13",          /* a longer stem is another library */
	"libz.so.1",
	"libcurl.so.4",             /* "cu" like the CUDA stems, but no stem */
	"",
	"lib",
	"nvrtc64_130_0.dll",        /* a Windows name */
	"LIBNVRTC.SO.13",           /* Linux names are compared with their case */
};

static const char *const windows_refusals[] = {
	"nvrtc64_130_0.dll.bak",
	"nvrtc64_130_0.so",
	"nvrtc64_130_0",
	"nvrtc64_13a.dll",
	"libnvrtc.so.13",
	"nvrtc.dll",                /* the prefix is nvrtc64_ */
	"",
};

static void assert_match(const struct match_row *row, int (*matcher)(const char *, struct libname_match *),
			 bool windows)
{
	struct libname_match match;
	memset(&match, 0xa5, sizeof(match));
	int family = matcher(row->name, &match);
	ck_assert_msg(family >= 0, "%s: no match, expected family %s", row->name, row->family);
	ck_assert_msg(strcmp(libnames[family].family, row->family) == 0, "%s: family %s, expected %s", row->name,
		      libnames[family].family, row->family);
	ck_assert_int_eq(match.family, family);
	ck_assert_msg(match.alt == row->alt, "%s: alt %d, expected %d", row->name, match.alt, row->alt);
	ck_assert_msg(match.hash_renamed == row->hash_renamed, "%s: hash_renamed %d, expected %d", row->name,
		      match.hash_renamed, row->hash_renamed);
	ck_assert_ptr_nonnull(match.version);
	if (!windows) {
		ck_assert_msg(strcmp(match.version, row->version) == 0, "%s: version '%s', expected '%s'", row->name,
			      match.version, row->version);
		return;
	}
	/* The version points into the name: the digits, then ".dll". */
	size_t n = strlen(row->version);
	ck_assert_msg(strncmp(match.version, row->version, n) == 0 && strcasecmp(match.version + n, ".dll") == 0,
		      "%s: version '%s', expected '%s' followed by .dll", row->name, match.version, row->version);
}

START_TEST(test_linux_names_match_their_family)
{
	assert_match(&linux_matches[_i], libnames_match_linux, false);
}
END_TEST

START_TEST(test_windows_names_match_their_family_in_any_case)
{
	assert_match(&windows_matches[_i], libnames_match_windows, true);
}
END_TEST

START_TEST(test_linux_names_outside_the_grammar_do_not_match)
{
	struct libname_match match;
	int family = libnames_match_linux(linux_refusals[_i], &match);
	ck_assert_msg(family == -1, "'%s' matched family %s", linux_refusals[_i],
		      family >= 0 ? libnames[family].family : "?");
}
END_TEST

START_TEST(test_windows_names_outside_the_grammar_do_not_match)
{
	struct libname_match match;
	int family = libnames_match_windows(windows_refusals[_i], &match);
	ck_assert_msg(family == -1, "'%s' matched family %s", windows_refusals[_i],
		      family >= 0 ? libnames[family].family : "?");
}
END_TEST

START_TEST(test_matchers_accept_no_match_record_and_null_names)
{
	ck_assert_int_eq(libnames_match_linux("libnvrtc.so.13", NULL), libnames_family_index("nvrtc"));
	ck_assert_int_eq(libnames_match_windows("nvrtc64_130_0.dll", NULL), libnames_family_index("nvrtc"));
	ck_assert_int_eq(libnames_match_linux(NULL, NULL), -1);
	ck_assert_int_eq(libnames_match_windows(NULL, NULL), -1);
}
END_TEST

START_TEST(test_every_family_name_is_unique)
{
	for (size_t i = 0; i < libnames_count; i++)
		for (size_t j = i + 1; j < libnames_count; j++)
			ck_assert_msg(strcmp(libnames[i].family, libnames[j].family) != 0, "family %s appears twice (rows %zu, %zu)",
				      libnames[i].family, i, j);
}
END_TEST

START_TEST(test_every_stem_and_prefix_matches_its_own_row)
{
	/* A stem shadowed by an earlier row (libcublas before libcublasLt) must still reach its own row. */
	for (size_t i = 0; i < libnames_count; i++) {
		char name[256];
		snprintf(name, sizeof(name), "%s.so.1", libnames[i].linux_stem);
		ck_assert_msg(libnames_match_linux(name, NULL) == (int)i, "%s does not match row %s", name, libnames[i].family);
		if (!libnames[i].windows_prefix[0])
			continue;
		snprintf(name, sizeof(name), "%s1.dll", libnames[i].windows_prefix);
		ck_assert_msg(libnames_match_windows(name, NULL) == (int)i, "%s does not match row %s", name,
			      libnames[i].family);
	}
}
END_TEST

static bool count_visit(int family, void *arg)
{
	ck_assert_int_ge(family, 0);
	(*(size_t *)arg)++;
	return false;
}

static size_t count_words(const char *list)
{
	size_t n = 0;
	for (const char *s = list; *s; s++)
		if (*s != ' ' && (s == list || s[-1] == ' '))
			n++;
	return n;
}

/* Each word of a needed or runtime list names a family of the table: a misspelling would be
   skipped silently by libnames_foreach_family, so the visits must equal the words. */
START_TEST(test_every_needed_and_runtime_family_exists)
{
	for (size_t i = 0; i < libnames_count; i++) {
		const char *lists[] = { libnames[i].needed, libnames[i].runtime };
		/* A DT_NEEDED entry is never optional: the loader fails without it. */
		ck_assert_msg(!strchr(libnames[i].needed, '?'), "row %s: a mark in its needed list", libnames[i].family);
		for (size_t k = 0; k < 2; k++) {
			size_t visits = 0;
			ck_assert(!libnames_foreach_family(lists[k], count_visit, &visits));
			ck_assert_msg(visits == count_words(lists[k]), "row %s: '%s' names %zu words, %zu families",
				      libnames[i].family, lists[k], count_words(lists[k]), visits);
		}
	}
}
END_TEST

static bool stop_at_second(int family, void *arg)
{
	int *seen = arg;
	seen[seen[0] + 1] = family;
	return ++seen[0] == 2;
}

START_TEST(test_foreach_family_stops_when_the_visitor_says_so)
{
	int seen[4] = { 0 };
	ck_assert(libnames_foreach_family("  nvrtc  bogus cublas cudart ", stop_at_second, seen));
	ck_assert_int_eq(seen[0], 2);
	ck_assert_int_eq(seen[1], libnames_family_index("nvrtc"));
	ck_assert_int_eq(seen[2], libnames_family_index("cublas"));
}
END_TEST

static bool record_required(int family, bool required, void *arg)
{
	int *seen = arg;
	seen[2 * seen[0] + 1] = family;
	seen[2 * seen[0] + 2] = required;
	seen[0]++;
	return false;
}

START_TEST(test_a_question_mark_marks_an_optional_run_time_dependent)
{
	int seen[9] = { 0 };
	ck_assert(!libnames_foreach_dependent("nvrtc-builtins cudnn_ops? ? nvrtc", record_required, seen));
	ck_assert_int_eq(seen[0], 3);
	ck_assert_int_eq(seen[1], libnames_family_index("nvrtc-builtins"));
	ck_assert_int_eq(seen[2], true);
	ck_assert_int_eq(seen[3], libnames_family_index("cudnn_ops"));
	ck_assert_int_eq(seen[4], false);
	ck_assert_int_eq(seen[5], libnames_family_index("nvrtc"));
	ck_assert_int_eq(seen[6], true);
	/* NVRTC cannot compile without its builtins; cuDNN loads its engines only when they are used. */
	int nvrtc[9] = { 0 }, cudnn_graph[9] = { 0 };
	libnames_foreach_dependent(libnames[libnames_family_index("nvrtc")].runtime, record_required, nvrtc);
	ck_assert(nvrtc[0] == 1 && nvrtc[1] == libnames_family_index("nvrtc-builtins") && nvrtc[2]);
	libnames_foreach_dependent(libnames[libnames_family_index("cudnn_graph")].runtime, record_required, cudnn_graph);
	ck_assert(cudnn_graph[0] >= 1 && cudnn_graph[1] == libnames_family_index("cudnn_engines_precompiled") && !cudnn_graph[2]);
}
END_TEST

START_TEST(test_dependent_fit_prefers_the_parents_major_and_alt_ness)
{
	struct libname_match nvrtc, alt;
	int builtins = libnames_family_index("nvrtc-builtins");
	ck_assert_int_eq(libnames_match_linux("libnvrtc.so.13", &nvrtc), libnames_family_index("nvrtc"));
	ck_assert_int_eq(libnames_match_linux("libnvrtc.alt.so.13", &alt), libnames_family_index("nvrtc"));
	ck_assert_int_eq(libnames_dependent_fit(&nvrtc, builtins, "libnvrtc-builtins.so.13.0"), 2);
	/* NVRTC's builtins are of NVRTC's own release: another major is never the one it asks for. */
	ck_assert_int_eq(libnames_dependent_fit(&nvrtc, builtins, "libnvrtc-builtins.so.12.9"), -1);
	ck_assert_int_eq(libnames_dependent_fit(&nvrtc, builtins, "libnvrtc-builtins.so.130"), -1);
	ck_assert_int_eq(libnames_dependent_fit(&nvrtc, builtins, "libnvrtc-builtins.so"), -1);
	/* CUPTI's perf library has no version, and CUPTI asks for it so. */
	struct libname_match cupti;
	int perf = libnames_family_index("nvperf_host");
	ck_assert_int_eq(libnames_match_linux("libcupti.so.13", &cupti), libnames_family_index("cupti"));
	ck_assert_int_eq(libnames_dependent_fit(&cupti, perf, "libnvperf_host.so"), 2);
	ck_assert_int_eq(libnames_dependent_fit(&cupti, perf, "libnvperf_host.so.13"), -1);
	/* Another component's library may be of another major: cuFFT 12 (CUDA 13) asks for NVRTC 13. */
	struct libname_match cufft;
	int nvrtc_family = libnames_family_index("nvrtc");
	ck_assert_int_eq(libnames_match_linux("libcufft.so.12", &cufft), libnames_family_index("cufft"));
	ck_assert_int_eq(libnames_dependent_fit(&cufft, nvrtc_family, "libnvrtc.so.13"), 1);
	ck_assert_int_eq(libnames_dependent_fit(&cufft, nvrtc_family, "libnvrtc.so.12"), 1);
	ck_assert_int_eq(libnames_dependent_fit(&cufft, nvrtc_family, "libnvrtc.so"), 0);
	ck_assert_int_eq(libnames_dependent_fit(&nvrtc, builtins, "libnvrtc-builtins.alt.so.13.0"), -1);
	ck_assert_int_eq(libnames_dependent_fit(&alt, builtins, "libnvrtc-builtins.alt.so.13.0"), 2);
	ck_assert_int_eq(libnames_dependent_fit(&nvrtc, builtins, "libnvrtc-builtins-2dc4bf68.so.13.0"), -1);
	ck_assert_int_eq(libnames_dependent_fit(&nvrtc, builtins, "libnvrtc.so.13"), -1);
}
END_TEST

START_TEST(test_driver_families_are_exactly_cuda_and_nvidia_ml)
{
	for (size_t i = 0; i < libnames_count; i++) {
		bool expected = strcmp(libnames[i].family, "cuda") == 0 || strcmp(libnames[i].family, "nvidia-ml") == 0;
		ck_assert_msg(libnames_is_driver((int)i) == expected, "%s: is_driver %d", libnames[i].family, !expected);
	}
	ck_assert(!libnames_is_driver(-1));
	ck_assert(!libnames_is_driver((int)libnames_count));
}
END_TEST

START_TEST(test_family_index_of_unknown_family_is_minus_one)
{
	ck_assert_int_ge(libnames_family_index("nvrtc"), 0);
	ck_assert_str_eq(libnames[libnames_family_index("nvrtc-builtins")].family, "nvrtc-builtins");
	ck_assert_int_eq(libnames_family_index("bogus"), -1);
	ck_assert_int_eq(libnames_family_index(""), -1);
	ck_assert_int_eq(libnames_family_index("NVRTC"), -1);
	ck_assert_int_eq(libnames_family_index(NULL), -1);
}
END_TEST

START_TEST(test_basename_is_the_part_after_the_last_slash)
{
	ck_assert_str_eq(libnames_basename("/usr/lib/libnvrtc.so.13"), "libnvrtc.so.13");
	ck_assert_str_eq(libnames_basename("libnvrtc.so.13"), "libnvrtc.so.13");
	ck_assert_str_eq(libnames_basename("a/b/"), "");
	ck_assert_str_eq(libnames_basename("/"), "");
	ck_assert_str_eq(libnames_basename(""), "");
	ck_assert_ptr_null(libnames_basename(NULL));
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("libnames");
	TCase *tc = tcase_create("libnames");
	tcase_add_loop_test(tc, test_linux_names_match_their_family, 0, sizeof(linux_matches) / sizeof(linux_matches[0]));
	tcase_add_loop_test(tc, test_windows_names_match_their_family_in_any_case, 0,
			    sizeof(windows_matches) / sizeof(windows_matches[0]));
	tcase_add_loop_test(tc, test_linux_names_outside_the_grammar_do_not_match, 0,
			    sizeof(linux_refusals) / sizeof(linux_refusals[0]));
	tcase_add_loop_test(tc, test_windows_names_outside_the_grammar_do_not_match, 0,
			    sizeof(windows_refusals) / sizeof(windows_refusals[0]));
	tcase_add_test(tc, test_matchers_accept_no_match_record_and_null_names);
	tcase_add_test(tc, test_every_family_name_is_unique);
	tcase_add_test(tc, test_every_stem_and_prefix_matches_its_own_row);
	tcase_add_test(tc, test_every_needed_and_runtime_family_exists);
	tcase_add_test(tc, test_foreach_family_stops_when_the_visitor_says_so);
	tcase_add_test(tc, test_a_question_mark_marks_an_optional_run_time_dependent);
	tcase_add_test(tc, test_dependent_fit_prefers_the_parents_major_and_alt_ness);
	tcase_add_test(tc, test_driver_families_are_exactly_cuda_and_nvidia_ml);
	tcase_add_test(tc, test_family_index_of_unknown_family_is_minus_one);
	tcase_add_test(tc, test_basename_is_the_part_after_the_last_slash);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
