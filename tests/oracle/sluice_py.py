"""sluice from Python through its C API (ctypes) and the Arrow C stream interface, for
differential tests against DuckDB: pyarrow tables in, plan text run, pyarrow tables out.

    with Sluice(lib_path) as sl:
        out = sl.run(plan_text, {"t": pa_table})      # {output name: pa.Table}

Only tests and tools use this; the library never depends on Python.
"""
import ctypes
import os

import pyarrow as pa


class SluiceError(RuntimeError):
    def __init__(self, code, msg):
        super().__init__(f"sluice error {code}: {msg}")
        self.code = code
        self.msg = msg


class _ArrowArrayStream(ctypes.Structure):
    # Opaque here: pyarrow fills and consumes it; only its size matters (5 pointers).
    _fields_ = [("p", ctypes.c_void_p * 5)]


def find_library():
    """libsluice.so from $SLUICE_LIB, else the build directory next to this file."""
    if os.environ.get("SLUICE_LIB"):
        return os.environ["SLUICE_LIB"]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for build in ("build", "build-cpu", "build-cuda"):
        d = os.path.join(root, build)
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                if f.startswith("libsluice.so"):
                    return os.path.join(d, f)
    raise FileNotFoundError("libsluice.so not found: set SLUICE_LIB")


class Sluice:
    def __init__(self, lib_path=None, placement=None):
        self.lib = ctypes.CDLL(lib_path or find_library())
        L = self.lib
        vp, cp, ip = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
        L.sl_engine_open.argtypes = [ctypes.POINTER(vp), vp]
        L.sl_engine_errmsg.argtypes = [vp]
        L.sl_engine_errmsg.restype = cp
        L.sl_engine_close.argtypes = [vp]
        L.sl_plan_create.argtypes = [ctypes.POINTER(vp)]
        L.sl_plan_destroy.argtypes = [vp]
        L.sl_plan_errmsg.argtypes = [vp]
        L.sl_plan_errmsg.restype = cp
        L.sl_plan_parse.argtypes = [vp, cp, cp]
        L.sl_plan_register_table.argtypes = [vp, cp, vp]
        L.sl_plan_num_nodes.argtypes = [vp]
        L.sl_plan_num_outputs.argtypes = [vp]
        L.sl_plan_output_at.argtypes = [vp, ip, vp]
        L.sl_plan_output_at.restype = cp
        L.sl_query_create.argtypes = [vp, vp, ctypes.POINTER(vp)]
        L.sl_query_run.argtypes = [vp]
        L.sl_query_errmsg.argtypes = [vp]
        L.sl_query_errmsg.restype = cp
        L.sl_query_result.argtypes = [vp, cp, ctypes.POINTER(vp)]
        L.sl_query_destroy.argtypes = [vp]
        L.sl_query_profile_json.argtypes = [vp]
        L.sl_query_profile_json.restype = cp
        L.sl_table_import_stream.argtypes = [ctypes.POINTER(_ArrowArrayStream), ctypes.POINTER(vp)]
        L.sl_table_export_stream.argtypes = [vp, ctypes.POINTER(_ArrowArrayStream)]
        L.sl_table_unref.argtypes = [vp]
        L.sl_last_errmsg.restype = cp
        self.eng = vp()
        rc = L.sl_engine_open(ctypes.byref(self.eng), None)
        if rc != 0:
            raise SluiceError(rc, L.sl_engine_errmsg(self.eng).decode())
        if placement is not None:
            set_opt = getattr(L, "sl_engine_option_set", None)
            if set_opt is None:
                raise SluiceError(-13, "this libsluice cannot set options by name")
            set_opt.argtypes = [vp, cp, cp]
            rc = set_opt(self.eng, b"placement", placement.encode())
            if rc != 0:
                raise SluiceError(rc, L.sl_engine_errmsg(self.eng).decode())
        self.last_profile = None

    def close(self):
        if self.eng:
            self.lib.sl_engine_close(self.eng)
            self.eng = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _import(self, table):
        reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
        stream = _ArrowArrayStream()
        reader._export_to_c(ctypes.addressof(stream))
        out = ctypes.c_void_p()
        rc = self.lib.sl_table_import_stream(ctypes.byref(stream), ctypes.byref(out))
        if rc != 0:
            raise SluiceError(rc, self.lib.sl_last_errmsg().decode())
        return out

    def _export(self, tab):
        stream = _ArrowArrayStream()
        rc = self.lib.sl_table_export_stream(tab, ctypes.byref(stream))
        if rc != 0:
            raise SluiceError(rc, self.lib.sl_last_errmsg().decode())
        return pa.RecordBatchReader._import_from_c(ctypes.addressof(stream)).read_all()

    def import_table(self, table):
        """A sluice table (a handle for run()) holding a copy of a pyarrow table, so that
        several runs share one import; free it with release()."""
        return self._import(table)

    def release(self, handle):
        self.lib.sl_table_unref(handle)

    def run(self, plan_text, tables=None):
        """Runs plan text over named tables (pyarrow tables or import_table() handles);
        returns {output name: pa.Table}. Raises SluiceError with the engine's message on
        any failure."""
        L = self.lib
        plan = ctypes.c_void_p()
        L.sl_plan_create(ctypes.byref(plan))
        q = ctypes.c_void_p()
        try:
            for name, table in (tables or {}).items():
                owned = isinstance(table, pa.Table)
                st = self._import(table) if owned else table
                rc = L.sl_plan_register_table(plan, name.encode(), st)
                if owned:
                    L.sl_table_unref(st)
                if rc != 0:
                    raise SluiceError(rc, L.sl_plan_errmsg(plan).decode())
            rc = L.sl_plan_parse(plan, plan_text.encode(), b"oracle.plan")
            if rc != 0:
                raise SluiceError(rc, L.sl_plan_errmsg(plan).decode())
            rc = L.sl_query_create(self.eng, plan, ctypes.byref(q))
            if rc != 0:
                raise SluiceError(rc, L.sl_engine_errmsg(self.eng).decode())
            rc = L.sl_query_run(q)
            if rc != 0:
                raise SluiceError(rc, L.sl_query_errmsg(q).decode())
            prof = L.sl_query_profile_json(q)
            self.last_profile = prof.decode() if prof else None
            out = {}
            for i in range(L.sl_plan_num_outputs(plan)):  # a node may be several outputs
                name = L.sl_plan_output_at(plan, i, None)
                tab = ctypes.c_void_p()
                rc = L.sl_query_result(q, name, ctypes.byref(tab))
                if rc != 0:
                    raise SluiceError(rc, L.sl_query_errmsg(q).decode())
                try:
                    out[name.decode()] = self._export(tab)
                finally:
                    L.sl_table_unref(tab)
            return out
        finally:
            if q:
                L.sl_query_destroy(q)
            L.sl_plan_destroy(plan)
