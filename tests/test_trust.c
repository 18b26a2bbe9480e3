/* The trust rule for the places the runtime reaches on its own (src/trust.h): wheel siblings (and
   the folders above them up to site-packages/nvidia) and NVINTERPOSE_PATH entries, and the file it
   would load, are skipped with a warning when someone other than the effective user, root or a
   user whose NVIDIA code the process already runs may write to them or owns them; registered
   origins never are. The layouts users have (an admin's conda or spack tree, a setgid project
   environment, a container image made group-writable for arbitrary uids) keep working. Needs root
   (it hands folders to other users); Check forks each test, so the registry starts empty. */
#define _GNU_SOURCE
#include "common.h"
#include "standins.h"

#include "config.h"
#include "libnames.h"
#include "log.h"
#include "registry.h"
#include "search.h"
#include "trust.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME "libnvJitLink.so.13"
#define NOBODY 65534
#define ADMIN 5000
#define USER 6000

/* ---- helpers ------------------------------------------------------------------------------------ */

static void own(const char *path, unsigned uid, unsigned gid, mode_t mode)
{
	ck_assert_msg(chown(path, uid, gid) == 0, "chown %s", path);
	ck_assert_msg(chmod(path, mode) == 0, "chmod %s", path); /* after chown, which drops set-id bits */
}

/* Every folder from root down to path (inclusive) and, with a file, path/NAME: owned and moded. */
static void own_tree(const char *root, const char *relative, unsigned uid, unsigned gid, mode_t mode, bool with_file)
{
	char *path = test_format("%s/%s", root, relative);
	test_mkdirs(path);
	for (char *s = path + strlen(root) + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char saved = *s;
			*s = '\0';
			own(path, uid, gid, mode);
			*s = saved;
		}
		if (!*s)
			break;
	}
	if (with_file) {
		char *file = test_format("%s/%s", path, NAME);
		test_write_file(file, "");
		own(file, uid, gid, mode & S_IWGRP ? 0664 : 0644); /* a group-writable tree's files are too */
	}
}

static struct platform_identity person(unsigned long long user, int group_count, ...)
{
	struct platform_identity who = { .known = true, .user = user };
	va_list groups;
	va_start(groups, group_count);
	for (int i = 0; i < group_count; i++)
		who.groups[who.group_count++] = va_arg(groups, unsigned long long);
	va_end(groups);
	return who;
}

struct visits {
	size_t count;
	char *paths[16];
	enum search_step steps[16];
};

static bool record_visit(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	(void)loader_step;
	struct visits *visits = arg;
	ck_assert_uint_lt(visits->count, 16);
	visits->paths[visits->count] = strdup(path);
	visits->steps[visits->count++] = step;
	return false;
}

/* The walk for NAME with origin registered (NULL: none), for who (NULL: this process); what it
   wrote on stderr at warn level in *warnings. */
static struct visits walk(const char *origin, const struct platform_identity *who, char **warnings)
{
	struct visits visits = { 0 };
	if (origin)
		ck_assert_int_eq(registry_add_origin(libnames_family_index("nvrtc"), origin), REGISTRY_ADDED);
	struct search_request request = { .name = NAME, .who = who };
	log_set_level(LOG_WARN);
	struct test_capture capture = test_capture_stderr();
	search_candidates(&request, record_visit, &visits);
	char *output = test_captured(&capture);
	log_set_level(LOG_ERROR);
	if (warnings)
		*warnings = output;
	return visits;
}

static bool visited(const struct visits *visits, const char *folder, enum search_step step)
{
	char *path = test_format("%s/%s", folder, NAME);
	for (size_t i = 0; i < visits->count; i++)
		if (strcmp(visits->paths[i], path) == 0 && visits->steps[i] == step)
			return true;
	return false;
}

static void set_nvinterpose_path(const char *folder)
{
	static struct config config;
	memset(&config, 0, sizeof(config));
	config.policy = POLICY_FALLBACK;
	ck_assert(config_add_path(&config, folder));
	config_set(&config);
}

/* A wheel tree: ROOT/site-packages/nvidia/cuda_nvrtc/lib (the origin) and nvjitlink/lib (the
   sibling holding NAME), all owned by uid:gid with mode. */
struct wheel {
	char *root, *nvidia, *origin, *sibling;
};

static struct wheel wheel_tree(unsigned uid, unsigned gid, mode_t mode)
{
	struct wheel wheel = { .root = test_tmpdir() };
	wheel.nvidia = test_format("%s/site-packages/nvidia", wheel.root);
	wheel.origin = test_format("%s/cuda_nvrtc/lib", wheel.nvidia);
	wheel.sibling = test_format("%s/nvjitlink/lib", wheel.nvidia);
	test_mkdirs(wheel.nvidia);
	own(wheel.nvidia, uid, gid, mode);
	own_tree(wheel.nvidia, "cuda_nvrtc/lib", uid, gid, mode, false);
	own_tree(wheel.nvidia, "nvjitlink/lib", uid, gid, mode, true);
	return wheel;
}

/* ---- the rule itself ---------------------------------------------------------------------------- */

static const struct {
	const char *title;
	unsigned uid, gid;
	mode_t mode;
	bool is_file;
	unsigned long long allowed_owner; /* 0: none besides the user and root */
	enum trust_verdict expected;
} rule_rows[] = {
	{ "own folder", USER, USER, 0755, false, 0, TRUST_OK },
	{ "root's folder", 0, 0, 0755, false, 0, TRUST_OK },
	{ "an origin owner's folder", ADMIN, ADMIN, 0755, false, ADMIN, TRUST_OK },
	{ "another user's folder", NOBODY, NOBODY, 0755, false, 0, TRUST_OWNER },
	{ "another user's folder, another owner allowed", NOBODY, NOBODY, 0755, false, ADMIN, TRUST_OWNER },
	{ "world-writable folder", USER, USER, 0777, false, 0, TRUST_WORLD_WRITABLE },
	{ "world-writable folder with the sticky bit", 0, 0, 01777, false, 0, TRUST_OK },
	{ "world-writable file (the sticky bit means nothing there)", USER, USER, 01666, true, 0, TRUST_WORLD_WRITABLE },
	{ "group-writable by the user's own group", USER, 7000, 02775, false, 0, TRUST_OK },
	{ "group-writable by another group", USER, 7001, 0775, false, 0, TRUST_GROUP_WRITABLE },
	{ "group-writable by another group, sticky", USER, 7001, 01775, false, 0, TRUST_OK },
	{ "group-writable file of another group", USER, 7001, 0664, true, 0, TRUST_GROUP_WRITABLE },
	{ "read-only file of the user", USER, USER, 0444, true, 0, TRUST_OK },
};

START_TEST(test_rule_judges_owner_and_who_else_may_write)
{
	char *path = test_format("%s/x", test_tmpdir());
	if (rule_rows[_i].is_file)
		test_write_file(path, "");
	else
		test_mkdirs(path);
	own(path, rule_rows[_i].uid, rule_rows[_i].gid, rule_rows[_i].mode);
	struct platform_identity who = person(USER, 2, (unsigned long long)USER, 7000ull);
	struct trust_owners owners = { 0 };
	if (rule_rows[_i].allowed_owner)
		owners.owner[owners.count++] = rule_rows[_i].allowed_owner;
	enum trust_verdict verdict = trust_check(&who, &owners, path, rule_rows[_i].is_file);
	ck_assert_msg(verdict == rule_rows[_i].expected, "%s: %d (%s), expected %d", rule_rows[_i].title, verdict,
		      trust_rule_text(verdict), rule_rows[_i].expected);
}
END_TEST

START_TEST(test_rule_is_not_applied_without_identity_facts)
{
	/* Windows: platform_current_identity knows nothing, and the places are used as before. */
	struct platform_identity unknown = { .known = false };
	char *path = test_format("%s/x", test_tmpdir());
	test_mkdirs(path);
	own(path, NOBODY, NOBODY, 0777);
	ck_assert_int_eq(trust_check(&unknown, NULL, path, false), TRUST_NOT_APPLIED);
	ck_assert(trust_accept(TRUST_NOT_APPLIED, path, "wheel sibling"));
}
END_TEST

START_TEST(test_a_folder_that_cannot_be_examined_is_not_used)
{
	struct platform_identity who = person(USER, 0);
	ck_assert_int_eq(trust_check(&who, NULL, "/nonexistent/nvinterpose-trust", false), TRUST_UNEXAMINED);
}
END_TEST

/* ---- wheel siblings ----------------------------------------------------------------------------- */

START_TEST(test_sibling_owned_by_another_user_is_skipped_with_a_warning)
{
	struct wheel wheel = wheel_tree(0, 0, 0755);
	char *evil = test_format("%s/zz_evil", wheel.nvidia);
	own_tree(wheel.nvidia, "zz_evil/lib", NOBODY, NOBODY, 0755, true);
	char *warnings;
	struct visits visits = walk(wheel.origin, NULL, &warnings);
	ck_assert_msg(visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "the root-owned sibling: %zu visits", visits.count);
	ck_assert_msg(!visited(&visits, test_format("%s/lib", evil), SEARCH_WHEEL_SIBLING), "nobody's sibling was visited");
	ck_assert_msg(test_contains(warnings, evil) && test_contains(warnings, trust_rule_text(TRUST_OWNER)) &&
		      test_contains(warnings, "wheel sibling"),
		      "%s", warnings);
}
END_TEST

START_TEST(test_world_writable_wheel_level_skips_every_sibling_but_not_the_origin)
{
	struct wheel wheel = wheel_tree(0, 0, 0755);
	own(wheel.nvidia, 0, 0, 0777);
	own_tree(wheel.nvidia, "cuda_nvrtc/lib", 0, 0, 0755, true);
	char *warnings;
	struct visits visits = walk(wheel.origin, NULL, &warnings);
	ck_assert_msg(visited(&visits, wheel.origin, SEARCH_ORIGIN), "the origin itself is not filtered");
	ck_assert_msg(!visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "a sibling under a world-writable nvidia/");
	ck_assert_msg(test_contains(warnings, wheel.nvidia) && test_contains(warnings, trust_rule_text(TRUST_WORLD_WRITABLE)), "%s",
		      warnings);
}
END_TEST

START_TEST(test_sticky_world_writable_folders_are_used_but_not_a_file_another_user_planted)
{
	struct wheel wheel = wheel_tree(0, 0, 0755);
	own(wheel.nvidia, 0, 0, 01777);
	own_tree(wheel.nvidia, "aa_shared/lib", 0, 0, 01777, false);
	char *planted = test_format("%s/aa_shared/lib/%s", wheel.nvidia, NAME);
	test_write_file(planted, "");
	own(planted, NOBODY, NOBODY, 0644);
	char *warnings;
	struct visits visits = walk(wheel.origin, NULL, &warnings);
	ck_assert_msg(visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "a sibling below a sticky nvidia/");
	ck_assert_msg(!visited(&visits, test_format("%s/aa_shared/lib", wheel.nvidia), SEARCH_WHEEL_SIBLING), "the planted file");
	ck_assert_msg(test_contains(warnings, planted), "%s", warnings);
}
END_TEST

START_TEST(test_a_place_is_reported_once)
{
	struct wheel wheel = wheel_tree(0, 0, 0755);
	own_tree(wheel.nvidia, "zz_evil/lib", NOBODY, NOBODY, 0755, true);
	char *first, *second;
	walk(wheel.origin, NULL, &first);
	struct search_request request = { .name = NAME };
	struct visits visits = { 0 };
	log_set_level(LOG_WARN);
	struct test_capture capture = test_capture_stderr();
	search_candidates(&request, record_visit, &visits);
	second = test_captured(&capture);
	ck_assert_msg(test_count(first, "zz_evil") == 1 && test_count(second, "zz_evil") == 0, "first: %s\nsecond: %s", first, second);
}
END_TEST

START_TEST(test_registered_origin_is_never_filtered)
{
	char *root = test_tmpdir(), *origin = test_format("%s/anywhere/lib", root);
	own_tree(root, "anywhere/lib", NOBODY, NOBODY, 0777, true);
	struct visits visits = walk(origin, NULL, NULL);
	ck_assert_msg(visited(&visits, origin, SEARCH_ORIGIN), "the loader already loaded code from it");
}
END_TEST

/* ---- NVINTERPOSE_PATH -------------------------------------------------------------------------- */

START_TEST(test_nvinterpose_path_entry_writable_by_everyone_is_skipped)
{
	char *root = test_tmpdir(), *entry = test_format("%s/extra", root);
	own_tree(root, "extra", 0, 0, 0777, true);
	set_nvinterpose_path(entry);
	char *warnings;
	struct visits visits = walk(NULL, NULL, &warnings);
	ck_assert_uint_eq(visits.count, 0);
	ck_assert_msg(test_contains(warnings, entry) && test_contains(warnings, "NVINTERPOSE_PATH"), "%s", warnings);
	own(entry, 0, 0, 0755);
	visits = walk(NULL, NULL, NULL);
	ck_assert_msg(visited(&visits, entry, SEARCH_NVINTERPOSE_PATH), "the same entry, 0755");
}
END_TEST

START_TEST(test_nvinterpose_path_entry_of_another_user_is_used_only_when_an_origin_is_theirs)
{
	char *root = test_tmpdir(), *entry = test_format("%s/admin/cudnn/lib", root), *origin = test_format("%s/admin/cuda/lib64", root);
	own_tree(root, "admin/cudnn/lib", ADMIN, ADMIN, 0755, true);
	own_tree(root, "admin/cuda/lib64", ADMIN, ADMIN, 0755, false);
	set_nvinterpose_path(entry);
	struct platform_identity user = person(USER, 1, (unsigned long long)USER);
	struct visits visits = walk(NULL, &user, NULL);
	ck_assert_msg(!visited(&visits, entry, SEARCH_NVINTERPOSE_PATH), "an admin's folder, no origin of theirs");
	visits = walk(origin, &user, NULL);
	ck_assert_msg(visited(&visits, entry, SEARCH_NVINTERPOSE_PATH), "the admin's folder once their toolkit is an origin");
}
END_TEST

/* ---- the layouts users have --------------------------------------------------------------------- */

START_TEST(test_conda_environment_owned_by_an_admin_account_keeps_its_siblings)
{
	struct wheel wheel = wheel_tree(ADMIN, ADMIN, 0755);
	struct platform_identity user = person(USER, 1, (unsigned long long)USER);
	struct visits visits = walk(wheel.origin, &user, NULL);
	ck_assert_msg(visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "the admin owns the origin too");
	/* conda's lib/ (or a toolkit's lib64) as the origin: not a wheel folder, no siblings, itself used. */
	char *lib = test_format("%s/lib", wheel.root);
	own_tree(wheel.root, "lib", ADMIN, ADMIN, 0755, true);
	visits = walk(lib, &user, NULL);
	ck_assert_msg(visited(&visits, lib, SEARCH_ORIGIN), "conda's lib/");
}
END_TEST

START_TEST(test_group_writable_setgid_project_environment_serves_its_group_only)
{
	struct wheel wheel = wheel_tree(6001, 7000, 02775);
	struct platform_identity member = person(6002, 2, 6002ull, 7000ull), outsider = person(6003, 1, 6003ull),
				 root = person(0, 1, 0ull);
	struct visits visits = walk(wheel.origin, &member, NULL);
	ck_assert_msg(visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "a member of the project's group");
	struct search_request request = { .name = NAME, .who = &outsider };
	visits = (struct visits){ 0 };
	search_candidates(&request, record_visit, &visits);
	ck_assert_msg(!visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "a user outside the group");
	request.who = &root;
	visits = (struct visits){ 0 };
	search_candidates(&request, record_visit, &visits);
	ck_assert_msg(!visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "root, whom the group's members could become");
}
END_TEST

START_TEST(test_container_image_made_group_writable_for_arbitrary_uids_is_used)
{
	/* The image's builder (uid 1001) installed the wheels and made them group 0 and group-writable;
	   the platform runs the container as an arbitrary uid in group 0 (or as root). */
	struct wheel wheel = wheel_tree(1001, 0, 0775);
	struct platform_identity arbitrary = person(1000650000, 1, 0ull), root = person(0, 1, 0ull);
	struct visits visits = walk(wheel.origin, &arbitrary, NULL);
	ck_assert_msg(visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "an arbitrary uid of group 0");
	struct search_request request = { .name = NAME, .who = &root };
	visits = (struct visits){ 0 };
	search_candidates(&request, record_visit, &visits);
	ck_assert_msg(visited(&visits, wheel.sibling, SEARCH_WHEEL_SIBLING), "root in the same image");
}
END_TEST

/* ---- with the runtime: the two cases that loaded code nobody trusted --------------------------- */

START_TEST(test_runtime_loads_no_sibling_another_user_created_under_a_world_writable_nvidia)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *nvidia = test_format("%s/site-packages/nvidia", wheel.root), *evil = test_format("%s/zz_evil/lib", nvidia);
	ck_assert_int_eq(chmod(nvidia, 0777), 0);
	test_mkdirs(evil);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", evil), 666, NULL);
	own_tree(nvidia, "zz_evil/lib", NOBODY, NOBODY, 0755, false);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=warn", NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "skipped (wheel sibling)") && test_contains(run.output, nvidia), "%s", run.output);
}
END_TEST

START_TEST(test_runtime_loads_nothing_from_an_nvinterpose_path_entry_anyone_may_write)
{
	struct standin_wheel wheel = standin_nvrtc_wheel(0);
	char *extra = test_format("%s/extra", wheel.root);
	test_mkdirs(extra);
	standin_builtins(test_format("%s/libnvrtc-builtins.so.77.1", extra), 666, NULL);
	ck_assert_int_eq(chmod(extra, 0777), 0);
	const char *env[] = { standin_preload(), "NVINTERPOSE_LOG=warn", test_format("NVINTERPOSE_PATH=%s", extra), NULL };
	struct test_run run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: -1"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "skipped (NVINTERPOSE_PATH)"), "%s", run.output);
	ck_assert_int_eq(chmod(extra, 0755), 0);
	run = test_probe(env, test_format("call %s nvrtc_like_compile", wheel.nvrtc));
	ck_assert_msg(test_contains(run.output, "call nvrtc_like_compile: 666"), "the same entry, 0755: %s", run.output);
}
END_TEST

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP: needs root, to hand folders to other users (chown)\n");
		return TEST_SKIP;
	}
	Suite *suite = suite_create("trust");
	TCase *tc = tcase_create("rooms");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_rule_judges_owner_and_who_else_may_write, 0, (int)(sizeof(rule_rows) / sizeof(rule_rows[0])));
	tcase_add_test(tc, test_rule_is_not_applied_without_identity_facts);
	tcase_add_test(tc, test_a_folder_that_cannot_be_examined_is_not_used);
	tcase_add_test(tc, test_sibling_owned_by_another_user_is_skipped_with_a_warning);
	tcase_add_test(tc, test_world_writable_wheel_level_skips_every_sibling_but_not_the_origin);
	tcase_add_test(tc, test_sticky_world_writable_folders_are_used_but_not_a_file_another_user_planted);
	tcase_add_test(tc, test_a_place_is_reported_once);
	tcase_add_test(tc, test_registered_origin_is_never_filtered);
	tcase_add_test(tc, test_nvinterpose_path_entry_writable_by_everyone_is_skipped);
	tcase_add_test(tc, test_nvinterpose_path_entry_of_another_user_is_used_only_when_an_origin_is_theirs);
	tcase_add_test(tc, test_conda_environment_owned_by_an_admin_account_keeps_its_siblings);
	tcase_add_test(tc, test_group_writable_setgid_project_environment_serves_its_group_only);
	tcase_add_test(tc, test_container_image_made_group_writable_for_arbitrary_uids_is_used);
	suite_add_tcase(suite, tc);
	/* The runtime preloaded in child processes: the preload suite's (CK_RUN_CASE picks one case). */
	TCase *runtime = tcase_create("runtime");
	tcase_set_timeout(runtime, 120);
	tcase_add_test(runtime, test_runtime_loads_no_sibling_another_user_created_under_a_world_writable_nvidia);
	tcase_add_test(runtime, test_runtime_loads_nothing_from_an_nvinterpose_path_entry_anyone_may_write);
	suite_add_tcase(suite, runtime);
	return test_main(suite);
}
