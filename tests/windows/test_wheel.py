"""The Windows wheel (tools/windows_wheel.py, `meson compile -C BUILD wheel`), checked as its users
and their tools see it, then used under Wine:

  - `python -m wheel unpack` unpacks it, which checks every file against the RECORD's hash;
  - `pip install --no-index --no-deps --platform win_amd64 --only-binary=:all: --target DIR`
    installs it (pip on Linux, installing for Windows);
  - its DLL and launcher import Windows' own DLLs only (objdump -p), and the script refuses a DLL
    that imports another one;
  - its metadata names the project's version and its entry points are pyproject.toml's scripts;
  - test_hosts.exe's `wheel` case runs under Wine with the unpacked package's nvinterpose.dll and
    nvinterpose-run.exe: the hosts get that DLL, and it does the work.

Prints "ok: ..." or "FAIL: ..." for each check and exits 0, 1, or 77 (skipped, saying why).
Environment: NVI_WHEEL_DIST (the folder the wheel is in), NVI_VERSION, NVI_SOURCE_ROOT,
NVI_OBJDUMP, NVI_WINE, NVI_TEST_HOSTS, and what test_hosts.exe reads (NVI_STANDIN_CUSPARSE, a DLL
that imports nvJitLink, NVI_LAUNCHER).
"""

import configparser
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import tomllib
except ModuleNotFoundError:  # Python before 3.11
    import tomli as tomllib

WINDOWS_DLLS = {"kernel32.dll", "msvcrt.dll"}
failures = 0


def check(held, what):
    global failures
    print("%s: %s" % ("ok" if held else "FAIL", what), flush=True)
    failures += not held


def skip(why):
    print("skipped: %s" % why, flush=True)
    sys.exit(1 if failures else 77)


def run(command, **keywords):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **keywords)
    for line in result.stdout.splitlines():
        print("    | " + line)
    return result


def imports(objdump, path):
    result = subprocess.run([objdump, "-p", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return re.findall(r"^\s*DLL Name: (\S+)$", result.stdout, re.MULTILINE)


def main():
    version = os.environ["NVI_VERSION"]
    wheels = glob.glob(os.path.join(os.environ["NVI_WHEEL_DIST"], "nvinterpose-*.whl"))
    name = "nvinterpose-%s-py3-none-win_amd64.whl" % version
    check([os.path.basename(path) for path in wheels] == [name], "the build wrote one wheel, %s (%s)" % (name, wheels))
    if not wheels:
        return
    wheel = wheels[0]
    try:
        import pip  # noqa: F401
        import wheel as wheel_tool  # noqa: F401
    except ModuleNotFoundError as missing:
        skip("this Python has no %s package to unpack and install the wheel with (Debian: python3-wheel, python3-pip)"
             % missing.name)
    work = tempfile.mkdtemp(prefix="nvinterpose-windows-wheel-")
    try:
        unpacked = run([sys.executable, "-m", "wheel", "unpack", "-d", work, wheel])
        package = os.path.join(work, "nvinterpose-%s" % version, "nvinterpose")
        check(unpacked.returncode == 0 and os.path.isdir(package), "python -m wheel unpack checks the RECORD's hashes and unpacks it")

        target = os.path.join(work, "target")
        installed = run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--platform", "win_amd64",
                         "--only-binary=:all:", "--target", target, wheel])
        listed = sorted(os.listdir(os.path.join(target, "nvinterpose"))) if installed.returncode == 0 else []
        check(installed.returncode == 0 and {"nvinterpose.dll", "nvinterpose-run.exe", "__init__.py", "__main__.py",
                                             "_version.py"} <= set(listed)
              and os.path.isfile(os.path.join(target, "nvinterpose-auto.pth"))
              and os.path.isfile(os.path.join(target, "nvinterpose_pytest.py")),
              "pip install --platform win_amd64 --target installs the package with its DLL and launcher, and the pytest plugin (%s)"
              % listed)

        objdump = os.environ["NVI_OBJDUMP"]
        for file in ("nvinterpose.dll", "nvinterpose-run.exe"):
            names = imports(objdump, os.path.join(package, file))
            check(names and {dll.lower() for dll in names} <= WINDOWS_DLLS, "%s imports Windows' own DLLs only: %s" % (file, names))

        script = os.path.join(os.environ["NVI_SOURCE_ROOT"], "tools", "windows_wheel.py")
        refused = run([sys.executable, script, "--source", os.environ["NVI_SOURCE_ROOT"], "--version", version,
                       "--dll", os.environ["NVI_STANDIN_CUSPARSE"], "--launcher", os.environ["NVI_LAUNCHER"],
                       "--out", os.path.join(work, "refused")])
        check(refused.returncode == 1 and "imports nvJitLink_120_0.dll, which Windows does not have" in refused.stdout
              and not os.path.exists(os.path.join(work, "refused")),
              "windows_wheel.py refuses a DLL that imports a DLL Windows does not have, and writes nothing")

        info = os.path.join(work, "nvinterpose-%s" % version, "nvinterpose-%s.dist-info" % version)
        with open(os.path.join(info, "METADATA")) as file:
            metadata = file.read()
        check("\nName: nvinterpose\n" in metadata and "\nVersion: %s\n" % version in metadata, "METADATA names nvinterpose %s" % version)
        with open(os.path.join(os.environ["NVI_SOURCE_ROOT"], "pyproject.toml"), "rb") as file:
            project = tomllib.load(file)["project"]
        expected = dict(project.get("entry-points", {}), console_scripts=project["scripts"])
        entry_points = configparser.ConfigParser(delimiters=("=",))
        entry_points.optionxform = str
        entry_points.read(os.path.join(info, "entry_points.txt"))
        written = {group: dict(entry_points[group]) for group in entry_points.sections()}
        check(written == expected and "pytest11" in written,
              "entry_points.txt holds pyproject.toml's scripts and entry points, the pytest plugin's too: %r" % written)

        environment = dict(os.environ)
        environment["NVI_RUNTIME"] = os.path.join(package, "nvinterpose.dll")
        environment["NVI_LAUNCHER"] = os.path.join(package, "nvinterpose-run.exe")
        hosts = run([os.environ["NVI_WINE"], os.environ["NVI_TEST_HOSTS"], "wheel"], env=environment, cwd=work)
        check(hosts.returncode == 0, "under Wine the hosts use the unpacked wheel's nvinterpose.dll and nvinterpose-run.exe (exit %d)"
              % hosts.returncode)
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
print("some checks failed" if failures else "all checks held")
sys.exit(1 if failures else 0)
