/* errno and dlerror() as the caller expects, for every kind of call the routes tell apart: the
   probe sets errno to EDOM, makes one dlopen, and prints what errno and dlerror() are after it.
   Where the runtime leaves the outcome as it is, the line must be the plain loader's, to the
   letter; where it supplies a library the loader could not find, the call succeeds as a plain
   success does: errno kept, no error. */
#include "common.h"
#include "standins.h"

#include <stdlib.h>
#include <string.h>

static const char *const no_env[] = { NULL };

struct row {
	const char *kind;
	const char *setup;   /* probe commands before the errno one, %s-free */
	const char *call;    /* the errno command */
	bool runtime_fixes;  /* plain fails, the runtime loads it */
};

/* The line of the errno command in output. */
static char *errno_line(const char *output, const char *call)
{
	const char *name = strchr(call, ' ') + 1;
	if (name[0] == '\'')
		name = test_format("%.*s", (int)strlen(name) - 2, name + 1);
	const char *line = strstr(output, test_format("errno %s: ", name));
	ck_assert_msg(line, "no line for %s in\n%s", call, output);
	return test_format("%.*s", (int)strcspn(line, "\n"), line);
}

static void check_rows(const struct row *rows, size_t count, const char *const *extra_env)
{
	for (size_t i = 0; i < count; i++) {
		const char *env[4] = { standin_preload(), extra_env ? extra_env[0] : NULL, NULL };
		char *args = test_format("%s %s", rows[i].setup, rows[i].call);
		struct test_run plain = test_probe(extra_env ? extra_env : no_env, args);
		struct test_run run = test_probe(env, args);
		char *expected = errno_line(plain.output, rows[i].call), *got = errno_line(run.output, rows[i].call);
		if (rows[i].runtime_fixes) {
			ck_assert_msg(test_contains(expected, ": failed, "), "%s: plainly it must fail: %s", rows[i].kind, expected);
			ck_assert_msg(test_contains(got, ": loaded, errno EDOM kept, dlerror none"), "%s: %s", rows[i].kind, got);
		} else {
			ck_assert_msg(strcmp(expected, got) == 0, "%s:\n  plain:   %s\n  runtime: %s", rows[i].kind, expected, got);
		}
	}
}

struct layout {
	struct standin_wheel with, without;
	char *cusparse, *nvjitlink_dir;
};

static struct layout make_layout(void)
{
	struct layout l = { standin_nvrtc_wheel(1), standin_nvrtc_wheel(0), NULL, NULL };
	l.nvjitlink_dir = test_format("%s/site-packages/nvidia/nvjitlink/lib", l.with.root);
	char *nvjitlink = test_format("%s/libnvJitLink.so.77", test_mkdirs(l.nvjitlink_dir));
	test_build_library("value.c", nvjitlink, "libnvJitLink.so.77", "-DVALUE_SYMBOL=nvjitlink_value");
	l.cusparse = test_format("%s/libcusparse.so.77", test_mkdirs(test_format("%s/site-packages/nvidia/cusparse/lib", l.with.root)));
	test_build_library("needer.c", l.cusparse, "libcusparse.so.77",
			   test_format("-DNEEDER_SYMBOL=cusparse_value -DNEEDED_SYMBOL=nvjitlink_value '%s' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", nvjitlink));
	return l;
}

static struct row *rows_for(const struct layout *l, size_t *count)
{
	struct row rows[] = {
		{ "a library that is not NVIDIA's, loaded", "", "errno libc.so.6", false },
		{ "a library that is not NVIDIA's, missing", "", "errno libdoes-not-exist.so.77", false },
		{ "dlopen(NULL)", "", "errno -", false },
		{ "NVIDIA by path, first load", "", test_format("errno %s", l->with.nvrtc), false },
		{ "NVIDIA by path, repeated", test_format("open %s", l->with.nvrtc), test_format("errno %s", l->with.nvrtc), false },
		{ "NVIDIA by path, RTLD_GLOBAL promotion", test_format("open %s", l->with.nvrtc), test_format("errno:now,global %s", l->with.nvrtc), false },
		{ "NVIDIA by path, missing", "", "errno /nonexistent/libnvrtc.so.77", false },
		{ "NVIDIA by bare name, loaded", test_format("open %s", l->with.nvrtc), "errno libnvrtc.so.77", false },
		{ "NVIDIA by bare name, RTLD_NOLOAD, not loaded", "", "errno:now,noload libnvrtc.so.77", false },
		{ "NVIDIA by bare name, RTLD_DEEPBIND", "", "errno:now,deepbind libnvrtc-builtins.so.77.1", false },
		{ "NVIDIA by bare name, missing everywhere", test_format("open %s", l->with.nvrtc), "errno libcublas.so.99", false },
		{ "NVIDIA name with $ORIGIN", "", "errno '$ORIGIN/libnvrtc.so.77'", false },
		{ "driver library by bare name", "", "errno libcuda.so.1", false },
		{ "NVIDIA by bare name, supplied from a registered origin", test_format("open %s", l->with.nvrtc),
		  "errno libnvrtc-builtins.so.77.1", true },
		{ "NVIDIA by path, its DT_NEEDED supplied from a wheel sibling", test_format("open %s", l->with.nvrtc),
		  test_format("errno %s", l->cusparse), true },
	};
	*count = sizeof(rows) / sizeof(rows[0]);
	struct row *copy = malloc(sizeof(rows));
	memcpy(copy, rows, sizeof(rows));
	return copy;
}

START_TEST(test_errno_and_dlerror_as_plain_under_fallback)
{
	struct layout l = make_layout();
	size_t count;
	struct row *rows = rows_for(&l, &count);
	check_rows(rows, count, NULL);
}
END_TEST

START_TEST(test_errno_and_dlerror_as_plain_under_coherent)
{
	struct layout l = make_layout();
	size_t count;
	struct row *rows = rows_for(&l, &count);
	const char *env[] = { "NVINTERPOSE_POLICY=coherent", NULL };
	check_rows(rows, count, env);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("errno");
	TCase *tc = tcase_create("errno");
	tcase_add_test(tc, test_errno_and_dlerror_as_plain_under_fallback);
	tcase_add_test(tc, test_errno_and_dlerror_as_plain_under_coherent);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
