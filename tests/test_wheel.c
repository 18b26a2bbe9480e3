/* The Python package: the wheel built offline from a copy of the source tree (pip wheel
   --no-build-isolation, meson-python), installed into a fresh venv with pip install --no-index;
   then the seed case (NVRTC's builtins) through `import nvinterpose`, `python -m nvinterpose run`
   and the nvinterpose-run entry point, with the venv's runtime mapped; and the wheel's inspector.
   Skipped, with the reason, where /usr/bin/python3 lacks meson-python, venv or pip. */
#define _GNU_SOURCE
#include "common.h"
#include "nvinterpose.h"
#include "standins.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const no_env[] = { NULL };

/* Made once in main, before the tests fork. */
static char *python, *workspace, *wheel, *venv_python, *venv_package, *venv_runtime, *venv_run;
/* The pytest plugin's venv: /usr/bin/python3's (Debian's pytest and pytest-xdist, through the
   system site-packages) with the wheel installed; NULL, and why not, where that Python lacks them. */
static char *pytest_python, *pytest_runtime, *pytest_missing;

static struct test_run shell(const char *const *env, const char *command, int timeout)
{
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	return test_run(argv, env, timeout);
}

/* /usr/bin/python3 when it has what the documents' recipe needs (Debian's meson-python, venv and
   pip); NULL otherwise (what it lacks is printed). Runs before Check does, so without its helpers. */
static char *find_python(void)
{
	static const char *const candidates[] = { "/usr/bin/python3" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		char command[512], line[4096] = "";
		snprintf(command, sizeof(command), "%s -c 'import sys, mesonpy, venv, ensurepip, pip; print(sys.executable)' 2>&1 | tail -n 1", candidates[i]);
		FILE *p = popen(command, "r");
		bool read = p && fgets(line, sizeof(line), p);
		int status = p ? pclose(p) : -1;
		line[strcspn(line, "\n")] = '\0';
		if (read && status == 0 && line[0] == '/')
			return strdup(line);
		printf("%s: %s\n", candidates[i], read ? line : "not found");
	}
	return NULL;
}

/* The source tree as a checkout has it (tracked and untracked files git does not ignore), or the
   whole tree less build folders when it is not the top of a checkout (a source tarball, unpacked
   where it may lie inside another checkout, as `meson dist` unpacks it inside the build folder). */
static void copy_source(const char *source, const char *copy)
{
	char *command = test_format("mkdir -p '%s' && cd '%s' && if [ \"$(git rev-parse --show-toplevel 2>/dev/null)\" = \"$(pwd -P)\" ]; then "
				    "git ls-files -co --exclude-standard -z | tar --null -cf - -T - ; else "
				    "tar --exclude='./build*' --exclude=./.git -cf - . ; fi | tar -C '%s' -xf -",
				    copy, source, copy);
	struct test_run run = shell(no_env, command, 120);
	ck_assert_msg(run.status == 0, "copying the source failed: %s", run.output);
}

/* The line of the documents that starts with prefix: there is one. */
static char *recipe_line(const char *prefix)
{
	struct test_document_line lines[4];
	size_t count = test_document_lines(prefix, false, lines, 4);
	ck_assert_msg(count == 1, "%zu lines of the documents start with %s", count, prefix);
	return lines[0].text;
}

/* Builds the wheel and installs it into a fresh venv, with the offline recipe of docs/python.md,
   its lines as written, in a copy of the source: once, in the test program itself (an unchecked
   fixture), before the tests fork. */
static void build_and_install(void)
{
	const char *base = getenv("TMPDIR");
	workspace = test_format("%s/nvinterpose-wheel-XXXXXX", base && base[0] ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(workspace));
	char *source = test_format("%s/source", workspace), *wheels = test_format("%s/dist", source);
	copy_source(test_setting("NVI_SOURCE_ROOT"), source);
	struct test_run built = shell(no_env, test_format("exec 2>&1; cd '%s'\n%s\n", source, recipe_line("/usr/bin/python3 -m pip wheel ")), 900);
	DIR *dir = opendir(wheels);
	for (struct dirent *entry; dir && (entry = readdir(dir));)
		if (strstr(entry->d_name, ".whl"))
			wheel = test_format("%s/%s", wheels, entry->d_name);
	if (dir)
		closedir(dir);
	ck_assert_msg(built.status == 0 && wheel, "the wheel did not build (%d):\n%s", built.status, built.output);
	char *venv = test_format("%s/.venv", source);
	/* One line each: a line may end with a comment. */
	struct test_run installed = shell(no_env, test_format("set -e; exec 2>&1; cd '%s'\n%s\n%s\n", source, recipe_line("python3 -m venv .venv "),
							      recipe_line(".venv/bin/python -m pip install --no-index ")), 300);
	ck_assert_msg(installed.status == 0, "the wheel did not install into a fresh venv:\n%s", installed.output);
	venv_python = test_format("%s/bin/python", venv);
	venv_run = test_format("%s/bin/nvinterpose-run", venv);
	struct test_run site = shell(no_env, test_format("'%s' -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'", venv_python), 60);
	site.output[strcspn(site.output, "\n")] = '\0';
	venv_package = test_format("%s/nvinterpose", site.output);
	venv_runtime = test_format("%s/libnvinterpose.so.0", venv_package);
	struct test_run has = shell(no_env, "/usr/bin/python3 -c 'import pytest, xdist' 2>&1", 60);
	if (has.status != 0) {
		pytest_missing = test_format("/usr/bin/python3 lacks pytest or pytest-xdist (Debian: python3-pytest python3-pytest-xdist): %s", has.output);
		return;
	}
	char *pytest_venv = test_format("%s/pytest-venv", workspace);
	installed = shell(no_env, test_format("/usr/bin/python3 -m venv --system-site-packages '%s' && '%s/bin/pip' install --no-index '%s' 2>&1",
					      pytest_venv, pytest_venv, wheel), 300);
	ck_assert_msg(installed.status == 0, "the wheel did not install into a venv with the system's site-packages:\n%s", installed.output);
	pytest_python = test_format("%s/bin/python", pytest_venv);
	site = shell(no_env, test_format("'%s' -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'", pytest_python), 60);
	site.output[strcspn(site.output, "\n")] = '\0';
	pytest_runtime = test_format("%s/nvinterpose/libnvinterpose.so.0", site.output);
}

static void remove_workspace(void)
{
	if (workspace)
		shell(no_env, test_format("rm -rf '%s'", workspace), 120);
}

/* app.py: loads the NVRTC-like stand-in by path, compiles, and prints the runtime files mapped. */
static char *seed_app(const struct standin_wheel *standin, bool import_first)
{
	char *app = test_format("%s/app.py", standin->root);
	test_write_file(app, test_format("import ctypes\n%s"
					 "nvrtc = ctypes.CDLL('%s')\n"
					 "print('compile:', nvrtc.nvrtc_like_compile())\n"
					 "for path in sorted({line.split()[-1] for line in open('/proc/self/maps') if 'libnvinterpose' in line}):\n"
					 "    print('runtime mapped:', path)\n",
					 import_first ? "import nvinterpose\n" : "", standin->nvrtc));
	return app;
}

/* The seed case passed, and the only runtime mapped is the venv's. */
static void check_fixed_by_the_venvs_runtime(const struct test_run *run)
{
	ck_assert_msg(test_contains(run->output, "compile: 42\n"), "%s", run->output);
	ck_assert_msg(test_count(run->output, "runtime mapped: ") == 1 && test_contains(run->output, test_format("runtime mapped: %s\n", venv_runtime)),
		      "the venv's runtime alone: %s", run->output);
}

START_TEST(test_wheel_is_py3_none_platform_with_one_runtime_and_no_links)
{
	const char *name = strrchr(wheel, '/') + 1;
	/* The runtime and the inspector bind no glibc version above 2.17 and need only what the policy
	   allows (tools/wheel_backend.py checks as auditwheel would). */
	ck_assert_msg(strstr(name, "-py3-none-manylinux_2_17_"), "%s", name);
	char *script = test_format("import stat, sys, zipfile\n"
				   "wheel = zipfile.ZipFile(sys.argv[1])\n"
				   "for info in wheel.infolist():\n"
				   "    print('link' if stat.S_ISLNK(info.external_attr >> 16) else 'file', info.filename)\n"
				   "print(wheel.read([n for n in wheel.namelist() if n.endswith('.dist-info/WHEEL')][0]).decode())\n");
	char *path = test_format("%s/list.py", workspace);
	test_write_file(path, script);
	struct test_run run = shell(no_env, test_format("'%s' '%s' '%s'", python, path, wheel), 60);
	ck_assert_int_eq(run.status, 0);
	ck_assert_msg(!test_contains(run.output, "link "), "no symbolic links: %s", run.output);
	ck_assert_msg(test_count(run.output, "libnvinterpose") == 1 && test_contains(run.output, "file nvinterpose/libnvinterpose.so.0\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "file nvinterpose/nvinterpose-run\n"), "the shell launcher: %s", run.output);
	ck_assert_msg(test_contains(run.output, "file nvinterpose/nvinterpose-inspect\n"), "the inspector: %s", run.output);
	ck_assert_msg(test_contains(run.output, "file nvinterpose/__init__.py\n") && test_contains(run.output, "file nvinterpose-auto.pth\n"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, ".data/"), "nothing outside the package (headers, man pages, data): %s", run.output);
	ck_assert_msg(test_contains(run.output, "file nvinterpose_pytest.py\n"), "the pytest plugin, beside the package: %s", run.output);
	const char *tag = strstr(name, "-py3-") + 1;
	ck_assert_msg(test_contains(run.output, "Root-Is-Purelib: false") && test_contains(run.output, test_format("Tag: %.*s\n", (int)(strlen(tag) - 4), tag)),
		      "%s", run.output);
}
END_TEST

START_TEST(test_import_attaches_the_venvs_runtime_and_fixes_the_seed_case)
{
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	struct test_run plain = shell(no_env, test_format("'%s' '%s'", venv_python, seed_app(&standin, false)), 60);
	ck_assert_msg(test_contains(plain.output, "compile: -1\n") && !test_contains(plain.output, "runtime mapped"), "fails without: %s", plain.output);
	struct test_run run = shell(no_env, test_format("'%s' '%s'", venv_python, seed_app(&standin, true)), 60);
	check_fixed_by_the_venvs_runtime(&run);
}
END_TEST

START_TEST(test_import_after_nvrtc_was_loaded_fixes_it_too)
{
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	struct test_run run = shell(no_env, test_format("'%s' -c \"import ctypes; ctypes.CDLL('%s'); import nvinterpose, runpy; runpy.run_path('%s')\"",
							 venv_python, standin.nvrtc, seed_app(&standin, false)), 60);
	check_fixed_by_the_venvs_runtime(&run);
}
END_TEST

START_TEST(test_python_m_nvinterpose_run_preloads_the_venvs_runtime)
{
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	char *app = seed_app(&standin, false);
	struct test_run run = shell(no_env, test_format("'%s' -m nvinterpose run -- '%s' '%s'", venv_python, venv_python, app), 60);
	check_fixed_by_the_venvs_runtime(&run);
	struct test_run entry = shell(no_env, test_format("'%s' --policy fallback -- '%s' '%s'", venv_run, venv_python, app), 60);
	check_fixed_by_the_venvs_runtime(&entry);
}
END_TEST

/* The package's launcher is the shell launcher (its options, messages and statuses: the launcher
   suite), finding the package's runtime beside itself. */
START_TEST(test_launcher_options_status_and_errors)
{
	struct test_run help = shell(no_env, test_format("'%s' --help", venv_run), 60);
	ck_assert_msg(help.status == 0 && test_contains(help.output, "Usage: nvinterpose-run [OPTIONS] [--] COMMAND [ARGS...]"), "%s", help.output);
	struct test_run module_help = shell(no_env, test_format("'%s' -m nvinterpose run --help", venv_python), 60);
	ck_assert_str_eq(module_help.output, help.output);
	struct test_run version = shell(no_env, test_format("'%s' -m nvinterpose --version", venv_python), 60);
	ck_assert_msg(version.status == 0 && test_contains(version.output, test_format(", %s)", venv_runtime)), "%s", version.output);
	const char *env[] = { "LD_PRELOAD=/opt/b/libnvinterpose.so.0", NULL };
	struct test_run printed = shell(env, test_format("'%s' --log info --print-env", venv_run), 60);
	ck_assert_msg(test_contains(printed.output, test_format("export LD_PRELOAD='%s'\nexport NVINTERPOSE_LOG='info'\n", venv_runtime)), "%s",
		      printed.output);
	struct test_run status = shell(no_env, test_format("'%s' -- sh -c 'exit 7'", venv_run), 60);
	ck_assert_int_eq(status.status, 7);
	struct test_run missing = shell(no_env, test_format("'%s' -m nvinterpose run -- no-such-command-anywhere", venv_python), 60);
	ck_assert_msg(missing.status == 127 && test_contains(missing.output, "nvinterpose-run: no-such-command-anywhere: command not found\n"), "%d %s",
		      missing.status, missing.output);
	struct test_run bad = shell(no_env, test_format("'%s' --policy sometimes -- true", venv_run), 60);
	ck_assert_msg(bad.status == 2 && test_contains(bad.output, "nvinterpose-run: --policy: 'sometimes' is not one of fallback, coherent, off\n"
								  "Try 'nvinterpose-run --help' for more information.\n"),
		      "%s", bad.output);
	struct test_run unknown = shell(no_env, test_format("'%s' -m nvinterpose bogus", venv_python), 60);
	ck_assert_msg(unknown.status == 2 && test_contains(unknown.output, "nvinterpose: bogus: unknown command (run or inspect)\n"
									  "Try 'python -m nvinterpose --help' for more information.\n"),
		      "%s", unknown.output);
}
END_TEST

/* On Windows `python -m nvinterpose run` and the nvinterpose-run entry point run the package's
   nvinterpose-run.exe, wait for it and return its exit status (Windows has no exec). No Windows
   Python is here: the Windows branch runs on Linux, chosen by run()'s windows parameter, with a
   stand-in launcher in a package folder of its own that sleeps, writes down its arguments and
   exits 3. A SIGINT to the Python process while it waits (Ctrl+C reaches every process of a
   console, the launcher's program too) changes nothing. */
START_TEST(test_run_on_windows_waits_for_the_launcher_and_returns_its_status)
{
	char *here = test_format("%s/windows-package-XXXXXX", workspace);
	ck_assert_ptr_nonnull(mkdtemp(here));
	char *launcher = test_format("%s/nvinterpose-run.exe", here);
	test_write_file(launcher, test_format("#!/bin/sh\nsleep 1\nprintf '%%s|' \"$@\" > '%s/arguments'\nexit 3\n", here));
	ck_assert_int_eq(chmod(launcher, 0755), 0);
	char *script = test_format("%s/run.py", here);
	test_write_file(script, "import os, signal, sys, threading\n"
				"import nvinterpose.__main__ as main\n"
				"main.HERE = sys.argv[1]\n"
				"signal.signal(signal.SIGINT, signal.default_int_handler)\n"
				"threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
				"status = main.run(['--policy', 'off', '--', 'a b', 'c'], windows=True)\n"
				"print('arguments at return:', open(os.path.join(sys.argv[1], 'arguments')).read())\n"
				"print('0xC0000135 as:', main._exit_status(0xC0000135), main._exit_status(3))\n"
				"sys.exit(status)\n");
	struct test_run run = shell(no_env, test_format("'%s' '%s' '%s'", venv_python, script, here), 60);
	ck_assert_msg(run.status == 3, "the launcher's status is returned (%d): %s", run.status, run.output);
	ck_assert_msg(test_contains(run.output, "arguments at return: --policy|off|--|a b|c|\n"), "it waited, and passed the arguments: %s",
		      run.output);
	ck_assert_msg(test_contains(run.output, "0xC0000135 as: -1073741515 3\n"), "%s", run.output);
	ck_assert_int_eq(unlink(launcher), 0);
	struct test_run missing = shell(no_env, test_format("'%s' -c 'import nvinterpose.__main__ as m, sys; m.HERE = sys.argv[1]; "
							    "sys.exit(m.run([\"true\"], windows=True))' '%s'", venv_python, here), 60);
	ck_assert_msg(missing.status == 2 && test_contains(missing.output, "nvinterpose-run.exe is missing"), "%d %s", missing.status, missing.output);
}
END_TEST

/* The wheel carries the inspector beside the package, with libelf and libz linked in: it needs
   nothing beyond what the manylinux policy allows (and binds no glibc version above 2.17, which the
   tag holds), so a venv with the wheel alone lists the families, draws a tree as JSON, tells what
   the runtime would do and scans. */
START_TEST(test_python_m_nvinterpose_inspect_runs_the_wheels_inspector)
{
	char *inspector = test_format("%s/nvinterpose-inspect", venv_package);
	if (strcmp(test_setting("NVI_LIBELF_STATIC"), "yes") != 0) {
		ck_assert_msg(access(inspector, F_OK) != 0, "%s", inspector);
		printf("SKIP: the wheel carries no inspector here: it needs libelf's static archive (Debian: libelf-dev)\n");
		return;
	}
	struct test_run needed = shell(no_env, test_format("objdump -p '%s' | grep NEEDED | sort", inspector), 60);
	ck_assert_msg(needed.status == 0 && !strcmp(needed.output, "  NEEDED               libc.so.6\n  NEEDED               libdl.so.2\n"
								     "  NEEDED               libpthread.so.0\n"),
		      "libelf and libz are linked in: %s", needed.output);
	const char *bare[] = { "PATH=/usr/bin:/bin", NULL };
	struct test_run families = shell(bare, test_format("'%s' -m nvinterpose inspect --families", venv_python), 60);
	ck_assert_msg(families.status == 0 && test_contains(families.output, "nvrtc ") && test_contains(families.output, "libnvrtc.so.N"), "%s",
		      families.output);
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	char *check = test_format("%s/check.py", standin.root);
	test_write_file(check, "import json, sys\n"
			       "document = json.load(sys.stdin)\n"
			       "root = document['files'][0]['objects'][0]\n"
			       "print('root:', root['family'], root['path'])\n"
			       "for d in root['runtime']:\n"
			       "    print('run time:', d['name'], d['how'], d['family'], len(d['looked']) > 0)\n");
	struct test_run tree = shell(bare, test_format("'%s' -m nvinterpose inspect --json '%s' | '%s' '%s'", venv_python, standin.nvrtc, venv_python, check), 60);
	/* The seed case: the loader does not find the builtins beside NVRTC, and the tree says where it looked. */
	ck_assert_msg(tree.status == 0 && test_contains(tree.output, test_format("root: nvrtc %s\n", standin.nvrtc)) &&
			      test_contains(tree.output, "run time: libnvrtc-builtins.so.77.1 not_found nvrtc-builtins True\n"),
		      "%s", tree.output);
	/* The what-if: the runtime would load the builtins from the folder NVRTC was loaded from. */
	struct test_run what_if = shell(bare, test_format("'%s' -m nvinterpose inspect --cache=none --policy=fallback '%s'", venv_python, standin.nvrtc), 60);
	ck_assert_msg(what_if.status == 0 && test_contains(what_if.output, test_format("libnvrtc-builtins.so.77.1 => %s [registered_origin]", standin.builtins)) &&
			      test_contains(what_if.output, "<- the runtime loads it first"),
		      "%d %s", what_if.status, what_if.output);
	const char *scan_env[] = { "PATH=/usr/bin:/bin", test_format("LD_LIBRARY_PATH=%s", standin.lib), NULL };
	struct test_run scan = shell(scan_env, test_format("'%s' -m nvinterpose inspect --scan --python='%s'", venv_python, venv_python), 120);
	ck_assert_msg(test_contains(scan.output, test_format("LD_LIBRARY_PATH  %s: 2 NVIDIA files\n", standin.lib)) &&
			      test_contains(scan.output, "libnvrtc.so.77 (nvrtc): 1 copy\n"),
		      "%d %s", scan.status, scan.output);
	/* Without it (a wheel built without libelf's archive) the message says so; on Windows, why. */
	char *here = test_format("%s/inspector-less-XXXXXX", workspace);
	ck_assert_ptr_nonnull(mkdtemp(here));
	struct test_run missing = shell(bare, test_format("'%s' -c 'import nvinterpose.__main__ as m, sys; m.HERE = sys.argv[1]; "
							  "sys.exit(m.inspect([\"--families\"]))' '%s'", venv_python, here), 60);
	ck_assert_msg(missing.status == 2 && test_contains(missing.output, test_format("nvinterpose-inspect is neither in %s nor on PATH", here)), "%d %s",
		      missing.status, missing.output);
	struct test_run windows = shell(bare, test_format("'%s' -c 'import nvinterpose.__main__ as m, sys; sys.exit(m.inspect([], windows=True))'", venv_python), 60);
	ck_assert_msg(windows.status == 2 && test_contains(windows.output, "nvinterpose-inspect reads ELF files: it is for Linux"), "%d %s", windows.status,
		      windows.output);
}
END_TEST

START_TEST(test_import_uses_the_runtime_already_in_the_process)
{
	/* Preloaded from elsewhere: the package talks to that one and maps none of its own. */
	char *script = test_format("import nvinterpose; print('serving:', nvinterpose.runtime_path()); print('patches:', len(nvinterpose.patches()))\n"
				   "print('mapped:', sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libnvinterpose' in l}))");
	const char *env[] = { standin_preload(), NULL };
	struct test_run run = shell(env, test_format("'%s' -c \"%s\"", venv_python, script), 60);
	ck_assert_msg(test_contains(run.output, test_format("serving: %s\n", test_setting("NVI_RUNTIME"))), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "patches: 0\n"), "%s", run.output);
	/* The maps name the file, not the soname's link to it. */
	ck_assert_msg(test_contains(run.output, test_format("mapped: ['%s']\n", realpath(test_setting("NVI_RUNTIME"), NULL))), "%s", run.output);
	/* Attached from elsewhere first (RTLD_LOCAL): the venv's copy is loaded, defers and forwards. */
	struct test_run attached = shell(no_env, test_format("'%s' -c \"import ctypes; ctypes.CDLL('%s'); %s\"", venv_python, test_setting("NVI_RUNTIME"), script), 60);
	ck_assert_msg(test_contains(attached.output, test_format("serving: %s\n", test_setting("NVI_RUNTIME"))), "%s", attached.output);
}
END_TEST

/* The API wraps the C API; its errors name what is wrong: an unknown family (ValueError with the
   argument and the families), a family not loaded yet (LookupError), a relative folder
   (ValueError), a missing one (FileNotFoundError, with its name). families() is the table's list,
   the one the inspector prints. */
START_TEST(test_api_wraps_the_c_api_and_its_errors_say_what_is_wrong)
{
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	char *script = test_format("%s/api.py", standin.root);
	test_write_file(script, test_format("import ctypes, errno, nvinterpose\n"
					    "ctypes.CDLL('%s')\n"
					    "print('origin:', nvinterpose.family_origin('nvrtc'))\n"
					    "print('origins:', nvinterpose.origins('nvrtc'))\n"
					    "nvinterpose.register_folder('cublas', '/usr')\n"
					    "print('cublas:', nvinterpose.origins('cublas'))\n"
					    "for call in (lambda: nvinterpose.register_folder('notafamily', '/tmp'), lambda: nvinterpose.family_origin('libnvrtc.so.13'),\n"
					    "             lambda: nvinterpose.origins('libcudart'), lambda: nvinterpose.family_origin('cudnn'),\n"
					    "             lambda: nvinterpose.register_folder('cublas', 'relative'), lambda: nvinterpose.register_folder('cublas', '/no/such/folder')):\n"
					    "    try:\n"
					    "        call()\n"
					    "    except Exception as error:\n"
					    "        print('error:', type(error).__name__, error)\n"
					    "print('families:', nvinterpose.families())\n"
					    "print('rescan:', nvinterpose.rescan())\n"
					    "print('patched:', [(p.object, p.symbol, p.place) for p in nvinterpose.patches() if p.state == 'patched' and p.place == 'dynsym'][:1])\n"
					    "print('version:', nvinterpose.version() == nvinterpose.__version__)\n"
					    "print('report:', nvinterpose.report().totals['origins'] >= 1, [o.path for o in nvinterpose.report().origins])\n"
					    "class OlderRuntime:  # a runtime older than nvi_list_families\n"
					    "    def __init__(self, runtime): self.runtime = runtime\n"
					    "    def __getattr__(self, name):\n"
					    "        if name == 'nvi_list_families': raise AttributeError(name)\n"
					    "        return getattr(self.runtime, name)\n"
					    "nvinterpose._runtime = OlderRuntime(nvinterpose._runtime)\n"
					    "for call in (lambda: nvinterpose.origins('libcudart'), lambda: nvinterpose.register_folder('notafamily', '/tmp')):\n"
					    "    try:\n"
					    "        call()\n"
					    "    except Exception as error:\n"
					    "        print('older error:', type(error).__name__, error)\n"
					    "nvinterpose._runtime = object()  # a runtime older than nvi_report and nvi_list_patches\n"
					    "print('older:', nvinterpose.report(), nvinterpose.patches())\n",
					    standin.nvrtc));
	struct test_run run = shell(no_env, test_format("'%s' '%s'", venv_python, script), 60);
	ck_assert_msg(run.status == 0, "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origin: %s\n", standin.lib)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("origins: [('nvrtc', '%s')]\n", standin.lib)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "cublas: [('cublas', '/usr')]\n"), "%s", run.output);
	const char *families = "'cudart', 'nvrtc', 'nvrtc-builtins', ";
	const char *listed = "the families: cudart, nvrtc, nvrtc-builtins, ";
	ck_assert_msg(test_contains(run.output, "error: ValueError register_folder(): family 'notafamily' is not one the runtime knows") &&
			      test_contains(run.output, "error: ValueError family_origin(): family 'libnvrtc.so.13' is not one the runtime knows (a family names a "
							"library: 'nvrtc' for libnvrtc.so.N and nvrtc64_*.dll); ") &&
			      test_contains(run.output, "error: ValueError origins(): family 'libcudart' is not one") && test_count(run.output, listed) == 3,
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, "error: LookupError family_origin(): no library of family 'cudnn' was loaded (nor a folder registered for it) yet\n"),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, "error: ValueError register_folder(): folder 'relative' is not an absolute path\n") &&
			      test_contains(run.output, "error: FileNotFoundError [Errno 2] No such file or directory: '/no/such/folder'\n"),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("families: [%s", families)) && test_contains(run.output, "'cublasLt'"), "%s", run.output);
	/* The wheel's inspector prints the same list, from the same table. */
	if (strcmp(test_setting("NVI_LIBELF_STATIC"), "yes") == 0) {
		char *inspector = test_format("%s/nvinterpose-inspect", venv_package);
		struct test_run listed_by_inspector = shell(no_env, test_format("'%s' --families --json | '%s' -c 'import json, sys; "
										   "print(\"families:\", [f[\"family\"] for f in json.load(sys.stdin)])'",
										   inspector, venv_python), 60);
		listed_by_inspector.output[strcspn(listed_by_inspector.output, "\n")] = '\0';
		ck_assert_msg(listed_by_inspector.status == 0 && strncmp(listed_by_inspector.output, "families: [", 11) == 0 &&
				      test_contains(run.output, listed_by_inspector.output),
			      "%d %s\n%s", listed_by_inspector.status, listed_by_inspector.output, run.output);
	}
	/* A runtime older than its list of families: its EINVAL as it is, never a family error it cannot tell. */
	ck_assert_msg(test_contains(run.output, "older error: OSError [Errno 22] Invalid argument\n") &&
			      test_contains(run.output, "older error: OSError [Errno 22] Invalid argument: '/tmp'\n"),
		      "%s", run.output);
	ck_assert_msg(test_contains(run.output, "rescan: 1\n"), "the builtins, loaded ahead: %s", run.output);
	ck_assert_msg(test_contains(run.output, "libc.so.6', 'dlopen', 'dynsym')]"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "version: True\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "report: True []\n"), "figures, and no lines without NVINTERPOSE_REPORT: %s", run.output);
	ck_assert_msg(test_contains(run.output, "older: Report(totals=None, kept=False, left_out=0, origins=[], supplied=[], misses=[], mixed_origins=[]) []\n"),
		      "%s", run.output);
}
END_TEST

START_TEST(test_auto_attach_at_interpreter_start_only_with_nvinterpose_auto)
{
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	char *app = seed_app(&standin, false);
	const char *on[] = { "NVINTERPOSE_AUTO=1", NULL };
	struct test_run run = shell(on, test_format("'%s' '%s'", venv_python, app), 60);
	check_fixed_by_the_venvs_runtime(&run);
	const char *off[] = { "NVINTERPOSE_AUTO=0", NULL };
	struct test_run plain = shell(off, test_format("'%s' '%s'", venv_python, app), 60);
	ck_assert_msg(test_contains(plain.output, "compile: -1\n") && !test_contains(plain.output, "runtime mapped"), "%s", plain.output);
}
END_TEST

START_TEST(test_real_nvrtc_compiles_after_import_nvinterpose)
{
	/* The real NVRTC in the CUDA 13 wheel folder, the toolkit hidden (ld.so --inhibit-cache). */
	char *lib64 = test_format("%s/lib64", test_setting("NVI_CUDA_HOME"));
	if (access(test_format("%s/libnvrtc.so.13", lib64), R_OK) != 0) {
		printf("SKIP: no CUDA 13 toolkit at %s\n", lib64);
		return;
	}
	char *lib = test_format("%s/site-packages/nvidia/cu13/lib", test_tmpdir());
	test_mkdirs(lib);
	test_copy_file(test_format("%s/libnvrtc.so.13", lib64), test_format("%s/libnvrtc.so.13", lib));
	test_copy_file(test_format("%s/libnvrtc-builtins.so.13.0", lib64), test_format("%s/libnvrtc-builtins.so.13.0", lib));
	char *app = test_format("%s/nvrtc_app.py", lib);
	test_write_file(app, test_format("import ctypes, sys\n"
					 "if sys.argv[1:] == ['import']:\n"
					 "    import nvinterpose\n"
					 "nvrtc = ctypes.CDLL('%s/libnvrtc.so.13')\n"
					 "program = ctypes.c_void_p()\n"
					 "nvrtc.nvrtcCreateProgram(ctypes.byref(program), b'extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }', b'twice.cu', 0, None, None)\n"
					 "print('nvrtc compile:', 'ok' if nvrtc.nvrtcCompileProgram(program, 0, None) == 0 else 'failed')\n"
					 "for path in sorted({line.split()[-1] for line in open('/proc/self/maps') if 'libnvrtc-builtins' in line or 'libnvinterpose' in line}):\n"
					 "    print('mapped:', path)\n",
					 lib));
	const char *loader = test_interpreter();
	struct test_run plain = shell(no_env, test_format("'%s' --inhibit-cache '%s' '%s'", loader, venv_python, app), 300);
	ck_assert_msg(test_contains(plain.output, "nvrtc compile: failed"), "fails without: %s", plain.output);
	struct test_run run = shell(no_env, test_format("'%s' --inhibit-cache '%s' '%s' import", loader, venv_python, app), 300);
	ck_assert_msg(test_contains(run.output, "nvrtc compile: ok\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("mapped: %s/libnvrtc-builtins.so.13.0\n", lib)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("mapped: %s\n", venv_runtime)), "%s", run.output);
}
END_TEST

/* The pytest plugin's tests run where /usr/bin/python3 has pytest and pytest-xdist. */
#define NEEDS_PYTEST()                                       \
	do {                                                 \
		if (!pytest_python) {                        \
			printf("SKIP: %s\n", pytest_missing); \
			return;                              \
		}                                            \
	} while (0)

/* A pytest project beside the NVRTC-like stand-in: conftest.py loads it by path when imported (as
   a CUDA library's conftest imports it), test_compile.py expects its compile to give expected (42
   with its builtins found, -1 without) and prints how many runtime files the process maps. */
static char *pytest_project(const struct standin_wheel *standin, int expected)
{
	char *project = test_format("%s/project", standin->root);
	test_mkdirs(project);
	test_write_file(test_format("%s/conftest.py", project), test_format("import ctypes\nnvrtc = ctypes.CDLL('%s')\n", standin->nvrtc));
	test_write_file(test_format("%s/test_compile.py", project),
			test_format("import ctypes\n"
				    "def test_compile():\n"
				    "    assert ctypes.CDLL('%s').nvrtc_like_compile() == %d\n"
				    "def test_runtime_files_mapped():\n"
				    "    print('runtime files mapped:', len({l.split()[-1] for l in open('/proc/self/maps') if 'libnvinterpose' in l}))\n",
				    standin->nvrtc, expected));
	return project;
}

static struct test_run run_pytest(const char *const *env, const char *project, const char *arguments)
{
	return shell(env, test_format("cd '%s' && '%s' -m pytest -p no:cacheprovider -s %s 2>&1", project, pytest_python, arguments), 300);
}

START_TEST(test_pytest_plugin_changes_nothing_unless_asked)
{
	NEEDS_PYTEST();
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	char *project = pytest_project(&standin, -1);
	struct test_run run = run_pytest(no_env, project, "");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "runtime files mapped: 0\n"), "%s", run.output);
	ck_assert_msg(!test_contains(run.output, "= nvinterpose =") && !test_contains(run.output, "nvinterpose:"), "%s", run.output);
	struct test_run help = run_pytest(no_env, project, "--help");
	ck_assert_msg(test_contains(help.output, "--nvinterpose ") && test_contains(help.output, "--nvinterpose-strict"), "the plugin is loaded: %s",
		      help.output);
}
END_TEST

/* The summary names the folder NVRTC was loaded from and what was supplied to it. */
static void check_fixed_and_summarized(const struct test_run *run, const struct standin_wheel *standin)
{
	ck_assert_msg(run->status == 0 && test_contains(run->output, "2 passed"), "%s", run->output);
	ck_assert_msg(test_contains(run->output, "runtime files mapped: 1\n"), "%s", run->output);
	ck_assert_msg(test_contains(run->output, "= nvinterpose =") && test_contains(run->output, test_format("  nvrtc: %s\n", standin->lib)),
		      "%s", run->output);
	ck_assert_msg(test_contains(run->output, test_format("  libnvrtc-builtins.so.77.1 to %s: %s (redirect, ", standin->nvrtc, standin->builtins)),
		      "%s", run->output);
	ck_assert_msg(test_contains(run->output, test_format("pytest (process ")) && test_contains(run->output, test_format(": runtime " NVI_VERSION " attached from %s;", pytest_runtime)),
		      "%s", run->output);
}

/* conftest.py loads NVRTC when imported: the option, the ini key and -p with autoloading off
   attach the runtime before it is, and its compile then finds the builtins beside it. */
START_TEST(test_pytest_option_and_ini_key_attach_before_conftest)
{
	NEEDS_PYTEST();
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	char *project = pytest_project(&standin, 42);
	struct test_run plain = run_pytest(no_env, project, "");
	ck_assert_msg(plain.status == 1 && test_contains(plain.output, "1 failed, 1 passed"), "fails without: %s", plain.output);
	struct test_run option = run_pytest(no_env, project, "--nvinterpose");
	check_fixed_and_summarized(&option, &standin);
	const char *no_autoload[] = { "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", NULL };
	struct test_run by_name = run_pytest(no_autoload, project, "-p nvinterpose_pytest --nvinterpose");
	check_fixed_and_summarized(&by_name, &standin);
	struct test_run not_loaded = run_pytest(no_autoload, project, "");
	ck_assert_msg(not_loaded.status == 1, "autoloading off and no -p: %s", not_loaded.output);
	test_write_file(test_format("%s/pytest.ini", project), "[pytest]\nnvinterpose = true\n");
	struct test_run ini = run_pytest(no_env, project, "");
	check_fixed_and_summarized(&ini, &standin);
}
END_TEST

/* With the builtins nowhere, the miss is in the summary with its places; strict mode fails the
   session for it, and not for a miss said at info (a probe for a more exact version). */
START_TEST(test_pytest_strict_fails_on_a_warning_miss_only)
{
	NEEDS_PYTEST();
	struct standin_wheel standin = standin_nvrtc_wheel(0);
	char *project = pytest_project(&standin, -1);
	struct test_run run = run_pytest(no_env, project, "--nvinterpose");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "2 passed"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("  libnvrtc-builtins.so.77.1 wanted by %s (dlopen by bare name): 1 times; looked in ",
							    standin.nvrtc)), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("\n    %s (", standin.lib)), "NVRTC's folder among the places: %s", run.output);
	ck_assert_msg(test_contains(run.output, "1 misses at warning level\n"), "%s", run.output);
	struct test_run strict = run_pytest(no_env, project, "--nvinterpose --nvinterpose-strict");
	ck_assert_msg(strict.status == 1 && test_contains(strict.output, "1 misses at warning level: the session fails (--nvinterpose-strict)"),
		      "%d %s", strict.status, strict.output);
	test_write_file(test_format("%s/pytest.ini", project), "[pytest]\nnvinterpose = true\nnvinterpose_strict = true\n");
	struct test_run ini = run_pytest(no_env, project, "");
	ck_assert_msg(ini.status == 1, "%d %s", ini.status, ini.output);

	/* cuDNN-like: asks for libcudnn_ops.so.77.1.0 where libcudnn_ops.so.77 is: said at info. */
	char *root = test_tmpdir(), *lib = test_format("%s/site-packages/nvidia/cudnn/lib", root), *info = test_format("%s/project", root);
	test_mkdirs(lib);
	test_mkdirs(info);
	char *parent = test_format("%s/libcudnn.so.77", lib);
	test_build_library("cudnn_like.c", parent, "libcudnn.so.77", "-DSUB_LIBRARY='\"libcudnn_ops.so.77.1.0\"' -Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
	test_build_library("value.c", test_format("%s/libcudnn_ops.so.77", lib), "libcudnn_ops.so.77", "-DVALUE_SYMBOL=ops_value");
	test_write_file(test_format("%s/test_probe.py", info),
			test_format("import ctypes\ndef test_probe():\n    ctypes.CDLL('%s').cudnn_like_load()\n", parent));
	struct test_run probe = run_pytest(no_env, info, "--nvinterpose --nvinterpose-strict");
	ck_assert_msg(probe.status == 0 && test_contains(probe.output, "libcudnn_ops.so.77.1.0 wanted by ") &&
			      test_contains(probe.output, "another version is there: ") && test_contains(probe.output, ", said at info): 1 times"),
		      "%d %s", probe.status, probe.output);
}
END_TEST

/* Every pytest-xdist worker attaches (conftest.py, imported in each, compiles), the summary gathers
   them all, and a worker that dies before reporting is named. */
START_TEST(test_pytest_xdist_workers_attach_and_are_gathered)
{
	NEEDS_PYTEST();
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	char *project = pytest_project(&standin, 42);
	test_write_file(test_format("%s/conftest.py", project),
			test_format("import ctypes\nassert ctypes.CDLL('%s').nvrtc_like_compile() == 42\n", standin.nvrtc));
	struct test_run run = run_pytest(no_env, project, "-n 2 --nvinterpose");
	ck_assert_msg(run.status == 0 && test_contains(run.output, "2 passed"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, "\ngw0 (process ") && test_contains(run.output, "\ngw1 (process ") &&
			      test_contains(run.output, "\npytest (process "), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format("  libnvrtc-builtins.so.77.1 to %s: %s (redirect, ", standin.nvrtc, standin.builtins)) &&
			      (test_contains(run.output, ") [pytest, gw0, gw1]\n") || test_contains(run.output, ") [pytest, gw1, gw0]\n")),
		      "supplied in every process: %s", run.output);
	test_write_file(test_format("%s/test_dies.py", project), "import os, signal\ndef test_dies():\n    os.kill(os.getpid(), signal.SIGKILL)\n");
	struct test_run died = run_pytest(no_env, project, "-n 2 --nvinterpose");
	ck_assert_msg(died.status == 1 && test_contains(died.output, " ended before reporting (") &&
			      test_contains(died.output, "): its findings are missing\n"), "%s", died.output);
}
END_TEST

/* Preloaded (the launcher): the plugin uses that runtime and says so; one runtime is mapped. */
START_TEST(test_pytest_uses_a_preloaded_runtime)
{
	NEEDS_PYTEST();
	struct standin_wheel standin = standin_nvrtc_wheel(1);
	char *project = pytest_project(&standin, 42);
	char *bin = test_format("%s", pytest_python);
	*strrchr(bin, '/') = '\0';
	struct test_run run = shell(no_env, test_format("cd '%s' && '%s/nvinterpose-run' --report -- '%s' -m pytest -p no:cacheprovider -s --nvinterpose 2>&1",
						       project, bin, pytest_python), 300);
	ck_assert_msg(run.status == 0 && test_contains(run.output, "runtime files mapped: 1\n"), "%s", run.output);
	ck_assert_msg(test_contains(run.output, test_format(": runtime " NVI_VERSION " preloaded from %s;", pytest_runtime)) && test_contains(run.output, test_format("  nvrtc: %s\n", standin.lib)), "%s", run.output);
}
END_TEST

/* The real NVRTC in a CUDA 13 wheel folder, the toolkit hidden (ld.so --inhibit-cache): a test
   that loads it by path and compiles fails under plain pytest and passes with the option and with
   the ini key. With the builtins absent (the test expects the compile to fail) the option exits 0
   and names them as missed; strict mode exits non-zero. */
START_TEST(test_pytest_real_nvrtc_compiles_with_the_plugin)
{
	NEEDS_PYTEST();
	char *lib64 = test_format("%s/lib64", test_setting("NVI_CUDA_HOME"));
	if (access(test_format("%s/libnvrtc.so.13", lib64), R_OK) != 0) {
		printf("SKIP: no CUDA 13 toolkit at %s\n", lib64);
		return;
	}
	const char *loader = test_interpreter();
	for (int with_builtins = 1; with_builtins >= 0; with_builtins--) {
		char *root = test_tmpdir(), *lib = test_format("%s/site-packages/nvidia/cu13/lib", root), *project = test_format("%s/project", root);
		test_mkdirs(lib);
		test_mkdirs(project);
		test_copy_file(test_format("%s/libnvrtc.so.13", lib64), test_format("%s/libnvrtc.so.13", lib));
		if (with_builtins)
			test_copy_file(test_format("%s/libnvrtc-builtins.so.13.0", lib64), test_format("%s/libnvrtc-builtins.so.13.0", lib));
		test_write_file(test_format("%s/test_nvrtc.py", project),
				test_format("import ctypes\n"
					    "def test_compile():\n"
					    "    nvrtc = ctypes.CDLL('%s/libnvrtc.so.13')\n"
					    "    program = ctypes.c_void_p()\n"
					    "    nvrtc.nvrtcCreateProgram(ctypes.byref(program), b'extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }',"
					    " b'twice.cu', 0, None, None)\n"
					    "    assert (nvrtc.nvrtcCompileProgram(program, 0, None) == 0) == %s\n",
					    lib, with_builtins ? "True" : "False"));
		char *pytest = test_format("cd '%s' && '%s' --inhibit-cache '%s' -m pytest -p no:cacheprovider", project, loader, pytest_python);
		struct test_run plain = shell(no_env, test_format("%s 2>&1", pytest), 300);
		struct test_run run = shell(no_env, test_format("%s --nvinterpose 2>&1", pytest), 300);
		ck_assert_msg(run.status == 0 && test_contains(run.output, "= nvinterpose =") && test_contains(run.output, test_format("  nvrtc: %s\n", lib)),
			      "%s", run.output);
		if (with_builtins) {
			ck_assert_msg(plain.status == 1 && test_contains(plain.output, "1 failed"), "fails without: %s", plain.output);
			test_write_file(test_format("%s/pytest.ini", project), "[pytest]\nnvinterpose = true\n");
			struct test_run ini = shell(no_env, test_format("%s 2>&1", pytest), 300);
			ck_assert_msg(ini.status == 0 && test_contains(ini.output, test_format("  nvrtc: %s\n", lib)), "%s", ini.output);
			continue;
		}
		ck_assert_msg(plain.status == 0, "%s", plain.output);
		ck_assert_msg(test_contains(run.output, test_format("  libnvrtc-builtins.so.13.0 wanted by %s/libnvrtc.so.13 (", lib)), "%s", run.output);
		struct test_run strict = shell(no_env, test_format("%s --nvinterpose --nvinterpose-strict 2>&1", pytest), 300);
		ck_assert_msg(strict.status != 0 && test_contains(strict.output, "1 passed"), "%d %s", strict.status, strict.output);
	}
}
END_TEST

int main(void)
{
	if (!(python = find_python())) {
		printf("SKIP: /usr/bin/python3 lacks meson-python, venv or pip (Debian: python3-mesonpy python3-venv python3-pip)\n");
		return TEST_SKIP;
	}
	Suite *suite = suite_create("wheel");
	TCase *tc = tcase_create("wheel");
	tcase_set_timeout(tc, 300);
	tcase_add_unchecked_fixture(tc, build_and_install, remove_workspace);
	tcase_add_test(tc, test_wheel_is_py3_none_platform_with_one_runtime_and_no_links);
	tcase_add_test(tc, test_import_attaches_the_venvs_runtime_and_fixes_the_seed_case);
	tcase_add_test(tc, test_import_after_nvrtc_was_loaded_fixes_it_too);
	tcase_add_test(tc, test_python_m_nvinterpose_run_preloads_the_venvs_runtime);
	tcase_add_test(tc, test_launcher_options_status_and_errors);
	tcase_add_test(tc, test_run_on_windows_waits_for_the_launcher_and_returns_its_status);
	tcase_add_test(tc, test_python_m_nvinterpose_inspect_runs_the_wheels_inspector);
	tcase_add_test(tc, test_import_uses_the_runtime_already_in_the_process);
	tcase_add_test(tc, test_api_wraps_the_c_api_and_its_errors_say_what_is_wrong);
	tcase_add_test(tc, test_auto_attach_at_interpreter_start_only_with_nvinterpose_auto);
	tcase_add_test(tc, test_real_nvrtc_compiles_after_import_nvinterpose);
	tcase_add_test(tc, test_pytest_plugin_changes_nothing_unless_asked);
	tcase_add_test(tc, test_pytest_option_and_ini_key_attach_before_conftest);
	tcase_add_test(tc, test_pytest_strict_fails_on_a_warning_miss_only);
	tcase_add_test(tc, test_pytest_xdist_workers_attach_and_are_gathered);
	tcase_add_test(tc, test_pytest_uses_a_preloaded_runtime);
	tcase_add_test(tc, test_pytest_real_nvrtc_compiles_with_the_plugin);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
