"""The Windows wheel, assembled from the mingw cross build (meson-python cannot cross-build).

    windows_wheel.py --source ROOT --version VERSION --dll nvinterpose.dll \
                     --launcher nvinterpose-run.exe --out DIST [--strip STRIP] [--stamp FILE]

writes DIST/nvinterpose-VERSION-py3-none-win_amd64.whl (the cross build's `wheel` target runs it:
`meson compile -C BUILD wheel`). It holds what the Linux wheel holds, for Windows: the Python
package (python/nvinterpose) with nvinterpose.dll and nvinterpose-run.exe in its folder, the pytest
plugin beside it (python/nvinterpose_pytest.py), the .pth of NVINTERPOSE_AUTO, and the .dist-info. The metadata and the entry points come from
pyproject.toml through pyproject-metadata, the library meson-python writes the Linux wheel's with,
in the same form, so the two wheels cannot differ there. The tag is py3-none-win_amd64: no CPython
ABI (the DLL is loaded through ctypes), 64-bit Windows.

The DLL and the launcher must import Windows' own DLLs only: a mingw build that forgot -static
would need libgcc's or winpthreads' DLL, which no Windows has, and a child process given the DLL
would then fail to start. A file with any other import is refused, naming it.

With --strip, the DLL and the launcher go into the wheel without their debugging information
(`STRIP --strip-debug` on a copy), as a release's files are shipped; the build's own stay whole.

Every entry has the same date (SOURCE_DATE_EPOCH, else 1980-01-01), so the same inputs make the
same wheel.
"""

import argparse
import base64
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

TAG = "py3-none-win_amd64"
# What a Windows process has of its own: the system DLLs the build may import, compared without case.
WINDOWS_DLLS = {"kernel32.dll", "kernelbase.dll", "ntdll.dll", "msvcrt.dll", "advapi32.dll", "psapi.dll", "user32.dll"}
IMAGE_DIRECTORY_ENTRY_IMPORT = 1
IMAGE_FILE_MACHINE_AMD64 = 0x8664


class WheelError(Exception):
    pass


def pe_imports(data):
    """The machine of a PE file and the DLL names it imports through its import directory (delay
    loads are optional, and not read); raises WheelError when the file is not a PE image."""
    if data[:2] != b"MZ" or len(data) < 0x40:
        raise WheelError("not a PE file")
    pe, = struct.unpack_from("<I", data, 0x3C)
    if data[pe:pe + 4] != b"PE\0\0":
        raise WheelError("not a PE file")
    machine, sections, optional_size = struct.unpack_from("<HH12xH", data, pe + 4)
    optional = pe + 24
    magic, = struct.unpack_from("<H", data, optional)
    directories = optional + (112 if magic == 0x20B else 96)
    count, = struct.unpack_from("<I", data, directories - 4)
    if count <= IMAGE_DIRECTORY_ENTRY_IMPORT:
        return machine, []
    rva, _ = struct.unpack_from("<II", data, directories + 8 * IMAGE_DIRECTORY_ENTRY_IMPORT)
    table = [struct.unpack_from("<IIII", data, optional + optional_size + 40 * i + 8) for i in range(sections)]

    def offset(at):
        for virtual_size, virtual_address, raw_size, raw_pointer in table:
            if virtual_address <= at < virtual_address + max(virtual_size, raw_size):
                return raw_pointer + at - virtual_address
        raise WheelError("an import lies outside every section")

    names = []
    if rva == 0:
        return machine, names
    descriptor = offset(rva)
    while True:
        name_rva, = struct.unpack_from("<I", data, descriptor + 12)
        if name_rva == 0:
            return machine, names
        start = offset(name_rva)
        names.append(data[start:data.index(b"\0", start)].decode("ascii"))
        descriptor += 20


def check_imports(name, data):
    """Refuses a file that is not x64 or imports a DLL that is not Windows' own."""
    try:
        machine, imports = pe_imports(data)
    except (struct.error, ValueError, UnicodeDecodeError) as error:
        raise WheelError("%s: a malformed PE file (%s)" % (name, error))
    if machine != IMAGE_FILE_MACHINE_AMD64:
        raise WheelError("%s is not for x64 (machine 0x%04x): the wheel is %s" % (name, machine, TAG))
    foreign = [dll for dll in imports if dll.lower() not in WINDOWS_DLLS and not dll.lower().startswith("api-ms-win-")]
    if foreign:
        raise WheelError("%s imports %s, which Windows does not have (link it with -static)" % (name, ", ".join(foreign)))


def metadata(source, version):
    """METADATA and entry_points.txt from pyproject.toml, as meson-python writes them."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python before 3.11
        import tomli as tomllib
    try:
        import pyproject_metadata
    except ModuleNotFoundError:
        raise WheelError("pyproject-metadata is not installed (meson-python's own dependency; Debian: python3-pyproject-metadata)")
    with open(os.path.join(source, "pyproject.toml"), "rb") as file:
        pyproject = tomllib.load(file)
    project = pyproject_metadata.StandardMetadata.from_pyproject(pyproject, source)
    # The version is dynamic: meson.build's, set as meson-python sets it.
    if "version" in project.dynamic:
        project.version = version
    core = project.as_rfc822()
    core.headers["Version"] = [version]
    groups = dict(project.entrypoints)
    groups.update({"console_scripts": project.scripts, "gui_scripts": project.gui_scripts})
    entry_points = ""
    for group, entries in groups.items():
        if entries:
            entry_points += "[%s]\n" % group + "".join("%s = %s\n" % item for item in entries.items()) + "\n"
    return bytes(core), entry_points.encode()


def read(path):
    with open(path, "rb") as file:
        return file.read()


def read_stripped(path, strip):
    """The file's bytes, without debugging information when strip names the program to take it off."""
    if not strip:
        return read(path)
    with tempfile.TemporaryDirectory() as work:
        copy = os.path.join(work, os.path.basename(path))
        shutil.copyfile(path, copy)
        result = subprocess.run([strip, "--strip-debug", copy], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            raise WheelError("%s --strip-debug %s failed: %s" % (strip, os.path.basename(path), result.stdout.strip()))
        return read(copy)


def contents(arguments):
    """The wheel's entries, archive name -> bytes, in the order they are written."""
    package = os.path.join(arguments.source, "python", "nvinterpose")
    dll, launcher = read_stripped(arguments.dll, arguments.strip), read_stripped(arguments.launcher, arguments.strip)
    check_imports("nvinterpose.dll", dll)
    check_imports("nvinterpose-run.exe", launcher)
    version_py = read(os.path.join(package, "_version.py.in")).replace(b"@VERSION@", arguments.version.encode())
    core, entry_points = metadata(arguments.source, arguments.version)
    info = "nvinterpose-%s.dist-info" % arguments.version
    wheel = ("Wheel-Version: 1.0\nGenerator: nvinterpose tools/windows_wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % TAG).encode()
    return [
        ("nvinterpose/__init__.py", read(os.path.join(package, "__init__.py"))),
        ("nvinterpose/__main__.py", read(os.path.join(package, "__main__.py"))),
        ("nvinterpose/_version.py", version_py),
        ("nvinterpose/nvinterpose.dll", dll),
        ("nvinterpose/nvinterpose-run.exe", launcher),
        ("nvinterpose_pytest.py", read(os.path.join(arguments.source, "python", "nvinterpose_pytest.py"))),
        ("nvinterpose-auto.pth", read(os.path.join(arguments.source, "python", "nvinterpose-auto.pth"))),
        (info + "/METADATA", core),
        (info + "/WHEEL", wheel),
        (info + "/entry_points.txt", entry_points),
    ], info + "/RECORD"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


def write_wheel(path, entries, record_name):
    record = "".join(record_line(name, data) for name, data in entries) + record_name + ",,\n"
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    date = time.gmtime(max(epoch, 315532800))[:6]
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries + [(record_name, record.encode())]:
            entry = zipfile.ZipInfo(name, date)
            entry.external_attr = (0o755 if name.endswith((".dll", ".exe")) else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    os.replace(path + ".part", path)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Assembles the Windows wheel from the mingw cross build.")
    parser.add_argument("--source", required=True, help="the source tree (pyproject.toml, python/)")
    parser.add_argument("--version", required=True, help="the project's version (meson.build)")
    parser.add_argument("--dll", required=True, help="the cross-built nvinterpose.dll")
    parser.add_argument("--launcher", required=True, help="the cross-built nvinterpose-run.exe")
    parser.add_argument("--out", required=True, help="the folder the wheel is written to (made when missing)")
    parser.add_argument("--strip", help="the strip program that takes the debugging information off the DLL and the launcher")
    parser.add_argument("--stamp", help="a file to write the wheel's path to once it is written (the build's target)")
    arguments = parser.parse_args(argv)
    try:
        entries, record_name = contents(arguments)
        os.makedirs(arguments.out, exist_ok=True)
        path = os.path.join(arguments.out, "nvinterpose-%s-%s.whl" % (arguments.version, TAG))
        write_wheel(path, entries, record_name)
        if arguments.stamp:
            with open(arguments.stamp, "w") as stamp:
                stamp.write(path + "\n")
    except (OSError, WheelError) as error:
        sys.stderr.write("windows_wheel.py: %s\n" % error)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
