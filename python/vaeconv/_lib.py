"""ctypes binding of libvaeconv_kernels' C ABI (kernels/vaeconv_c.h).

The library is found without environment variables, in this order:
  1. beside this package's files (the build copies the package into build/<preset>/python/vaeconv
     with the library next to it; `cmake --install` installs both into the same folder);
  2. in the lib/ folder of an install prefix this package sits under (<prefix>/lib/python*/...);
  3. the dynamic loader's search path (ldconfig, LD_LIBRARY_PATH).
VAECONV_LIBRARY, when set, names the file to load instead (an override, never required).
It is loaded on first use, so `import vaeconv` works on a machine without the library or a GPU.
"""
import ctypes
import os
import threading

LIBRARY_NAME = "libvaeconv_kernels.so"

OK = 0
INVALID_ARGUMENT = 1
UNSUPPORTED = 2
MISALIGNED = 3
OVERLAP = 4
OVERFLOW = 5
RUNTIME_ERROR = 6
STATUS_NAMES = {OK: "ok", INVALID_ARGUMENT: "invalid argument", UNSUPPORTED: "unsupported",
                MISALIGNED: "misaligned", OVERLAP: "overlap", OVERFLOW: "overflow",
                RUNTIME_ERROR: "runtime error"}

CAUSAL_3X3X3 = 0
DOWNSAMPLE = 1
UPSAMPLE = 2
TEMPORAL_3X1X1 = 3

_MSG_LEN = 512


class VaeconvError(RuntimeError):
    """A call the library refused or failed; `code` is the C ABI's vaeconv_status_code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class LibraryNotFound(VaeconvError):
    def __init__(self, message):
        super().__init__(RUNTIME_ERROR, message)


class ConvShape(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("n", ctypes.c_int64), ("t", ctypes.c_int64),
                ("h", ctypes.c_int64), ("w", ctypes.c_int64), ("cin", ctypes.c_int64),
                ("cout", ctypes.c_int64)]


def candidate_paths():
    """Where the library is looked for, in order (see the module docstring)."""
    here = os.path.dirname(os.path.abspath(__file__))
    paths = []
    override = os.environ.get("VAECONV_LIBRARY")
    if override:
        paths.append(override)
    paths.append(os.path.join(here, LIBRARY_NAME))
    # <prefix>/lib/pythonX.Y/site-packages/vaeconv -> <prefix>/lib (and lib64, Debian's lib/<triplet>)
    d = here
    for _ in range(5):
        d = os.path.dirname(d)
        if os.path.basename(d) in ("lib", "lib64") or os.path.basename(os.path.dirname(d)) == "lib":
            paths.append(os.path.join(d, LIBRARY_NAME))
    paths.append(LIBRARY_NAME)  # the loader's own search path
    return paths


_lock = threading.Lock()
_lib = None
_load_error = None


def _declare(lib):
    vp, cp, sz, i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64
    shape_p = ctypes.POINTER(ConvShape)
    sig = {
        "vaeconv_weights_create_bf16": (ctypes.c_int, [shape_p, vp, i64, vp, ctypes.POINTER(vp), cp, sz]),
        "vaeconv_weights_create_fp8": (ctypes.c_int, [shape_p, vp, i64, vp, ctypes.POINTER(vp), cp, sz]),
        "vaeconv_weights_destroy": (None, [vp]),
        "vaeconv_conv_bf16": (ctypes.c_int, [shape_p, vp, vp, vp, vp, vp, vp, cp, sz]),
        "vaeconv_quantize_fp8_workspace_bytes": (sz, [i64]),
        "vaeconv_quantize_fp8": (ctypes.c_int, [vp, i64, vp, vp, vp, sz, vp, cp, sz]),
        "vaeconv_conv_fp8": (ctypes.c_int, [shape_p, vp, vp, vp, vp, vp, vp, vp, vp, cp, sz]),
        "vaeconv_conv_cached": (ctypes.c_int, [shape_p, ctypes.c_int32, vp, vp, vp, vp, vp, vp,
                                               vp, vp, cp, sz]),
        "vaeconv_conv_temporal": (ctypes.c_int, [shape_p, ctypes.c_int32, ctypes.c_int32, vp, vp,
                                                 vp, vp, vp, vp, vp, vp, cp, sz]),
        "vaeconv_rms_norm": (ctypes.c_int, [vp, i64, i64, vp, vp, ctypes.c_int32, vp, vp, cp, sz]),
        "vaeconv_check_device": (ctypes.c_int, [ctypes.c_int, cp, sz]),
        "vaeconv_version": (ctypes.c_char_p, []),
        "vaeconv_backend": (ctypes.c_char_p, []),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def load():
    """The loaded library; raises LibraryNotFound naming every place that was tried."""
    global _lib, _load_error
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for p in candidate_paths():
            if os.sep in p and not os.path.exists(p):
                tried.append(f"{p} (absent)")
                continue
            try:
                lib = ctypes.CDLL(p)
                _declare(lib)
            except (OSError, AttributeError) as e:
                tried.append(f"{p} ({e})")
                continue
            _lib = lib
            return _lib
        _load_error = "vaeconv: libvaeconv_kernels not found; tried: " + "; ".join(tried)
        raise LibraryNotFound(_load_error)


def available():
    """True when the library loads (no GPU needed)."""
    try:
        load()
        return True
    except LibraryNotFound:
        return False


def check(code, msg_buf, what):
    if code != OK:
        text = msg_buf.value.decode(errors="replace") if msg_buf is not None else ""
        raise VaeconvError(code, f"vaeconv: {what}: {STATUS_NAMES.get(code, code)}: {text}")


def message_buffer():
    return ctypes.create_string_buffer(_MSG_LEN)


def version():
    return load().vaeconv_version().decode()


def backend():
    """'cuda' or 'hip': which GPU runtime the loaded library was built for."""
    return load().vaeconv_backend().decode()


def check_device(fp8):
    """None when the current device runs this build's kernels for the operand type, else the
    library's message."""
    buf = message_buffer()
    code = load().vaeconv_check_device(1 if fp8 else 0, buf, _MSG_LEN)
    return None if code == OK else buf.value.decode(errors="replace")
