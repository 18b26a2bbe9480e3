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
       nvinterpose-run [OPTIONS] [--] COMMAND [ARGS...]
       python -m nvinterpose inspect [ARGS...]
       python -m nvinterpose --version

run: runs COMMAND with the runtime of this package preloaded, so that NVIDIA libraries find
their dependents whoever loaded them. Returns COMMAND's exit status.

Options:
  --policy P      fallback (default), coherent or off       (NVINTERPOSE_POLICY)
  --log L         error (default), warn, info or debug       (NVINTERPOSE_LOG)
  --log-file F    append JSON-lines events to F              (NVINTERPOSE_LOG_FILE)
  --path DIRS     extra folders, ':'-separated               (NVINTERPOSE_PATH)
  --library F     use this runtime instead of the package's ({library})
  --print-env     print the environment lines instead of running a command
  -h, --help      show this help
  --version       show the version

inspect: runs nvinterpose-inspect (nvinterpose-inspect --help), when it is installed beside the
package or on PATH; the wheel does not carry it (it needs libelf).
"""

CHOICES = {
    "--policy": ("NVINTERPOSE_POLICY", ("fallback", "coherent", "off")),
    "--log": ("NVINTERPOSE_LOG", ("error", "warn", "info", "debug")),
    "--log-file": ("NVINTERPOSE_LOG_FILE", None),
    "--path": ("NVINTERPOSE_PATH", None),
}


class UsageError(Exception):
    pass


def _usage():
    try:
        library = nvinterpose.library_path()
    except OSError as error:
        library = error.strerror
    return USAGE.format(library=library)


def _die(message, status=2, program="nvinterpose-run"):
    sys.stderr.write("%s: %s\n" % (program, message))
    return status


def _parse(arguments):
    """(action, settings, library, print_env, command) from the run arguments; action is "help",
    "version" or "run"."""
    settings, library, print_env = {}, None, False
    i = 0
    while i < len(arguments):
        argument = arguments[i]
        if argument in ("-h", "--help"):
            return "help", settings, library, print_env, []
        if argument == "--version":
            return "version", settings, library, print_env, []
        if argument in CHOICES or argument == "--library":
            if i + 1 >= len(arguments):
                raise UsageError("%s needs a value (see --help)" % argument)
            value = arguments[i + 1]
            if argument == "--library":
                library = value
            else:
                name, allowed = CHOICES[argument]
                if allowed and value not in allowed:
                    raise UsageError("%s: '%s' is not one of %s" % (argument, value, ", ".join(allowed)))
                settings[name] = value
            i += 2
        elif argument == "--print-env":
            print_env = True
            i += 1
        elif argument == "--":
            return "run", settings, library, print_env, arguments[i + 1 :]
        elif argument.startswith("-"):
            raise UsageError("unknown option '%s' (see --help)" % argument)
        else:
            return "run", settings, library, print_env, arguments[i:]
    return "run", settings, library, print_env, []


def _preload_list(library, existing):
    """The runtime first; what was preloaded before stays, and the runtime is never there twice."""
    kept = [entry for entry in existing.replace(" ", ":").split(":")
            if entry and entry != library and not os.path.basename(entry).startswith("libnvinterpose.so")]
    return ":".join([library] + kept)


def run(arguments):
    try:
        action, settings, library, print_env, command = _parse(arguments)
    except UsageError as error:
        return _die(str(error))
    if action == "help":
        sys.stdout.write(_usage())
        return 0
    if action == "version":
        print("nvinterpose-run %s" % nvinterpose.__version__)
        return 0
    if sys.platform == "win32":
        return _die("on Windows use nvinterpose-run.exe (the Windows wheel is not built yet)")
    try:
        library = os.path.abspath(library) if library else nvinterpose.library_path()
    except OSError as error:
        return _die(error.strerror)
    if not os.path.isfile(library):
        return _die("--library: no such file: %s" % library)
    environment = dict(os.environ, **settings)
    environment["LD_PRELOAD"] = _preload_list(library, environment.get("LD_PRELOAD", ""))
    if print_env:
        print("LD_PRELOAD=%s" % environment["LD_PRELOAD"])
        for name, _ in CHOICES.values():
            if environment.get(name):
                print("%s=%s" % (name, environment[name]))
        if not command:
            return 0
    if not command:
        return _die("no command given (see --help)")
    if shutil.which(command[0], path=environment.get("PATH")) is None and os.sep not in command[0]:
        return _die("command not found: %s" % command[0], 127)
    sys.stdout.flush()
    try:
        os.execvpe(command[0], command, environment)
    except OSError as error:
        return _die("%s: %s" % (command[0], error.strerror), 127 if isinstance(error, FileNotFoundError) else 126)


def inspect(arguments):
    here = os.path.dirname(os.path.abspath(nvinterpose.__file__))
    inspector = shutil.which("nvinterpose-inspect", path=os.pathsep.join([here, os.environ.get("PATH", "")]))
    if inspector is None:
        return _die("nvinterpose-inspect is not installed (the wheel does not carry it: it needs libelf);"
                    " build the project with meson to get it", program="nvinterpose")
    sys.stdout.flush()
    os.execv(inspector, [inspector] + arguments)


def main(argv=None):
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] in ([], ["-h"], ["--help"]):
        sys.stdout.write(_usage())
        return 0 if arguments else 2
    if arguments[0] == "--version":
        print("nvinterpose %s (runtime %s, %s)" % (nvinterpose.__version__, nvinterpose.version(), nvinterpose.runtime_path()))
        return 0
    if arguments[0] == "run":
        return run(arguments[1:])
    if arguments[0] == "inspect":
        return inspect(arguments[1:])
    return _die("unknown command '%s' (run or inspect; see --help)" % arguments[0], program="nvinterpose")


def run_main():
    """The nvinterpose-run command."""
    return run(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
