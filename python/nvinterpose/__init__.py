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
    nvinterpose.report()                 # what the exit report knows, as data

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
    "Report",
    "ReportEntry",
    "families",
    "family_origin",
    "library_path",
    "origins",
    "patches",
    "register_folder",
    "report",
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


class _ReportTotals(ctypes.Structure):
    _fields_ = [
        ("origins", ctypes.c_longlong),
        ("supplied", ctypes.c_longlong),
        ("misses", ctypes.c_longlong),
        ("mixed_origins", ctypes.c_longlong),
        ("left_out", ctypes.c_longlong),
        ("kept", ctypes.c_int),
    ]


class _ReportEntry(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("family", ctypes.c_char_p),
        ("event", ctypes.c_char_p),
        ("asker", ctypes.c_char_p),
        ("path", ctypes.c_char_p),
        ("reason", ctypes.c_char_p),
        ("own", ctypes.c_char_p),
        ("places", ctypes.c_char_p),
        ("place_count", ctypes.c_int),
        ("times", ctypes.c_longlong),
        ("warning", ctypes.c_int),
    ]


Report = collections.namedtuple("Report", "totals kept left_out origins supplied misses mixed_origins")
Report.__doc__ = """What the exit report knows (nvi_report). totals: a dict of the figures ("origins",
"supplied", "misses", "mixed_origins"), None from a runtime older than the call; kept: whether the
lines are kept (NVINTERPOSE_REPORT set, to a pid or to "keep"), else the four lists are empty;
left_out: the lines the report's bounded store had no room for (the lists are cut); origins,
supplied, misses, mixed_origins: lists of ReportEntry, in the order they happened."""

ReportEntry = collections.namedtuple("ReportEntry", "kind name family event asker path reason own places place_count times warning")
ReportEntry.__doc__ = """One line of the report (struct nvi_report_entry): kind "origin", "supplied",
"miss" or "mixed-origin"; name the library's; family; event as the event log names it; asker the
object that asked (None when unknown); path the folder (origin), the copy (supplied) or the object
loaded (mixed-origin); reason; own the asker's own copy (mixed-origin); places a miss's places
looked in, ["FOLDER (STEP)", ...], as many as its line holds, place_count how many in all; times
how many times a miss happened; warning whether it was said at warning level."""

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
    global _found_in_process
    runtime = _runtime_in_process()
    _found_in_process = runtime is not None
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
    try:
        runtime.nvi_report.restype = ctypes.c_int
        runtime.nvi_report.argtypes = [ctypes.POINTER(_ReportTotals), ctypes.POINTER(_ReportEntry), ctypes.c_size_t]
    except AttributeError:  # a runtime older than the report's call
        pass
    return runtime


_found_in_process = False  # the process had the runtime before the import (preloaded, linked)
_runtime = _attach()


def _checked(result, filename=None):
    # OSError(code, ...) is already the subclass of the code (FileNotFoundError for ENOENT, ...).
    if result < 0:
        raise OSError(-result, os.strerror(-result), filename)
    return result


def _check_family(function, family):
    """ValueError naming the argument when the runtime does not know family (its EINVAL); True when
    it knows it. False for a runtime older than its list of families, which cannot tell: its
    EINVAL is then raised as it is."""
    try:
        known = families()
    except OSError:
        return False
    if family not in known:
        raise ValueError("%s(): family %r is not one the runtime knows (a family names a library: 'nvrtc' for libnvrtc.so.N"
                         " and nvrtc64_*.dll); the families: %s" % (function, family, ", ".join(known)))
    return True


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
    if result == -errno.EINVAL and _check_family("register_folder", family):
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


def report():
    """What the exit report knows, as a Report: the figures always, the lines when they are kept
    (NVINTERPOSE_REPORT set, to a pid or to "keep", when the runtime started). A runtime older than
    the call gives a Report with totals None and empty lists."""
    try:
        call = _runtime.nvi_report
    except AttributeError:  # a runtime older than the report's call
        return Report(None, False, 0, [], [], [], [])
    capacity = 64
    while True:
        totals, buffer = _ReportTotals(), (_ReportEntry * capacity)()
        total = _checked(call(ctypes.byref(totals), buffer, capacity))
        if total <= capacity:
            break
        capacity = total + 16
    lists = {"origin": [], "supplied": [], "miss": [], "mixed-origin": []}
    for e in buffer[:total]:
        places = [] if e.places is None else [_text(place) for place in e.places.split(b"\n") if place]
        entry = ReportEntry(e.kind.decode(), _text(e.name), _text(e.family), _text(e.event), _text(e.asker), _text(e.path),
                            _text(e.reason), _text(e.own), places, e.place_count, e.times, bool(e.warning))
        lists[entry.kind].append(entry)
    figures = {"origins": totals.origins, "supplied": totals.supplied, "misses": totals.misses, "mixed_origins": totals.mixed_origins}
    return Report(figures, bool(totals.kept), totals.left_out, lists["origin"], lists["supplied"], lists["miss"], lists["mixed-origin"])
