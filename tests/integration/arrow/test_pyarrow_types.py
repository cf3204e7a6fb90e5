#!/usr/bin/env python3
"""Checks every column type of sluice through the Arrow C Data, Stream and Device
interfaces against pyarrow: random data with nulls, empty and one-row batches, slices
at odd offsets and extreme values round-trip exactly (bool, int8..uint64, floats,
date32, timestamps, decimal128 of precision <= 18 and above, utf8, large_utf8 and
dictionaries with every integer index type); the types whose layouts agree are shared,
not copied; a stream's batches with the same dictionary share one; and malformed or
unsupported values are refused with a message, leaving the input with its owner.
Exit code 77 (skipped) without pyarrow."""
import ctypes
import datetime
import decimal
import random

from sl_arrow import (ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowSchema, device_api,
                      SL_EUNSUPPORTED, addr, check, failures, from_sluice, lib, ok, pa,
                      roundtrip, to_sluice)

SL_EFORMAT = -7
rng = random.Random(17)
D = decimal.Decimal
decimal.getcontext().prec = 80


def with_nulls(vals, rate=0.2):
    return [None if rng.random() < rate else v for v in vals]


def rand_str(maxlen=12):
    alphabet = "abcxyz019 ,\"'\n\u00e9\u4e2d\U0001F600"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, maxlen)))


def rand_dec(p, s):
    digits = rng.randint(1, p)
    v = rng.randint(-(10 ** digits - 1), 10 ** digits - 1)
    return D(v).scaleb(-s)


def typed_batch(n):
    """A batch with one column of every type, about a fifth of the values null, and the
    extreme values of each type in its first rows."""
    def ints(lo, hi):
        v = [rng.randint(lo, hi) for _ in range(n)]
        v[:2] = [lo, hi][:n]
        return with_nulls(v)
    dmax18, dmax38 = D(10 ** 15 - 1).scaleb(-2), D(10 ** 38 - 1).scaleb(-10)
    dec18 = with_nulls([rand_dec(15, 2) for _ in range(n)])
    dec18[:2] = [dmax18, -dmax18][:n]
    dec38 = with_nulls([rand_dec(38, 10) for _ in range(n)])
    dec38[:2] = [dmax38, -dmax38][:n]
    epoch = datetime.datetime(1970, 1, 1)
    ts = with_nulls([epoch + datetime.timedelta(microseconds=rng.randint(-2 ** 50, 2 ** 50))
                     for _ in range(n)])
    words = [rand_str() for _ in range(7)]
    cols = {
        "b": pa.array(with_nulls([rng.random() < 0.5 for _ in range(n)]), pa.bool_()),
        "i8": pa.array(ints(-128, 127), pa.int8()),
        "i16": pa.array(ints(-32768, 32767), pa.int16()),
        "i32": pa.array(ints(-2 ** 31, 2 ** 31 - 1), pa.int32()),
        "i64": pa.array(ints(-2 ** 63, 2 ** 63 - 1), pa.int64()),
        "u8": pa.array(ints(0, 255), pa.uint8()),
        "u16": pa.array(ints(0, 65535), pa.uint16()),
        "u32": pa.array(ints(0, 2 ** 32 - 1), pa.uint32()),
        "u64": pa.array(ints(0, 2 ** 64 - 1), pa.uint64()),
        "f32": pa.array(with_nulls([rng.uniform(-1e30, 1e30) for _ in range(n)]), pa.float32()),
        "f64": pa.array(with_nulls([rng.uniform(-1e300, 1e300) for _ in range(n)]),
                        pa.float64()),
        "d": pa.array(ints(-719162, 2932896), pa.int32()).cast(pa.date32()),
        "ts": pa.array(ts, pa.timestamp("us")),
        "dec15_2": pa.array(dec18, pa.decimal128(15, 2)),
        "dec38_10": pa.array(dec38, pa.decimal128(38, 10)),
        "s": pa.array(with_nulls([rand_str() for _ in range(n)]), pa.utf8()),
        "ls": pa.array(with_nulls([rand_str() for _ in range(n)]), pa.large_utf8()),
        "dict": pa.array(with_nulls([rng.choice(words) for _ in range(n)]),
                         pa.utf8()).dictionary_encode(),
    }
    return pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols.keys()))


def same_values(got, want):
    return got.schema.names == want.schema.names and all(
        got.column(i).to_pylist() == want.column(i).to_pylist() for i in range(want.num_columns))


big = typed_batch(300)
r = roundtrip(big)
check(r.equals(big), "every type with nulls and extreme values round-trips")
check(r.schema.field("dict").type == pa.dictionary(pa.int32(), pa.utf8()),
      "a dictionary column comes back as dictionary<int32, utf8>")
for off, length in [(1, 0), (3, 1), (5, 17), (13, 200), (299, 1), (0, 300)]:
    s = big.slice(off, length)
    check(roundtrip(s).equals(s), f"every type, slice offset {off} length {length}")
check(roundtrip(typed_batch(0)).equals(typed_batch(0)), "every type, empty batch")
one = typed_batch(1)
check(roundtrip(one).equals(one), "every type, one row")
nulls = pa.RecordBatch.from_arrays([pa.nulls(9, f.type) for f in big.schema],
                                   names=big.schema.names)
check(roundtrip(nulls).equals(nulls), "every type, all null")

# Struct arrays with an offset over sliced string and bool children.
st = pa.StructArray.from_arrays([big.column("s").slice(7, 200), big.column("b").slice(3, 200),
                                 big.column("dict").slice(1, 200)],
                                names=["s", "b", "dict"]).slice(11, 150)
check(roundtrip(st).to_pylist() == st.to_pylist(), "struct offset over sliced children")

# Zero-copy where the layouts agree.
b = to_sluice(big)
back = from_sluice(b)
lib.sl_batch_unref(b)
for name, k in [("i64", 1), ("s", 1), ("s", 2), ("ls", 2), ("dec38_10", 1), ("dict", 1),
                ("ts", 1), ("d", 1)]:
    check(back.column(name).buffers()[k].address == big.column(name).buffers()[k].address,
          f"zero-copy: {name} buffer {k}")

# Converted on the way in: other timestamp units, other index and value types.
secs = pa.array(with_nulls(list(range(-50, 50))), pa.int64())
for unit in ["s", "ms", "ns"]:
    a = (secs.cast(pa.timestamp("s")).cast(pa.timestamp(unit)))
    rb = pa.RecordBatch.from_arrays([a], names=["t"])
    got = roundtrip(rb)
    check(got.schema.field("t").type == pa.timestamp("us") and
          got.column(0).to_pylist() == a.to_pylist(), f"timestamp[{unit}] -> timestamp[us]")
words = pa.array(["x", "", "yy", "\u00e9t\u00e9", "zzz"])
for it in [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
           pa.uint32(), pa.uint64()]:
    for vt in [pa.utf8(), pa.large_utf8()]:
        idx = pa.array(with_nulls([rng.randint(0, 4) for _ in range(50)]), it)
        da = pa.DictionaryArray.from_arrays(idx, words.cast(vt)).slice(3, 40)
        got = roundtrip(pa.RecordBatch.from_arrays([da], names=["k"]))
        check(got.column(0).to_pylist() == da.to_pylist(), f"dictionary<{it}, {vt}>")
sliced_dict = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, None], pa.int32()),
                                             words.slice(2))
check(roundtrip(pa.RecordBatch.from_arrays([sliced_dict], names=["k"])).column(0).to_pylist()
      == sliced_dict.to_pylist(), "a dictionary with an offset")

# A stream whose batches use the same dictionary: sluice keeps one copy, shared.
dict_batches = [pa.RecordBatch.from_arrays(
    [pa.DictionaryArray.from_arrays(pa.array([rng.randint(0, 4) for _ in range(n)], pa.int8()),
                                    words), pa.array(range(n), pa.int64())], names=["k", "v"])
    for n in [10, 0, 25]]
reader = pa.RecordBatchReader.from_batches(dict_batches[0].schema, dict_batches)
stream = ArrowArrayStream()
reader._export_to_c(addr(stream))
t = ctypes.c_void_p()
ok(lib.sl_table_import_stream(addr(stream), ctypes.byref(t)), "dictionary stream import")
out = ArrowArrayStream()
ok(lib.sl_table_export_stream(t, addr(out)), "dictionary stream export")
lib.sl_table_unref(t)
got = list(pa.RecordBatchReader._import_from_c(addr(out)))
check([g.column(0).to_pylist() for g in got] == [d.column(0).to_pylist() for d in dict_batches],
      "dictionary stream round trip")
addrs = {g.column(0).dictionary.buffers()[2].address for g in got}
check(len(addrs) == 1, f"one dictionary shared by the stream's batches ({len(addrs)})")
table = pa.Table.from_batches([big.slice(0, 100), big.slice(100, 50)])
reader = pa.RecordBatchReader.from_batches(big.schema, table.to_batches())
stream = ArrowArrayStream()
reader._export_to_c(addr(stream))
ok(lib.sl_table_import_stream(addr(stream), ctypes.byref(t)), "typed stream import")
out = ArrowArrayStream()
ok(lib.sl_table_export_stream(t, addr(out)), "typed stream export")
lib.sl_table_unref(t)
check(pa.RecordBatchReader._import_from_c(addr(out)).read_all().equals(table),
      "every type through a stream")

# Device arrays on the CPU carry every type too.
if device_api():
    s = big.slice(5, 60)
    darr, sch = ArrowDeviceArray(), ArrowSchema()
    s._export_to_c_device(addr(darr), addr(sch))
    b = ctypes.c_void_p()
    ok(lib.sl_batch_import_device_arrow(addr(darr), addr(sch), ctypes.byref(b)), "device import")
    darr2, sch2 = ArrowDeviceArray(), ArrowSchema()
    ok(lib.sl_batch_export_device_arrow(b, addr(darr2), addr(sch2)), "device export")
    lib.sl_batch_unref(b)
    check(pa.RecordBatch._import_from_c_device(addr(darr2), addr(sch2)).equals(s),
          "every type through a CPU device array")


def refused(rb, code, part, what):
    arr, sch = ArrowArray(), ArrowSchema()
    rb._export_to_c(addr(arr), addr(sch))
    b = ctypes.c_void_p()
    rc = lib.sl_batch_import_arrow(addr(arr), addr(sch), ctypes.byref(b))
    msg = lib.sl_last_errmsg().decode()
    check(rc == code and part in msg, f"{what} refused ({msg})")
    check(arr.release is not None and
          pa.RecordBatch._import_from_c(addr(arr), addr(sch)).num_rows == rb.num_rows,
          f"{what}: the input stays with its owner")


def one_col(a):
    return pa.RecordBatch.from_arrays([a], names=["c"])


refused(one_col(pa.array([1, 2], pa.timestamp("us", tz="UTC"))), SL_EUNSUPPORTED, "time zone",
        "a timestamp with a time zone")
refused(one_col(pa.array([1000, 1001], pa.timestamp("ns"))), SL_EFORMAT, "row 1",
        "a nanosecond timestamp that is not whole microseconds")
refused(one_col(pa.array([2 ** 62], pa.int64()).cast(pa.timestamp("s"), safe=False)),
        SL_EFORMAT, "row 0", "a second timestamp overflowing microseconds")
too_big = (10 ** 12).to_bytes(16, "little", signed=True)
refused(one_col(pa.Array.from_buffers(pa.decimal128(10, 2), 1, [None, pa.py_buffer(too_big)])),
        SL_EFORMAT, "precision", "a decimal(10,2) value of 13 digits")
bad_idx = pa.DictionaryArray.from_arrays(pa.array([0, 7], pa.int32()), words, safe=False)
refused(one_col(bad_idx), SL_EFORMAT, "dictionary's range", "a dictionary index past its end")
neg_idx = pa.DictionaryArray.from_arrays(pa.array([0, -1], pa.int8()), words, safe=False)
refused(one_col(neg_idx), SL_EFORMAT, "row 1", "a negative dictionary index")
refused(one_col(pa.array([[1]], pa.list_(pa.int32()))), SL_EUNSUPPORTED, "'+l'", "a list")
refused(one_col(pa.array([b"x"], pa.binary())), SL_EUNSUPPORTED, "'z'", "binary")
refused(one_col(pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()),
                                               pa.array([1.5]))),
        SL_EUNSUPPORTED, "dictionary", "a dictionary of floats")
refused(one_col(pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()),
                                               pa.array(["a", None]))),
        SL_EUNSUPPORTED, "nulls", "a dictionary holding nulls")

print(f"{len(failures)} failed")
raise SystemExit(1 if failures else 0)
