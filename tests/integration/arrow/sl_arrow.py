"""Shared pieces of the pyarrow checks: the Arrow C structs as ctypes, the loaded
libsluice (path in argv[1]) and import/export helpers. Exits 77 (skipped) without
pyarrow."""
import ctypes
import os
import re
import subprocess
import sys

try:
    import pyarrow as pa
except ImportError:
    print("SKIP: pyarrow is not importable")
    sys.exit(77)

SL_OK = 0
SL_EIO = -6
SL_EUNSUPPORTED = -13


class ArrowSchema(ctypes.Structure):
    _fields_ = [("format", ctypes.c_void_p), ("name", ctypes.c_void_p),
                ("metadata", ctypes.c_void_p), ("flags", ctypes.c_int64),
                ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
                ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


class ArrowArray(ctypes.Structure):
    _fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64),
                ("offset", ctypes.c_int64), ("n_buffers", ctypes.c_int64),
                ("n_children", ctypes.c_int64), ("buffers", ctypes.c_void_p),
                ("children", ctypes.c_void_p), ("dictionary", ctypes.c_void_p),
                ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


class ArrowArrayStream(ctypes.Structure):
    _fields_ = [("get_schema", ctypes.c_void_p), ("get_next", ctypes.c_void_p),
                ("get_last_error", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


class ArrowDeviceArray(ctypes.Structure):
    _fields_ = [("array", ArrowArray), ("device_id", ctypes.c_int64),
                ("device_type", ctypes.c_int32), ("sync_event", ctypes.c_void_p),
                ("reserved", ctypes.c_int64 * 3)]


assert ctypes.sizeof(ArrowSchema) == 72 and ctypes.sizeof(ArrowArray) == 80
assert ctypes.sizeof(ArrowArrayStream) == 40 and ctypes.sizeof(ArrowDeviceArray) == 128



def reexec(extra_env, why):
    """Restarts this script with extra environment, once."""
    if os.environ.get("SL_PYARROW_REEXEC"):
        return
    print(f"note: {why}; restarting with {extra_env}")
    sys.stdout.flush()
    env = dict(os.environ, SL_PYARROW_REEXEC="1")
    for k, v in extra_env.items():
        env[k] = (env[k] + " " + v) if env.get(k) else v
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def sanitizer_runtimes(path):
    """Sanitizer runtimes the library needs first in the process (sanitized builds)."""
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    except OSError:
        return []
    return re.findall(r"=>\s*(\S*lib(?:asan|ubsan)\.so\S*)", out)


# A sanitized library must have its runtime loaded first; Python leaks by design.
runtimes = sanitizer_runtimes(sys.argv[1])
if runtimes and not os.environ.get("SL_PYARROW_REEXEC"):
    reexec({"LD_PRELOAD": " ".join(runtimes),
            "ASAN_OPTIONS": "detect_leaks=0"}, "the library is built with sanitizers")
# libsluice must load with dlopen as it is (it binds jemalloc at run time, so no
# static-TLS tunable is needed): a failure here is a real failure.
lib = ctypes.CDLL(sys.argv[1])
P = ctypes.c_void_p
PP = ctypes.POINTER(ctypes.c_void_p)
for name, args in [("sl_batch_import_arrow", [P, P, PP]),
                   ("sl_batch_export_arrow", [P, P, P]),
                   ("sl_batch_import_device_arrow", [P, P, PP]),
                   ("sl_batch_export_device_arrow", [P, P, P]),
                   ("sl_table_import_stream", [P, PP]),
                   ("sl_table_export_stream", [P, P])]:
    getattr(lib, name).argtypes = args
    getattr(lib, name).restype = ctypes.c_int
for name in ["sl_batch_unref", "sl_table_unref"]:
    getattr(lib, name).argtypes = [P]
    getattr(lib, name).restype = None
lib.sl_batch_num_rows.argtypes = [P]
lib.sl_batch_num_rows.restype = ctypes.c_int64
lib.sl_table_num_batches.argtypes = [P]
lib.sl_table_num_batches.restype = ctypes.c_int64
lib.sl_last_errmsg.argtypes = []
lib.sl_last_errmsg.restype = ctypes.c_char_p

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    else:
        print("ok:", what)


def addr(s):
    return ctypes.addressof(s)


def device_api():
    """True when pyarrow has the C Device interface (pyarrow >= 15, which setup.sh
    installs); a failure otherwise, so the device checks cannot pass unrun."""
    have = hasattr(pa.RecordBatch, "_export_to_c_device")
    check(have, f"pyarrow {pa.__version__} has no device-array API (needs >= 15)")
    return have


def ok(rc, what):
    if rc != SL_OK:
        raise AssertionError(f"{what} returned {rc}: {lib.sl_last_errmsg().decode()}")


def to_sluice(obj):
    """Exports a pyarrow RecordBatch or Array and imports it into sluice."""
    arr, sch = ArrowArray(), ArrowSchema()
    obj._export_to_c(addr(arr), addr(sch))
    b = ctypes.c_void_p()
    ok(lib.sl_batch_import_arrow(addr(arr), addr(sch), ctypes.byref(b)), "import")
    assert arr.release is None and sch.release is None, "import did not move its input"
    return b


def from_sluice(b):
    """Exports a sluice batch and imports it into pyarrow."""
    arr, sch = ArrowArray(), ArrowSchema()
    ok(lib.sl_batch_export_arrow(b, addr(arr), addr(sch)), "export")
    return pa.RecordBatch._import_from_c(addr(arr), addr(sch))


def roundtrip(obj):
    b = to_sluice(obj)
    try:
        return from_sluice(b)
    finally:
        lib.sl_batch_unref(b)
