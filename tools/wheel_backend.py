"""The Python package's build backend: meson-python builds the wheel, then its tag is made honest.

The wheel holds a native library (the runtime) that any Python loads with ctypes, so its tag is
py3-none-<platform>. meson-python 0.12 (Debian 12's) calls a wheel with nothing in platlib pure
(py3-none-any), and newer releases tag anything in platlib with the interpreter's ABI; the runtime is
installed in purelib and the tag is set here.

The platform is manylinux_2_<N>_<machine> when every ELF file in the wheel needs only the libraries
the manylinux policy allows and no symbol version above GLIBC_2.<N> (at least 17), as auditwheel would
check it (auditwheel is not packaged in Debian); otherwise it stays linux_<machine>. A wheel with a
symbolic link in it is refused: wheels cannot hold them.
"""

import base64
import hashlib
import os
import platform
import re
import stat
import struct
import sysconfig
import zipfile

import mesonpy
from mesonpy import build_sdist, get_requires_for_build_sdist, get_requires_for_build_wheel  # noqa: F401

# The libraries the manylinux policy lets a wheel need (PEP 600; auditwheel's list), and the loader.
MANYLINUX_LIBRARIES = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libresolv.so.2", "libutil.so.1",
    "libnsl.so.1", "libgcc_s.so.1", "libstdc++.so.6", "libGL.so.1", "libX11.so.6", "libXext.so.6", "libXrender.so.1",
    "libICE.so.6", "libSM.so.6", "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}
# Version namespaces those libraries use that the check understands; any other one (GCC_, GLIBCXX_,
# ...) keeps the wheel on the plain linux tag.
GLIBC_VERSION = re.compile(r"^GLIBC_2\.(\d+)(?:\.\d+)?$")

SHT_DYNAMIC, SHT_GNU_VERNEED = 6, 0x6FFFFFFE
DT_NEEDED = 1


def _elf_needs(data):
    """(needed sonames, needed symbol versions) of a little-endian ELF64 file, from its sections;
    None when the file is not one."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

    def string(section_index, offset):
        start = sections[section_index][4] + offset
        return data[start:data.index(b"\0", start)].decode()

    needed, versions = [], []
    for kind, offset, size, link in ((s[1], s[4], s[5], s[6]) for s in sections):
        if kind == SHT_DYNAMIC:
            for entry in range(0, size, 16):
                tag, value = struct.unpack_from("<qQ", data, offset + entry)
                if tag == DT_NEEDED:
                    needed.append(string(link, value))
        elif kind == SHT_GNU_VERNEED:
            at = offset
            while True:
                _, count, _, aux, following = struct.unpack_from("<HHIII", data, at)
                entry = at + aux
                for _ in range(count):
                    _, _, _, name, next_aux = struct.unpack_from("<IHHII", data, entry)
                    versions.append(string(link, name))
                    entry += next_aux
                if not following:
                    break
                at += following
    return needed, versions


def platform_tag(files):
    """The platform tag that the wheel's files (name -> bytes) allow."""
    machine = platform.machine()
    plain = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    if not plain.startswith("linux"):
        return plain
    oldest = 17
    for name, data in files.items():
        needs = _elf_needs(data)
        if needs is None:
            continue
        needed, versions = needs
        if any(library not in MANYLINUX_LIBRARIES for library in needed):
            return plain
        for version in versions:
            match = GLIBC_VERSION.match(version)
            if not match:
                return plain
            oldest = max(oldest, int(match.group(1)))
    return "manylinux_2_%d_%s" % (oldest, machine)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def retag(path):
    """Rewrites the wheel at path as py3-none-<platform> (not purelib); returns its new name."""
    with zipfile.ZipFile(path) as wheel:
        entries = [(info, wheel.read(info)) for info in wheel.infolist()]
    for info, _ in entries:
        if stat.S_ISLNK(info.external_attr >> 16):
            raise RuntimeError("the wheel holds a symbolic link, which wheels cannot: %s" % info.filename)
    tag = "py3-none-" + platform_tag({info.filename: data for info, data in entries})
    distribution, version = os.path.basename(path).split("-")[:2]
    info_dir = "%s-%s.dist-info" % (distribution, version)
    rewritten = []
    for info, data in entries:
        if info.filename == info_dir + "/WHEEL":
            lines = [line for line in data.decode().splitlines() if not line.startswith(("Tag:", "Root-Is-Purelib:"))]
            data = ("\n".join(lines + ["Root-Is-Purelib: false", "Tag: " + tag]) + "\n").encode()
        rewritten.append((info, data))
    records = {info.filename: data for info, data in rewritten}
    record_name = info_dir + "/RECORD"
    record = [_record_line(name, data) for name, data in records.items() if name != record_name] + [record_name + ",,"]
    records[record_name] = ("\n".join(record) + "\n").encode()
    name = "%s-%s-%s.whl" % (distribution, version, tag)
    target = os.path.join(os.path.dirname(path), name)
    with zipfile.ZipFile(target + ".part", "w", zipfile.ZIP_DEFLATED) as wheel:
        for info, _ in rewritten:
            wheel.writestr(info, records[info.filename])
    os.replace(target + ".part", target)
    if os.path.abspath(target) != os.path.abspath(path):
        os.remove(path)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    built = mesonpy.build_wheel(wheel_directory, config_settings, metadata_directory)
    return retag(os.path.join(wheel_directory, built))
