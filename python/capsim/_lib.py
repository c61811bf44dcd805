"""libcapsim found and described to ctypes: the functions of capsim.h with
their argument and result types, and the errors its statuses raise."""

import ctypes
import ctypes.util
import os
import shutil
import subprocess
import threading

SONAME = "libcapsim.so.0"
MAJOR = 0  # the ABI this package speaks: libcapsim.so.0, symbols CAPSIM_0


class Error(Exception):
    """A failure of capsim: status is capsim.h's (1 runtime, 2 input, 3
    usage, as the capsim command's exit statuses), diagnostics capsim's own
    text (file:line or the --set edit, the field, expected and found)."""

    def __init__(self, status, diagnostics):
        super().__init__(diagnostics.rstrip("\n"))
        self.status = status
        self.diagnostics = diagnostics

    @staticmethod
    def of(status, diagnostics):
        cls = {1: RunFailure, 2: InputError, 3: UsageError}.get(status, Error)
        return cls(status, diagnostics)


class RunFailure(Error):
    """A failure while running (a store or file that cannot be read or
    written): the capsim command's exit status 1."""


class InputError(Error):
    """Bad input (a scenario, an edit, a sweep file, a filter refused): the
    capsim command's exit status 2."""


class UsageError(Error):
    """A call the library cannot make (no such key, a bad argument)."""


class LibraryNotFound(Error):
    """libcapsim could not be found or loaded; the message says where it
    looked."""


def _pkg_config_libdir():
    """pkg-config's libdir of capsim, or None (no pkg-config, no capsim.pc)."""
    if not shutil.which("pkg-config"):
        return None
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "capsim"],
                             capture_output=True, text=True, check=False, timeout=30)
    except OSError:
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _candidates():
    """(where it came from, what to dlopen) in the order tried."""
    env = os.environ.get("CAPSIM_LIBRARY")
    if env:
        path = os.path.join(env, SONAME) if os.path.isdir(env) else env
        yield "CAPSIM_LIBRARY", path
    libdir = _pkg_config_libdir()
    if libdir:
        yield "pkg-config capsim's libdir", os.path.join(libdir, SONAME)
    else:
        yield "pkg-config capsim", None
    found = ctypes.util.find_library("capsim")
    yield "ctypes.util.find_library('capsim')", found
    yield "the dynamic linker's search (LD_LIBRARY_PATH, ld.so.cache)", SONAME


def _open():
    tried = []
    for where, path in _candidates():
        if not path:
            tried.append("%s: none" % where)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s: %s" % (where, e))
    raise LibraryNotFound(1, "capsim: cannot load libcapsim; tried\n  " + "\n  ".join(tried) +
                          "\nInstall it (cmake --install BUILD --prefix PREFIX) and set "
                          "CAPSIM_LIBRARY to PREFIX/lib/" + SONAME + ", or add "
                          "PREFIX/lib/pkgconfig to PKG_CONFIG_PATH\n")


_P, _S, _V = ctypes.c_void_p, ctypes.c_char_p, None
_I, _U, _Z, _D = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_double
_PP = ctypes.POINTER(ctypes.c_void_p)
_IP = ctypes.POINTER(ctypes.c_int)
_DP = ctypes.POINTER(ctypes.c_double)
_SP = ctypes.POINTER(ctypes.c_char_p)

# name: (result, argument types), as capsim.h declares them
_PROTOTYPES = {
    "capsim_library_version": (_S, [_IP, _IP, _IP]),
    "capsim_status_name": (_S, [_I]),
    "capsim_data_dir": (_S, []),
    "capsim_free": (_V, [_P]),
    "capsim_scn_new": (_P, []),
    "capsim_scn_free": (_V, [_P]),
    "capsim_scn_load": (_I, [_P, _S]),
    "capsim_scn_set": (_I, [_P, _S, _S]),
    "capsim_scn_set_many": (_I, [_P, _SP, _SP, _Z]),
    "capsim_scn_diagnostics": (_S, [_P]),
    "capsim_scn_xml": (_I, [_P, _PP]),
    "capsim_scn_evaluate": (_I, [_P, _U, _PP]),
    "capsim_scn_collective": (_I, [_P, _S, _D, _I, _PP]),
    "capsim_res_free": (_V, [_P]),
    "capsim_res_json": (_I, [_P, _PP]),
    "capsim_res_has": (_I, [_P, _S]),
    "capsim_res_number": (_I, [_P, _S, _DP]),
    "capsim_res_text": (_I, [_P, _S, _SP]),
    "capsim_res_band": (_I, [_P, _S, _I, _DP, _DP]),
    "capsim_key_count": (_Z, []),
    "capsim_key_name": (_S, [_Z]),
    "capsim_key_unit": (_S, [_S]),
    "capsim_key_description": (_S, [_S]),
    "capsim_key_kind": (_I, [_S]),
    "capsim_key_banded": (_I, [_S]),
    "capsim_run_sweep": (_I, [_S, _S, _I, _U, _PP]),
    "capsim_query": (_I, [_S, _S, _SP, _Z, _PP]),
}


class _Library:
    """The loaded library: each function of _PROTOTYPES as an attribute,
    and the ctypes helpers the package uses with it."""

    c_char_p = ctypes.c_char_p
    c_void_p = ctypes.c_void_p
    res_p = ctypes.c_void_p
    byref = staticmethod(ctypes.byref)

    def __init__(self, dll):
        self.dll = dll
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(dll, name)
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name, fn)
        major = ctypes.c_int()
        self.capsim_library_version(ctypes.byref(major), None, None)
        if major.value != MAJOR:
            raise LibraryNotFound(1, "capsim: libcapsim's major version is %d; this package "
                                     "speaks %d\n" % (major.value, MAJOR))

    def string_of(self, out):
        """The text a function put in out (a c_void_p), freed."""
        if not out.value:
            return ""
        try:
            return ctypes.string_at(out.value).decode()
        finally:
            self.capsim_free(out)

    def take_text(self, fn, handle):
        """fn(handle, &out)'s text, or the Error of its status."""
        out = ctypes.c_void_p()
        status = fn(handle, ctypes.byref(out))
        if status != 0:
            raise Error.of(status, "capsim: %s\n" % self.capsim_status_name(status).decode())
        return self.string_of(out)


_lock = threading.Lock()
_loaded = None


def library():
    """libcapsim, loaded on first use (CAPSIM_LIBRARY, then pkg-config's
    libdir, then ctypes.util.find_library, then the dynamic linker's
    search); LibraryNotFound says what was tried."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _Library(_open())
        return _loaded
