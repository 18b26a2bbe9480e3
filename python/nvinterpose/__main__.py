"""python -m nvinterpose: run a command with the package's runtime preloaded, or the inspector.

The `nvinterpose-run` command that installing the package creates is the same as
`python -m nvinterpose run`.
"""

import os
import shutil
import subprocess
import sys

import nvinterpose

USAGE = """\
Usage: python -m nvinterpose run [OPTIONS] [--] COMMAND [ARGS...]
       python -m nvinterpose inspect [ARGS...]
       python -m nvinterpose --version

run: runs COMMAND with the runtime of this package preloaded, so that NVIDIA libraries find
their dependents whoever loaded them; the same as the nvinterpose-run command the package
installs (options: python -m nvinterpose run --help). On Windows it runs the package's
nvinterpose-run.exe, waits for it and exits with its status.

inspect: runs nvinterpose-inspect (nvinterpose-inspect --help), the one the Linux wheel carries
beside the package, or else one on PATH.
"""

HERE = os.path.dirname(os.path.abspath(nvinterpose.__file__))


def _usage_error(subject, problem, program="nvinterpose", help_command="python -m nvinterpose --help"):
    """The one shape of a usage error, as the launchers and the inspector write it; status 2."""
    sys.stderr.write("%s: %s: %s\nTry '%s' for more information.\n" % (program, subject, problem, help_command))
    return 2


def _exit_status(code):
    """A Windows exit code (a DWORD, as Popen reports it) as sys.exit passes it on unchanged: the
    codes of 2**31 and above (NTSTATUS values such as 0xC0000135) as the negative int of the same
    32 bits, which ExitProcess takes back as the same DWORD."""
    return code - 2**32 if code >= 2**31 else code


def _wait_for(command):
    """Runs command, waits for it and returns its exit status. Ctrl+C reaches every process of the
    console, the command's too, which decides what it means. This process goes on waiting, so the
    status is the command's own and nothing is left running behind it."""
    process = subprocess.Popen(command)
    while True:
        try:
            return _exit_status(process.wait())
        except KeyboardInterrupt:
            continue


def run(arguments, windows=sys.platform == "win32"):
    """Runs the package's launcher, which lies beside its runtime. On Linux that is the shell
    launcher (nvinterpose-run), one implementation of the command line, the probe and --print-env,
    and it takes this process's place (exec). On Windows it is nvinterpose-run.exe, which creates
    the program with the DLL in its import table. Windows has no exec (os.execv starts a new
    process and returns at once), so this process waits for the launcher and returns its exit
    status."""
    launcher = os.path.join(HERE, "nvinterpose-run.exe" if windows else "nvinterpose-run")
    if not os.path.isfile(launcher):
        sys.stderr.write("nvinterpose-run: %s is missing: the package is not installed whole\n" % launcher)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    if windows:
        return _wait_for([launcher] + list(arguments))
    os.execv("/bin/sh", ["/bin/sh", launcher] + list(arguments))


def inspect(arguments, windows=sys.platform == "win32"):
    """Runs the inspector beside the package (the Linux wheel's, a program of its own with libelf
    linked in), or else one on PATH, in this process's place."""
    if windows:
        sys.stderr.write("nvinterpose: nvinterpose-inspect reads ELF files: it is for Linux, and the Windows wheel does not carry it\n")
        return 2
    inspector = shutil.which("nvinterpose-inspect", path=os.pathsep.join([HERE, os.environ.get("PATH", "")]))
    if inspector is None:
        sys.stderr.write("nvinterpose: nvinterpose-inspect is neither in %s nor on PATH (a wheel built without libelf's static archive"
                         " does not carry it; Debian: libelf-dev)\n" % HERE)
        return 2
    sys.stdout.flush()
    os.execv(inspector, [inspector] + arguments)


def main(argv=None):
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    if not arguments:
        return _usage_error("COMMAND", "no command given (run or inspect)")
    if arguments[0] in ("-V", "--version"):
        print("nvinterpose %s (runtime %s, %s)" % (nvinterpose.__version__, nvinterpose.version(), nvinterpose.runtime_path()))
        return 0
    if arguments[0] == "run":
        return run(arguments[1:])
    if arguments[0] == "inspect":
        return inspect(arguments[1:])
    if arguments[0].startswith("-"):
        return _usage_error(arguments[0], "unknown option")
    return _usage_error(arguments[0], "unknown command (run or inspect)")


def run_main():
    """The nvinterpose-run command."""
    return run(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
