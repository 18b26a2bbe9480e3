/* The caller's semantics, kept by every front: the probe run without the runtime and with it
   (preloaded and given to LD_AUDIT, the runtime as built and at -O0, since the hooks must keep the
   caller at every optimization; and attached late) prints the same, line for line, with the same
   exit status, and the run without it holds to what glibc documents. The rules: the caller's
   RUNPATH or RPATH and its $ORIGIN, $ORIGIN in the name, the same handle twice, dlopen(NULL),
   RTLD_NOLOAD, the loader's dlerror texts, a name ld.so.cache alone holds, dlmopen, RTLD_DEEPBIND.
   Where a plugin is asked for, once by a name the runtime passes on at once and once by an NVIDIA
   name it looks at first. */
#define _GNU_SOURCE
#include "common.h"
#include "libnames.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plugin names and their functions (the loop index of the tests that ask for one). */
static const char *const plugins[][2] = {
	{ "libplugin.so.77", "plugin_value" },
	{ "libnvrtc-builtins.so.77.1", "builtins_value" },
};
#define PLUGIN_KINDS 2

/* Before 2.34 the loader itself fails these under any audit library (libdl cannot be called from
   an audit namespace); on aarch64 before 2.35 (the launcher refuses --audit there). */
static bool audit_fronts(void)
{
#if defined(__aarch64__)
	return test_glibc_at_least(2, 35);
#else
	return test_glibc_at_least(2, 34);
#endif
}

/* Runs args without the runtime and under every front: the same output and status each time; the
   run without it holds expected. */
static void check_kept(const char *args, const char *expected)
{
	char *shim = test_format("%s/libattach-shim.so.77", test_tmpdir());
	test_build_library("attach_shim.c", shim, "libattach-shim.so.77", test_format("-DRUNTIME='\"%s\"'", test_setting("NVI_RUNTIME")));
	const char *fronts[][2] = {
		{ "preloaded", test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME")) },
		{ "preloaded, -O0", test_format("LD_PRELOAD=%s", test_setting("NVI_RUNTIME_O0")) },
		{ "attached late", test_format("LD_PRELOAD=%s", shim) },
		{ "LD_AUDIT", test_format("LD_AUDIT=%s", test_setting("NVI_RUNTIME")) },
		{ "LD_AUDIT, -O0", test_format("LD_AUDIT=%s", test_setting("NVI_RUNTIME_O0")) },
	};
	struct test_run plain = test_probe(NULL, args);
	ck_assert_msg(test_contains(plain.output, expected), "without the runtime, expected '%s' in:\n%s", expected, plain.output);
	for (size_t i = 0; i < (audit_fronts() ? 5 : 3); i++) {
		const char *env[] = { fronts[i][1], NULL };
		struct test_run run = test_probe(env, args);
		ck_assert_msg(strcmp(plain.output, run.output) == 0 && plain.status == run.status, "%s: without (status %d):\n%s\nwith (status %d):\n%s",
			      fronts[i][0], plain.status, plain.output, run.status, run.output);
	}
}

/* ROOT/sub/NAME: the plugin of the kind returning value. */
static char *plugin_in(const char *root, int kind, int value)
{
	char *path = test_format("%s/%s", test_mkdirs(test_format("%s/sub", root)), plugins[kind][0]);
	test_build_library("value.c", path, plugins[kind][0], test_format("-DVALUE_SYMBOL=%s -DVALUE=%d", plugins[kind][1], value));
	return path;
}

/* ROOT/libcaller.so.77 (tests/fixtures/caller.c), asking for name, linked with flags. */
static char *caller_in(const char *root, int kind, const char *name, const char *flags)
{
	char *path = test_format("%s/libcaller.so.77", root);
	test_build_library("caller.c", path, "libcaller.so.77",
			   test_format("-DPLUGIN='\"%s\"' -DPLUGIN_SYMBOL='\"%s\"' %s", name, plugins[kind][1], flags));
	return path;
}

static void check_callers_search_path(int kind, const char *dtags)
{
	char *root = test_tmpdir();
	plugin_in(root, kind, 5);
	char *caller = caller_in(root, kind, plugins[kind][0], test_format("-Wl,%s,-rpath,'$ORIGIN/sub'", dtags));
	check_kept(test_format("call %s caller_load", caller), "call caller_load: 5");
}

START_TEST(test_callers_runpath_and_origin_are_kept)
{
	check_callers_search_path(_i, "--enable-new-dtags");
}
END_TEST

START_TEST(test_callers_rpath_and_origin_are_kept)
{
	check_callers_search_path(_i, "--disable-new-dtags");
}
END_TEST

START_TEST(test_origin_in_the_name_is_the_callers_folder)
{
	char *root = test_tmpdir();
	plugin_in(root, _i, 6);
	char *caller = caller_in(root, _i, test_format("$ORIGIN/sub/%s", plugins[_i][0]), "");
	check_kept(test_format("call %s caller_load", caller), "call caller_load: 6");
}
END_TEST

START_TEST(test_the_same_name_twice_is_the_same_handle)
{
	char *root = test_tmpdir();
	char *plugin = plugin_in(root, _i, 7);
	char *caller = caller_in(root, _i, plugins[_i][0], "-Wl,--enable-new-dtags,-rpath,'$ORIGIN/sub'");
	check_kept(test_format("call %s caller_load_twice same %s %s", caller, plugin, plugin),
		   test_format("call caller_load_twice: 7\nsame %s %s: yes\n", plugin, plugin));
}
END_TEST

START_TEST(test_dlopen_of_null_is_the_main_program)
{
	check_kept("self self:lazy self:noload self:global", "self: (main program)\nself: (main program)\nself: (main program)\n");
}
END_TEST

START_TEST(test_rtld_noload_loads_nothing)
{
	/* By a name the loader finds nowhere, by the path of a file that is there: no handle, nothing
	   mapped; once loaded, the loaded object. */
	char *root = test_tmpdir();
	char *plugin = plugin_in(root, _i, 8);
	check_kept(test_format("open:noload %s open:noload %s maps %s open %s open:noload %s", plugins[_i][0], plugin, plugins[_i][0], plugin,
			       plugin),
		   test_format("open %s: error: none\nopen %s: %s\nopen %s: %s\n", plugin, plugin, plugin, plugin, plugin));
}
END_TEST

START_TEST(test_dlerror_texts_are_the_loaders)
{
	/* A missing name (NVIDIA's or not), a missing path, the empty name; dlerror once read is clear. */
	check_kept("open libdoes-not-exist.so.77 dlerror dlerror open libcublas.so.76 open /nonexistent/libx.so.77 open - "
		   "open:noload libcublas.so.76 dlerror",
		   "open libdoes-not-exist.so.77: error: libdoes-not-exist.so.77: cannot open shared object file: No such file or directory\n"
		   "dlerror: none\ndlerror: none\n");
}
END_TEST

/* The line of text that contains needle, or NULL. */
static char *line_with(const char *text, const char *needle)
{
	const char *at = strstr(text, needle);
	if (!at)
		return NULL;
	while (at > text && at[-1] != '\n')
		at--;
	return strndup(at, strcspn(at, "\n"));
}

/* A library of this machine's kind that ld.so.cache names outside every system folder (an NVIDIA
   one first: a toolkit in ld.so.conf), as `ldconfig -p` lists the cache; NULL when there is none. */
static char *cache_only_name(void)
{
	/* The system folders, as the loader lists them for a name it finds nowhere. */
	const char *env[] = { "LD_DEBUG=libs", NULL };
	char *system = line_with(test_probe(env, "open libdoes-not-exist.so.77").output, "(system search path)");
	const char *ldconfig[] = { "/sbin/ldconfig", "-p", NULL };
	struct test_run cache = test_run(ldconfig, NULL, 60);
	Dl_info libc;
	if (!system || !strstr(system, "search path=") || cache.status != 0 || !dladdr((void *)printf, &libc) || !libc.dli_fname)
		return NULL;
	char *folders = test_format(":%.*s:", (int)strcspn(strstr(system, "search path=") + 12, "\t"), strstr(system, "search path=") + 12);
	/* This machine's kind: the flags of the cache's line for the libc this process runs on. */
	char *own = line_with(cache.output, test_format(" => %s", libc.dli_fname));
	char *kind = own && strchr(own, '(') ? strndup(strchr(own, '('), strcspn(strchr(own, '('), ")") + 1) : NULL;
	char *found = NULL;
	for (char *line = strtok(cache.output, "\n"); kind && line; line = strtok(NULL, "\n")) {
		char name[256], path[4096];
		const char *arrow = strstr(line, " => ");
		if (!strstr(line, kind) || !arrow || sscanf(line, " %255s", name) != 1 || sscanf(arrow + 4, "%4095s", path) != 1)
			continue;
		char *folder = test_format(":%.*s:", (int)(strrchr(path, '/') - path), path);
		if (!test_contains(folders, folder) && (!found || (libnames_match_linux(name, NULL) >= 0 && libnames_match_linux(found, NULL) < 0)))
			found = strdup(name);
	}
	return found;
}

START_TEST(test_a_name_only_ld_so_cache_holds)
{
	char *name = cache_only_name();
	if (!name) {
		printf("skipped: test_a_name_only_ld_so_cache_holds: ld.so.cache names no library of this machine's kind outside the system folders\n");
		return;
	}
	check_kept(test_format("open %s open:noload %s", name, name), test_format("open %s: /", name));
}
END_TEST

/* By path, a system library by its soname, a name found nowhere. (A bare NVIDIA name whose origin
   is registered is another rule: the audit front answers the loader in every namespace, the
   preload front leaves dlmopen to the loader; src/linux/audit.c.) */
START_TEST(test_dlmopen_loads_into_a_new_namespace)
{
	char *plugin = plugin_in(test_tmpdir(), _i, 9);
	check_kept(test_format("dlmopen %s dlmopen libm.so.6 dlmopen libdoes-not-exist.so.77", plugin),
		   test_format("dlmopen %s: %s in the new namespace\n", plugin, plugin));
}
END_TEST

START_TEST(test_rtld_deepbind_by_path_is_the_loaders)
{
	char *plugin = plugin_in(test_tmpdir(), _i, 10);
	check_kept(test_format("open:deepbind %s call %s %s", plugin, plugin, plugins[_i][1]),
		   test_format("open %s: %s\ncall %s: 10\n", plugin, plugin, plugins[_i][1]));
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("caller_semantics");
	TCase *tc = tcase_create("caller_semantics");
	tcase_set_timeout(tc, 300);
	if (!audit_fronts())
		printf("not under LD_AUDIT: the loader itself fails these under any audit library on this glibc\n");
	tcase_add_loop_test(tc, test_callers_runpath_and_origin_are_kept, 0, PLUGIN_KINDS);
	tcase_add_loop_test(tc, test_callers_rpath_and_origin_are_kept, 0, PLUGIN_KINDS);
	tcase_add_loop_test(tc, test_origin_in_the_name_is_the_callers_folder, 0, PLUGIN_KINDS);
	tcase_add_loop_test(tc, test_the_same_name_twice_is_the_same_handle, 0, PLUGIN_KINDS);
	tcase_add_test(tc, test_dlopen_of_null_is_the_main_program);
	tcase_add_loop_test(tc, test_rtld_noload_loads_nothing, 0, PLUGIN_KINDS);
	tcase_add_test(tc, test_dlerror_texts_are_the_loaders);
	tcase_add_test(tc, test_a_name_only_ld_so_cache_holds);
	tcase_add_loop_test(tc, test_dlmopen_loads_into_a_new_namespace, 0, PLUGIN_KINDS);
	tcase_add_loop_test(tc, test_rtld_deepbind_by_path_is_the_loaders, 0, PLUGIN_KINDS);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
