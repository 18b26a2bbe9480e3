/* The candidate order of a policy: the loader's search (src/loader), the caller's own folder, the
   registered origins, their wheel siblings, then NVINTERPOSE_PATH; each folder once, only folders holding the
   file, and the visitor may stop the walk. Check forks each test: the registry starts empty. */
#define _GNU_SOURCE
#include "common.h"

#include "config.h"
#include "libnames.h"
#include "registry.h"
#include "search.h"
#include "standins.h"

#include <dirent.h>
#include <dlfcn.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "libnvJitLink.so.13"

/* The listings of one folder, counted: the rooms linked into this program call this opendir. */
static const char *counted_folder;
static int listings;

DIR *opendir(const char *name)
{
	static DIR *(*real_opendir)(const char *);
	if (!real_opendir)
		real_opendir = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	if (counted_folder && strcmp(name, counted_folder) == 0)
		listings++;
	return real_opendir(name);
}
#define MAX_VISITS 32

struct visits {
	size_t count;
	size_t stop_after; /* 0: never stop */
	char *paths[MAX_VISITS];
	enum search_step steps[MAX_VISITS];
};

static bool record_visit(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	(void)loader_step;
	struct visits *visits = arg;
	ck_assert_uint_lt(visits->count, MAX_VISITS);
	visits->paths[visits->count] = strdup(path);
	visits->steps[visits->count] = step;
	visits->count++;
	return visits->count == visits->stop_after;
}

/* mkdir -p folder and put an empty NAME in it; returns folder. */
static char *folder_with_file(const char *folder)
{
	test_mkdirs(folder);
	test_write_file(test_format("%s/%s", folder, NAME), "");
	return (char *)folder;
}

static void set_nvinterpose_path(const char *const *folders, size_t n)
{
	static struct config config;
	memset(&config, 0, sizeof(config));
	config.policy = POLICY_FALLBACK;
	for (size_t i = 0; i < n; i++)
		ck_assert(config_add_path(&config, folders[i]));
	config_set(&config);
}

/* An asker whose search the loader listed itself: these folders, in order. */
static const struct loader_object *listed_asker(const char *const *dirs, size_t count)
{
	struct loader_list *list = calloc(1, sizeof(*list));
	struct loader_object *asker = calloc(1, sizeof(*asker));
	*list = (struct loader_list){ dirs, count };
	asker->listed = list;
	return asker;
}

static const struct loader_process no_process;

static void register_origin(const char *folder)
{
	ck_assert_int_eq(registry_add_origin(libnames_family_index("nvrtc"), folder), REGISTRY_ADDED);
}

static void assert_visit(const struct visits *visits, size_t i, const char *folder, enum search_step step)
{
	char *expected = test_format("%s/%s", folder, NAME);
	ck_assert_msg(i < visits->count, "visit %zu missing: expected %s", i, expected);
	ck_assert_msg(strcmp(visits->paths[i], expected) == 0 && visits->steps[i] == step,
		      "visit %zu: %s (%s), expected %s (%s)", i, visits->paths[i], search_step_name(visits->steps[i]),
		      expected, search_step_name(step));
}

START_TEST(test_candidates_follow_the_loader_caller_folder_origins_siblings_then_nvinterpose_path)
{
	char *root = test_tmpdir();
	const char *caller_dirs[] = { folder_with_file(test_format("%s/caller1", root)),
				      folder_with_file(test_format("%s/caller2", root)) };
	char *caller_folder = folder_with_file(test_format("%s/caller-folder", root));
	char *origin1 = folder_with_file(test_format("%s/origin1", root));
	char *wheel_origin = folder_with_file(test_format("%s/site-packages/nvidia/cuda_nvrtc/lib", root));
	char *origin2 = folder_with_file(test_format("%s/origin2", root));
	char *sibling1 = folder_with_file(test_format("%s/site-packages/nvidia/cuda_runtime/lib", root));
	char *sibling2 = folder_with_file(test_format("%s/site-packages/nvidia/nvjitlink/lib", root));
	const char *path[] = { folder_with_file(test_format("%s/path2", root)),
			       folder_with_file(test_format("%s/path1", root)) };
	register_origin(origin1);
	register_origin(wheel_origin);
	register_origin(origin2);
	set_nvinterpose_path(path, 2);

	struct search_request request = { .name = NAME, .lookup = LOADER_BARE_NAME, .asker = listed_asker(caller_dirs, 2), .process = &no_process,
					  .caller_folder = caller_folder };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	assert_visit(&visits, 0, caller_dirs[0], SEARCH_LOADER);
	assert_visit(&visits, 1, caller_dirs[1], SEARCH_LOADER);
	assert_visit(&visits, 2, caller_folder, SEARCH_CALLER_FOLDER);
	assert_visit(&visits, 3, origin1, SEARCH_ORIGIN);
	assert_visit(&visits, 4, wheel_origin, SEARCH_ORIGIN);
	assert_visit(&visits, 5, origin2, SEARCH_ORIGIN);
	assert_visit(&visits, 6, sibling1, SEARCH_WHEEL_SIBLING);
	assert_visit(&visits, 7, sibling2, SEARCH_WHEEL_SIBLING);
	assert_visit(&visits, 8, path[0], SEARCH_NVINTERPOSE_PATH);
	assert_visit(&visits, 9, path[1], SEARCH_NVINTERPOSE_PATH);
	ck_assert_uint_eq(visits.count, 10);
}
END_TEST

START_TEST(test_without_an_asker_the_loader_is_not_searched)
{
	char *root = test_tmpdir();
	char *origin = folder_with_file(test_format("%s/origin", root));
	register_origin(origin);
	struct search_request request = { .name = NAME };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_uint_eq(visits.count, 1);
	assert_visit(&visits, 0, origin, SEARCH_ORIGIN);
}
END_TEST

START_TEST(test_a_folder_is_visited_once_across_steps_and_symlinks)
{
	char *root = test_tmpdir();
	char *folder = folder_with_file(test_format("%s/lib", root));
	char *link = test_format("%s/link", root);
	ck_assert_int_eq(symlink(folder, link), 0);
	char *other = folder_with_file(test_format("%s/other", root));
	const char *caller_dirs[] = { folder, link, test_format("%s/", folder) };
	register_origin(link);
	register_origin(other);
	const char *path[] = { folder, link, other };
	set_nvinterpose_path(path, 3);
	struct search_request request = { .name = NAME, .lookup = LOADER_BARE_NAME, .asker = listed_asker(caller_dirs, 3), .process = &no_process,
					  .caller_folder = link };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_uint_eq(visits.count, 2);
	assert_visit(&visits, 0, folder, SEARCH_LOADER);
	assert_visit(&visits, 1, other, SEARCH_ORIGIN);
}
END_TEST

START_TEST(test_only_folders_holding_the_file_are_visited)
{
	char *root = test_tmpdir();
	const char *empty = test_mkdirs(test_format("%s/empty", root));
	const char *shadow = test_mkdirs(test_format("%s/shadow/%s", root, NAME)); /* a folder of that name */
	(void)shadow;
	char *missing = test_format("%s/missing", root);
	char *holder = folder_with_file(test_format("%s/holder", root));
	const char *caller_dirs[] = { empty, test_format("%s/shadow", root), missing, holder };
	struct search_request request = { .name = NAME, .lookup = LOADER_BARE_NAME, .asker = listed_asker(caller_dirs, 4), .process = &no_process };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_uint_eq(visits.count, 1);
	assert_visit(&visits, 0, holder, SEARCH_LOADER);
}
END_TEST

START_TEST(test_visitor_returning_true_stops_the_walk)
{
	char *root = test_tmpdir();
	char *caller_folder = folder_with_file(test_format("%s/caller-folder", root));
	char *origin1 = folder_with_file(test_format("%s/origin1", root));
	char *origin2 = folder_with_file(test_format("%s/origin2", root));
	register_origin(origin1);
	register_origin(origin2);
	const char *path[] = { folder_with_file(test_format("%s/path", root)) };
	set_nvinterpose_path(path, 1);
	struct search_request request = { .name = NAME, .caller_folder = caller_folder };
	struct visits visits = { .stop_after = 2 };
	ck_assert(search_candidates(&request, record_visit, &visits));
	ck_assert_uint_eq(visits.count, 2);
	assert_visit(&visits, 1, origin1, SEARCH_ORIGIN);
}
END_TEST

START_TEST(test_names_with_a_slash_or_empty_produce_no_visit)
{
	char *root = test_tmpdir();
	char *folder = folder_with_file(test_format("%s/lib", root));
	folder_with_file(test_format("%s/lib/sub", root));
	register_origin(folder);
	const char *names[] = { "", "sub/" NAME, "/" NAME, "./" NAME, NULL };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct search_request request = { .name = names[i], .caller_folder = folder };
		struct visits visits = { 0 };
		ck_assert(!search_candidates(&request, record_visit, &visits));
		ck_assert_msg(visits.count == 0, "name '%s' visited %s", names[i] ? names[i] : "(null)",
			      visits.count ? visits.paths[0] : "");
	}
}
END_TEST

START_TEST(test_wheel_sibling_is_found_beside_a_registered_origin)
{
	char *root = test_tmpdir();
	const char *nvrtc = test_mkdirs(test_format("%s/site-packages/nvidia/cuda_nvrtc/lib", root));
	char *nvjitlink = folder_with_file(test_format("%s/site-packages/nvidia/nvjitlink/lib", root));
	test_mkdirs(test_format("%s/site-packages/nvidia/cublas/include", root)); /* no lib: skipped */
	register_origin(nvrtc);
	struct search_request request = { .name = NAME };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_uint_eq(visits.count, 1);
	assert_visit(&visits, 0, nvjitlink, SEARCH_WHEEL_SIBLING);
}
END_TEST

START_TEST(test_wheel_sibling_is_found_beside_the_caller_folder)
{
	char *root = test_tmpdir();
	const char *cusparse = test_mkdirs(test_format("%s/site-packages/nvidia/cusparse/lib", root));
	char *nvjitlink = folder_with_file(test_format("%s/site-packages/nvidia/nvjitlink/lib", root));
	struct search_request request = { .name = NAME, .caller_folder = cusparse };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_uint_eq(visits.count, 1);
	assert_visit(&visits, 0, nvjitlink, SEARCH_WHEEL_SIBLING);
}
END_TEST

/* Siblings are visited in byte order (strcmp: "Zeta" before "alpha"), also in a process whose
   locale collates otherwise (en_US.UTF-8 puts "alpha" first), as the inspector predicts. */
START_TEST(test_wheel_siblings_come_in_byte_order_whatever_the_locale)
{
	char *locales = standin_collating_locales();
	if (!locales)
		return;
	char *root = test_tmpdir();
	const char *caller = test_mkdirs(test_format("%s/site-packages/nvidia/cusparse/lib", root));
	char *zeta = folder_with_file(test_format("%s/site-packages/nvidia/Zeta/lib", root));
	char *alpha = folder_with_file(test_format("%s/site-packages/nvidia/alpha/lib", root));
	ck_assert_int_eq(setenv("LOCPATH", locales, 1), 0);
	ck_assert_ptr_nonnull(setlocale(LC_ALL, "en_US.UTF-8"));
	ck_assert_int_lt(strcoll("alpha", "Zeta"), 0); /* the locale would put alpha first */
	char **names = NULL;
	int n = platform_list_folder(test_format("%s/site-packages/nvidia", root), &names);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(names[0], "Zeta");
	ck_assert_str_eq(names[1], "alpha");
	ck_assert_str_eq(names[2], "cusparse");
	platform_free_names(names, n);
	struct search_request request = { .name = NAME, .caller_folder = caller };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_uint_eq(visits.count, 2);
	assert_visit(&visits, 0, zeta, SEARCH_WHEEL_SIBLING);
	assert_visit(&visits, 1, alpha, SEARCH_WHEEL_SIBLING);
	setlocale(LC_ALL, "C");
}
END_TEST

/* A wheel root, ROOT/site-packages/nvidia, whose listings are counted from now on, with cusparse/lib
   (the caller's folder, in *caller) and nvjitlink/lib holding NAME (in *sibling). */
static char *counted_wheel_root(const char **caller, char **sibling)
{
	char *nvidia = test_format("%s/site-packages/nvidia", test_tmpdir());
	*caller = test_mkdirs(test_format("%s/cusparse/lib", nvidia));
	*sibling = folder_with_file(test_format("%s/nvjitlink/lib", nvidia));
	counted_folder = nvidia;
	listings = 0;
	return nvidia;
}

/* The caller's folder and a registered origin in one wheel root: a walk lists the root once. */
START_TEST(test_a_walk_lists_a_wheel_root_once)
{
	const char *caller;
	char *sibling;
	char *nvidia = counted_wheel_root(&caller, &sibling);
	register_origin(test_mkdirs(test_format("%s/cuda_nvrtc/lib", nvidia)));
	struct search_request request = { .name = NAME, .caller_folder = caller };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_int_eq(listings, 1);
	ck_assert_uint_eq(visits.count, 1);
	assert_visit(&visits, 0, sibling, SEARCH_WHEEL_SIBLING);
	counted_folder = NULL;
}
END_TEST

/* A wheel root that has not changed for a while (its change time settled) is listed once in a
   process; a package folder added there changes it, and the next walk lists it again and finds
   what the new folder holds. */
START_TEST(test_a_settled_wheel_root_is_listed_again_only_once_it_changed)
{
	const char *caller;
	char *sibling;
	char *nvidia = counted_wheel_root(&caller, &sibling);
	sleep(2); /* settled: a change time over a second in the past (src/platform.h) */
	struct search_request request = { .name = NAME, .caller_folder = caller };
	for (int walk = 0; walk < 3; walk++) {
		struct visits visits = { 0 };
		ck_assert(!search_candidates(&request, record_visit, &visits));
		ck_assert_uint_eq(visits.count, 1);
	}
	ck_assert_int_eq(listings, 1);
	char *added = folder_with_file(test_format("%s/added/lib", nvidia));
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_int_eq(listings, 2);
	ck_assert_uint_eq(visits.count, 2);
	assert_visit(&visits, 0, added, SEARCH_WHEEL_SIBLING);
	assert_visit(&visits, 1, sibling, SEARCH_WHEEL_SIBLING);
	counted_folder = NULL;
}
END_TEST

START_TEST(test_folder_not_shaped_like_a_wheel_gets_no_siblings)
{
	char *root = test_tmpdir();
	register_origin(test_mkdirs(test_format("%s/site-packages/other/cuda_nvrtc/lib", root)));
	folder_with_file(test_format("%s/site-packages/other/nvjitlink/lib", root));
	register_origin(test_mkdirs(test_format("%s/nvidia/cuda_nvrtc/lib64", root)));
	folder_with_file(test_format("%s/nvidia/nvjitlink/lib64", root));
	folder_with_file(test_format("%s/nvidia/nvjitlink/lib", root));
	struct search_request request = { .name = NAME };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_msg(visits.count == 0, "visited %s", visits.count ? visits.paths[0] : "");
}
END_TEST

START_TEST(test_nvinterpose_path_entry_with_trailing_slash_gives_a_clean_path)
{
	char *root = test_tmpdir();
	char *folder = folder_with_file(test_format("%s/path", root));
	const char *path[] = { test_format("%s//", folder) };
	set_nvinterpose_path(path, 1);
	struct search_request request = { .name = NAME };
	struct visits visits = { 0 };
	ck_assert(!search_candidates(&request, record_visit, &visits));
	ck_assert_uint_eq(visits.count, 1);
	assert_visit(&visits, 0, folder, SEARCH_NVINTERPOSE_PATH);
}
END_TEST

static const struct {
	const char *folder;
	const char *parent; /* NULL: not a wheel folder */
} wheel_roots[] = {
	{ "/sp/nvidia/cuda_nvrtc/lib", "/sp/nvidia" },
	{ "/sp/nvidia/cuda_nvrtc/lib/", "/sp/nvidia" },
	{ "/sp/nvidia/cuda_nvrtc/lib//", "/sp/nvidia" },
	{ "/usr/lib/python3/site-packages/nvidia/cublas/lib", "/usr/lib/python3/site-packages/nvidia" },
	{ "/nvidia/cublas/lib", "/nvidia" },
	{ "/sp/nvidia/cuda_nvrtc/lib64", NULL },     /* the leaf is exactly lib */
	{ "/sp/nvidia/cuda_nvrtc/xlib", NULL },
	{ "/sp/nvidia/cuda_nvrtc/bin", NULL },       /* bin is the Windows leaf */
	{ "/sp/nvidia/lib", NULL },                  /* nvidia one level too low */
	{ "/sp/nvidia/cuda_nvrtc/x/lib", NULL },     /* nvidia one level too high */
	{ "/sp/nvidia/cuda_nvrtc/lib/lib", NULL },
	{ "/sp/nvidia//lib", NULL },                 /* no package folder between them */
	{ "/sp/nvidia_x/cuda_nvrtc/lib", NULL },
	{ "/sp/xnvidia/cuda_nvrtc/lib", NULL },
	{ "/sp/NVIDIA/cuda_nvrtc/lib", NULL },
	{ "/sp/other/cuda_nvrtc/lib", NULL },
	{ "cublas/lib", NULL },                      /* too short */
	{ "/cublas/lib", NULL },
	{ "/lib", NULL },
	{ "lib", NULL },
	{ "/", NULL },
	{ "", NULL },
};

START_TEST(test_wheel_root_is_the_nvidia_folder_two_levels_above_lib)
{
	char parent[256];
	const char *leaf = NULL;
	memset(parent, 0, sizeof(parent));
	bool found = search_wheel_root(wheel_roots[_i].folder, parent, sizeof(parent), &leaf);
	if (!wheel_roots[_i].parent) {
		ck_assert_msg(!found, "'%s' gave wheel root '%s'", wheel_roots[_i].folder, parent);
		return;
	}
	ck_assert_msg(found, "'%s' gave no wheel root", wheel_roots[_i].folder);
	ck_assert_str_eq(parent, wheel_roots[_i].parent);
	ck_assert_ptr_nonnull(leaf);
	ck_assert_str_eq(leaf, "lib");
}
END_TEST

START_TEST(test_wheel_root_refuses_a_buffer_too_small)
{
	char parent[10]; /* "/sp/nvidia" needs 11 */
	ck_assert(!search_wheel_root("/sp/nvidia/cublas/lib", parent, sizeof(parent), NULL));
	char fits[11];
	ck_assert(search_wheel_root("/sp/nvidia/cublas/lib", fits, sizeof(fits), NULL));
	ck_assert_str_eq(fits, "/sp/nvidia");
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("search");
	TCase *tc = tcase_create("search");
	tcase_add_test(tc, test_candidates_follow_the_loader_caller_folder_origins_siblings_then_nvinterpose_path);
	tcase_add_test(tc, test_without_an_asker_the_loader_is_not_searched);
	tcase_add_test(tc, test_a_folder_is_visited_once_across_steps_and_symlinks);
	tcase_add_test(tc, test_only_folders_holding_the_file_are_visited);
	tcase_add_test(tc, test_visitor_returning_true_stops_the_walk);
	tcase_add_test(tc, test_names_with_a_slash_or_empty_produce_no_visit);
	tcase_add_test(tc, test_wheel_sibling_is_found_beside_a_registered_origin);
	tcase_add_test(tc, test_wheel_sibling_is_found_beside_the_caller_folder);
	tcase_add_test(tc, test_wheel_siblings_come_in_byte_order_whatever_the_locale);
	tcase_add_test(tc, test_a_walk_lists_a_wheel_root_once);
	tcase_add_test(tc, test_a_settled_wheel_root_is_listed_again_only_once_it_changed);
	tcase_add_test(tc, test_folder_not_shaped_like_a_wheel_gets_no_siblings);
	tcase_add_test(tc, test_nvinterpose_path_entry_with_trailing_slash_gives_a_clean_path);
	tcase_add_loop_test(tc, test_wheel_root_is_the_nvidia_folder_two_levels_above_lib, 0,
			    sizeof(wheel_roots) / sizeof(wheel_roots[0]));
	tcase_add_test(tc, test_wheel_root_refuses_a_buffer_too_small);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
