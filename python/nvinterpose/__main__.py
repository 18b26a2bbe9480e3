"""python -m nvinterpose: run a command with the package's runtime preloaded, or the inspector.

The `nvinterpose-run` command that installing the package creates is the same as
`python -m nvinterpose run`.
"""

import os
import shutil
import sys

import nvinterpose

USAGE = """\
Usage: python -m nvinterpose run [OPTIONS] [--] COMMAND [ARGS...]
       python -m nvinterpose inspect [ARGS...]
       python -m nvinterpose --version

run: runs COMMAND with the runtime of this package preloaded, so that NVIDIA libraries find
their dependents whoever loaded them; the same as the nvinterpose-run command the package
installs (options: python -m nvinterpose run --help).

inspect: runs nvinterpose-inspect (nvinterpose-inspect --help), when it is installed beside the
package or on PATH; the wheel does not carry it (it needs libelf).
"""

HERE = os.path.dirname(os.path.abspath(nvinterpose.__file__))


def _usage_error(subject, problem, program="nvinterpose", help_command="python -m nvinterpose --help"):
    """The one shape of a usage error, as the launchers and the inspector write it; status 2."""
    sys.stderr.write("%s: %s: %s\nTry '%s' for more information.\n" % (program, subject, problem, help_command))
    return 2


def run(arguments):
    """The package's shell launcher (nvinterpose-run beside the runtime): one implementation of
    the command line, the probe and --print-env; it finds the runtime beside itself."""
    if sys.platform == "win32":
        sys.stderr.write("nvinterpose-run: on Windows use nvinterpose-run.exe (the Windows wheel is not built yet)\n")
        return 2
    launcher = os.path.join(HERE, "nvinterpose-run")
    sys.stdout.flush()
    os.execv("/bin/sh", ["/bin/sh", launcher] + list(arguments))


def inspect(arguments):
    inspector = shutil.which("nvinterpose-inspect", path=os.pathsep.join([HERE, os.environ.get("PATH", "")]))
    if inspector is None:
        sys.stderr.write("nvinterpose: nvinterpose-inspect is not installed (the wheel does not carry it: it needs libelf);"
                         " build the project with meson to get it\n")
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
