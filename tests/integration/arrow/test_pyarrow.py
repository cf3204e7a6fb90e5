#!/usr/bin/env python3
"""Checks sluice's Arrow C Data, Stream and Device interfaces against pyarrow, the
reference implementation.

Loads the built libsluice (path in argv[1]) with ctypes, exports pyarrow record
batches, arrays and streams through the C interfaces, imports them into sluice,
exports them back from sluice and imports the result into pyarrow, then compares with
the originals. Also checks that sluice keeps pyarrow's buffers alive (zero-copy) and
releases them when its last reference goes, and that rejected input stays with the
caller. Exit code 77 (skipped) when pyarrow is not installed.
"""
import ctypes

from sl_arrow import (ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowSchema, device_api,
                      SL_EIO, SL_EUNSUPPORTED, SL_OK, addr, check, failures, from_sluice, lib, ok,
                      pa, roundtrip, to_sluice)


def sample_batch(n=100, seed=0):
    def vals(f, every):
        return [None if i % every == 1 else f(i) for i in range(n)]
    return pa.RecordBatch.from_arrays([
        pa.array(vals(lambda i: i * 3 - seed, 4), pa.int32()),
        pa.array(vals(lambda i: i * 1000000007 + seed, 3), pa.int64()),
        pa.array([i * 0.25 for i in range(n)], pa.float32()),
        pa.array(vals(lambda i: i * -1.5 + seed, 5), pa.float64()),
    ], names=["i32", "i64", "f32", "f64"])


# --- record batches ---------------------------------------------------------------
rb = sample_batch()
check(roundtrip(rb).equals(rb), "batch with nulls, four types")
for off, length in [(3, 10), (13, 50), (7, 0), (0, 100), (99, 1)]:
    s = rb.slice(off, length)
    check(roundtrip(s).equals(s), f"sliced batch offset {off} length {length}")

empty = rb.slice(0, 0)
check(roundtrip(empty).equals(empty), "zero-length batch")
zero_cols = pa.RecordBatch.from_pydict({})
r = roundtrip(zero_cols)
check(r.num_columns == 0, "zero-column batch")

# A struct array with its own offset (applies to the children) and sliced children.
st = pa.StructArray.from_arrays([rb.column(0).slice(5, 90), rb.column(3).slice(2, 90)],
                                names=["a", "b"]).slice(11, 30)
r = roundtrip(st)
check(r.to_pylist() == st.to_pylist(), "struct array with offset over sliced children")

# One primitive array: imported as one column named by the schema.
prim = pa.array([1, None, 3, 4, None, 6, 7, 8, 9, 10], pa.int64()).slice(3)
r = roundtrip(prim)
check(r.num_columns == 1 and r.column(0).equals(prim), "top-level primitive array, sliced")

# A sluice round trip through two imports shares pyarrow's buffers and releases them
# when sluice's last reference goes.
base = pa.total_allocated_bytes()
big = pa.RecordBatch.from_arrays([pa.array(range(100000), pa.int64())], names=["x"])
held = pa.total_allocated_bytes() - base
big_data = big.column(0).buffers()[1].address
b = to_sluice(big)
del big
check(held >= 800000 and pa.total_allocated_bytes() - base >= held,
      "sluice keeps the foreign buffers alive")
back = from_sluice(b)
lib.sl_batch_unref(b)
check(pa.total_allocated_bytes() - base >= held, "re-exported batch still shares them")
check(back.column(0)[99999].as_py() == 99999, "re-exported values readable")
check(back.column(0).buffers()[1].address == big_data, "zero-copy: the same data buffer")
del back
check(pa.total_allocated_bytes() == base, "released after the last reference")

# Rejected input stays with the caller: pyarrow can still import it afterwards.
lists = pa.RecordBatch.from_arrays([pa.array([1, 2]), pa.array([[1], [2, 3]])],
                                   names=["n", "s"])
arr, sch = ArrowArray(), ArrowSchema()
lists._export_to_c(addr(arr), addr(sch))
b = ctypes.c_void_p()
rc = lib.sl_batch_import_arrow(addr(arr), addr(sch), ctypes.byref(b))
msg = lib.sl_last_errmsg().decode()
check(rc == SL_EUNSUPPORTED and "'+l'" in msg and "'s'" in msg,
      f"list column refused with SL_EUNSUPPORTED ({msg})")
check(arr.release is not None and sch.release is not None, "refused input not moved")
check(pa.RecordBatch._import_from_c(addr(arr), addr(sch)).equals(lists),
      "refused input still valid for its owner")

# --- streams ----------------------------------------------------------------------
batches = [sample_batch(40, 1), sample_batch(100, 2).slice(9, 21), sample_batch(0, 3)]
reader = pa.RecordBatchReader.from_batches(batches[0].schema, batches)
stream = ArrowArrayStream()
reader._export_to_c(addr(stream))
t = ctypes.c_void_p()
ok(lib.sl_table_import_stream(addr(stream), ctypes.byref(t)), "stream import")
check(stream.release is None, "imported stream released")
check(lib.sl_table_num_batches(t) == 3, "three batches imported")
out = ArrowArrayStream()
ok(lib.sl_table_export_stream(t, addr(out)), "stream export")
lib.sl_table_unref(t)
table = pa.RecordBatchReader._import_from_c(addr(out)).read_all()
check(table.equals(pa.Table.from_batches(batches)), "stream round trip")


def failing():
    yield batches[0]
    raise ValueError("producer exploded")


reader = pa.RecordBatchReader.from_batches(batches[0].schema, failing())
stream = ArrowArrayStream()
reader._export_to_c(addr(stream))
rc = lib.sl_table_import_stream(addr(stream), ctypes.byref(t))
msg = lib.sl_last_errmsg().decode()
check(rc == SL_EIO and "producer exploded" in msg, f"stream error gives SL_EIO ({msg})")
check(stream.release is not None, "failed stream stays with the caller")
pa.RecordBatchReader._import_from_c(addr(stream)).close()  # releases it

# --- device arrays (pyarrow >= 15) ------------------------------------------------
if device_api():
    s = rb.slice(5, 60)
    darr, sch = ArrowDeviceArray(), ArrowSchema()
    s._export_to_c_device(addr(darr), addr(sch))
    check(darr.device_type == 1, "pyarrow exports CPU device arrays")
    b = ctypes.c_void_p()
    ok(lib.sl_batch_import_device_arrow(addr(darr), addr(sch), ctypes.byref(b)),
       "device import")
    darr2, sch2 = ArrowDeviceArray(), ArrowSchema()
    ok(lib.sl_batch_export_device_arrow(b, addr(darr2), addr(sch2)), "device export")
    lib.sl_batch_unref(b)
    check(darr2.device_type == 1 and darr2.device_id == -1 and not darr2.sync_event,
          "sluice exports a CPU device array")
    r = pa.RecordBatch._import_from_c_device(addr(darr2), addr(sch2))
    check(r.equals(s), "device array round trip")

print(f"{len(failures)} failed")
raise SystemExit(1 if failures else 0)
