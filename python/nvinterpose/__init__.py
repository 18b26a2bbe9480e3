"""nvinterpose: NVIDIA libraries find their dependents, whoever loaded them and in whatever order.

Importing the package attaches the runtime this package ships (libnvinterpose.so on Linux,
nvinterpose.dll on Windows) to the running interpreter, once. From then on every library load in
the process reaches it, before or after CUDA libraries were loaded: NVRTC finds its builtins,
cuSPARSE the nvJitLink of its sibling wheel. A process that already has the runtime (started
through nvinterpose-run or LD_PRELOAD, or attached from another path) keeps that one: the package
then talks to it.

    import nvinterpose
    nvinterpose.origins()                # [("nvrtc", "/venv/.../nvidia/cu13/lib"), ...]
    nvinterpose.family_origin("nvrtc")   # the first folder NVRTC was loaded from
    nvinterpose.families()               # ["cudart", "nvrtc", "nvrtc-builtins", ...]
    nvinterpose.register_folder("nvrtc", "/opt/nvrtc/lib")
    nvinterpose.rescan()                 # the attach scan again
    nvinterpose.patches()                # what attaching patched (Linux)

A family the runtime does not know raises ValueError naming the argument and the families; a
family not loaded yet, LookupError; a folder that is not absolute, ValueError; one that does not
exist, FileNotFoundError or NotADirectoryError; other errors from the runtime, OSError. `python -m nvinterpose run --
python app.py` runs a command with the runtime preloaded (see `python -m nvinterpose --help`).
"""

import collections
import ctypes
import errno
import glob
import os
import sys

from ._version import __version__

__all__ = [
    "__version__",
    "Patch",
    "families",
    "family_origin",
    "library_path",
    "origins",
    "patches",
    "register_folder",
    "rescan",
    "runtime_path",
    "version",
]

_WINDOWS = sys.platform == "win32"


def library_path():
    """The runtime file this package ships (whatever its exact name: libnvinterpose.so*,
    nvinterpose*.dll), in the package's own folder."""
    here = os.path.dirname(os.path.abspath(__file__))
    pattern = "nvinterpose*.dll" if _WINDOWS else "libnvinterpose.so*"
    found = sorted(
        path for path in glob.glob(os.path.join(here, pattern)) if os.path.isfile(path) and not os.path.islink(path)
    )
    if not found:
        raise OSError(errno.ENOENT, "the runtime is not in this package (%s)" % os.path.join(here, pattern))
    return found[0]


class _Origin(ctypes.Structure):
    _fields_ = [("family", ctypes.c_char_p), ("folder", ctypes.c_char_p)]


class _Patch(ctypes.Structure):
    _fields_ = [
        ("object", ctypes.c_char_p),
        ("symbol", ctypes.c_char_p),
        ("place", ctypes.c_char_p),
        ("state", ctypes.c_char_p),
        ("target", ctypes.c_char_p),
        ("count", ctypes.c_int),
        ("error", ctypes.c_int),
    ]


Patch = collections.namedtuple("Patch", "object symbol place state target count error")
Patch.__doc__ = """What attaching changed for one object, function and place (nvi_list_patches):
object is the object's path ("" for the main program); symbol "dlopen" or "dlmopen"; place "got"
(the object's slots) or "dynsym" (libc's symbol entries); state "patched", "foreign" (left alone:
another function is there, in target) or "refused" (mprotect refused it: error is the errno);
count how many slots or entries."""


def _runtime_in_process():
    """The runtime the process already has, found without loading anything: on Linux one in the
    global scope (preloaded or linked), on Windows an nvinterpose.dll already loaded."""
    if _WINDOWS:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.GetModuleHandleW.restype = ctypes.c_void_p
        kernel32.GetModuleHandleW.argtypes = [ctypes.c_wchar_p]
        handle = kernel32.GetModuleHandleW("nvinterpose.dll")
        return ctypes.WinDLL("nvinterpose.dll", handle=handle) if handle else None
    process = ctypes.CDLL(None)
    try:
        process.nvi_version
    except AttributeError:
        return None
    return process


def _attach():
    runtime = _runtime_in_process()
    if runtime is None:
        # Loading it attaches it; a copy attached from elsewhere (RTLD_LOCAL, so not found above)
        # is found by the runtime itself, which then forwards every call to that one.
        runtime = (ctypes.WinDLL if _WINDOWS else ctypes.CDLL)(library_path())
    runtime.nvi_version.restype = ctypes.c_void_p
    runtime.nvi_version.argtypes = []
    runtime.nvi_family_origin.restype = ctypes.c_int
    runtime.nvi_family_origin.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    runtime.nvi_register_folder.restype = ctypes.c_int
    runtime.nvi_register_folder.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    runtime.nvi_list_origins.restype = ctypes.c_int
    runtime.nvi_list_origins.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Origin), ctypes.c_size_t]
    runtime.nvi_rescan.restype = ctypes.c_int
    runtime.nvi_rescan.argtypes = []
    try:
        runtime.nvi_list_families.restype = ctypes.c_int
        runtime.nvi_list_families.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
    except AttributeError:  # a runtime older than the list of families
        pass
    try:
        runtime.nvi_list_patches.restype = ctypes.c_int
        runtime.nvi_list_patches.argtypes = [ctypes.POINTER(_Patch), ctypes.c_size_t]
    except AttributeError:  # a runtime older than the patcher
        pass
    return runtime


_runtime = _attach()


def _checked(result, filename=None):
    if result < 0:
        code = -result
        error = {errno.ENOENT: FileNotFoundError, errno.ENOTDIR: NotADirectoryError}.get(code, OSError) if filename else OSError
        raise error(code, os.strerror(code), filename) if filename else error(code, os.strerror(code))
    return result


def _check_family(function, family):
    """ValueError naming the argument when the runtime does not know family (its EINVAL)."""
    known = families()
    if family not in known:
        raise ValueError("%s(): family %r is not one the runtime knows (a family names a library: 'nvrtc' for libnvrtc.so.N"
                         " and nvrtc64_*.dll); the families: %s" % (function, family, ", ".join(known)))


def _text(value):
    return None if value is None else os.fsdecode(value)


def version():
    """The version of the runtime serving the process, e.g. "0.1.0"."""
    return ctypes.string_at(_runtime.nvi_version()).decode()


def runtime_path():
    """The file of the runtime serving the process (this package's, or the one it already had)."""
    if _WINDOWS:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.GetModuleFileNameW.restype = ctypes.c_uint32
        kernel32.GetModuleFileNameW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p, ctypes.c_uint32]
        buffer = ctypes.create_unicode_buffer(32768)
        if not kernel32.GetModuleFileNameW(ctypes.c_void_p(_runtime._handle), buffer, len(buffer)):
            raise ctypes.WinError(ctypes.get_last_error())
        return buffer.value

    class DlInfo(ctypes.Structure):
        _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]

    dladdr = ctypes.CDLL(None).dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    info = DlInfo()
    # The version string lies in the image of the runtime that answered.
    if not dladdr(_runtime.nvi_version(), ctypes.byref(info)) or not info.fname:
        raise OSError(errno.ENOENT, "the runtime's file is unknown")
    return os.path.abspath(os.fsdecode(info.fname))


def families():
    """The families the runtime knows ("cudart", "nvrtc", "nvrtc-builtins", "cublas", ...), the
    names the other functions take, in the order of its table."""
    try:
        list_families = _runtime.nvi_list_families
    except AttributeError:  # a runtime older than the list of families
        raise OSError(errno.ENOSYS, "the runtime serving the process (%s) cannot list its families" % version())
    capacity = 128
    while True:
        buffer = (ctypes.c_char_p * capacity)()
        total = _checked(list_families(buffer, capacity))
        if total <= capacity:
            return [name.decode() for name in buffer[:total]]
        capacity = total


def origins(family=None):
    """Every registered origin as (family, folder), in the order first seen; of one family when
    family is given (ValueError for a family the runtime does not know)."""
    name = None if family is None else family.encode()
    capacity = 64
    while True:
        buffer = (_Origin * capacity)()
        result = _runtime.nvi_list_origins(name, buffer, capacity)
        if result == -errno.EINVAL:
            _check_family("origins", family)
        total = _checked(result)
        if total <= capacity:
            return [(entry.family.decode(), _text(entry.folder)) for entry in buffer[:total]]
        capacity = total + 16


def family_origin(family):
    """The first folder a family ("nvrtc", "cublasLt", ...) was loaded from; LookupError when no
    library of the family was loaded (nor a folder registered for it) yet, ValueError for a family
    the runtime does not know."""
    size = 4096
    while True:
        buffer = ctypes.create_string_buffer(size)
        result = _runtime.nvi_family_origin(family.encode(), buffer, size)
        if result == -errno.EINVAL:
            _check_family("family_origin", family)
        if result == -errno.ENOENT:
            raise LookupError("family_origin(): no library of family %r was loaded (nor a folder registered for it) yet" % family)
        if result != -errno.ERANGE:
            _checked(result)
            return _text(buffer.value)
        size *= 4


def register_folder(family, folder):
    """Registers an absolute, existing folder as an origin of family. ValueError for a family the
    runtime does not know or a folder that is not absolute; FileNotFoundError or
    NotADirectoryError for one that is not a folder."""
    result = _runtime.nvi_register_folder(family.encode(), os.fsencode(folder))
    if result == -errno.EINVAL:
        _check_family("register_folder", family)
        raise ValueError("register_folder(): folder %r is not an absolute path" % (folder,))
    _checked(result, folder)


def rescan():
    """The attach scan again; returns how many dependents it loaded."""
    return _checked(_runtime.nvi_rescan())


def patches():
    """What attaching patched, as a list of Patch (empty when the runtime was preloaded, or on
    Windows)."""
    try:
        list_patches = _runtime.nvi_list_patches
    except AttributeError:  # a runtime older than the patcher
        return []
    capacity = 64
    while True:
        buffer = (_Patch * capacity)()
        total = _checked(list_patches(buffer, capacity))
        if total <= capacity:
            return [
                Patch(_text(p.object), p.symbol.decode(), p.place.decode(), p.state.decode(), _text(p.target), p.count, p.error)
                for p in buffer[:total]
            ]
        capacity = total + 16
