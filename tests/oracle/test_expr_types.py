"""Expressions on every column type against DuckDB: random columns of every type (nulls,
duplicates, extremes, NaN and infinities, multi-byte UTF-8, dictionary strings) through
project (each expression's values) and filter (the rows kept, every column carried),
compared as row multisets, including an empty input. Exits 77 (skipped) while
sl_table_import_stream refuses one of the types, so it turns itself on when Arrow import
of the new types lands."""
import datetime
import decimal
import random
import sys

from oracle_common import require_modules, Sluice, SluiceError, diff

pa, duckdb = require_modules()

rng = random.Random(17)
N = 3000


def maybe(gen, null=0.1):
    return [None if rng.random() < null else gen() for _ in range(N)]


def dec(digits, scale):
    return lambda: decimal.Decimal(rng.randint(-10**digits + 1, 10**digits - 1)).scaleb(-scale)


WORDS = ["red", "green", "blue", "forest", "PROMO BRUSHED", "h\u00e9llo", "", "a_c", "it's",
         "abc", "abcabc", "\u00fcber", "x%y"]
DAY0 = datetime.date(1970, 1, 1)

t = pa.table({
    "id": pa.array(range(N), pa.int64()),
    "i8": pa.array(maybe(lambda: rng.choice([-128, 127, 0, rng.randint(-128, 127)])), pa.int8()),
    "i32": pa.array(maybe(lambda: rng.randint(-1000, 1000)), pa.int32()),
    "i64": pa.array(maybe(lambda: rng.choice([-2**62, 2**62, rng.randint(-10**6, 10**6)])),
                    pa.int64()),
    "u32": pa.array(maybe(lambda: rng.choice([0, 2**32 - 1, rng.randint(0, 1000)])), pa.uint32()),
    "u64": pa.array(maybe(lambda: rng.choice([0, 2**64 - 1, 2**63, rng.randint(0, 1000)])),
                    pa.uint64()),
    "f": pa.array(maybe(lambda: rng.choice([float("nan"), float("inf"), -float("inf"), -0.0, 0.0,
                                            rng.uniform(-100, 100)])), pa.float64()),
    "b": pa.array(maybe(lambda: rng.random() < 0.5), pa.bool_()),
    "d": pa.array(maybe(lambda: DAY0 + datetime.timedelta(days=rng.randint(-30000, 60000))),
                  pa.date32()),
    "ts": pa.array(maybe(lambda: datetime.datetime(1970, 1, 1) + datetime.timedelta(
        microseconds=rng.randint(-2 * 10**15, 4 * 10**15))), pa.timestamp("us")),
    "p": pa.array(maybe(dec(9, 2)), pa.decimal128(15, 2)),
    "q": pa.array(maybe(lambda: decimal.Decimal(rng.randint(0, 10)).scaleb(-2)),
                  pa.decimal128(15, 2)),
    "w": pa.array(maybe(dec(30, 4)), pa.decimal128(38, 4)),
    "s": pa.array(maybe(lambda: rng.choice(WORDS) + rng.choice(["", "x", "\u00e9"])), pa.utf8()),
    "ls": pa.array(maybe(lambda: rng.choice(WORDS)), pa.large_utf8()),
    "ds": pa.array(maybe(lambda: rng.choice(WORDS[:6]))).dictionary_encode(),
})

# (sluice expression, DuckDB expression or None for the same)
PROJECT = [
    ("p * (1 - q) * (1 + q)", None), ("p + q", None), ("p - w", None), ("p * 3", None),
    ("p / q", None), ("-p", None), ("i32 * p", None), ("i8 + 1000", None), ("i64 - i32", None),
    ("SUBSTRING(s FROM 2 FOR 3)", None), ("SUBSTRING(s, -2, 5)", None), ("LENGTH(s)", None),
    ("LENGTH(ds)", None), ("SUBSTRING(ls, 0, 3)", None),
    ("d + INTERVAL '1' MONTH", "CAST(d + INTERVAL '1' MONTH AS DATE)"),
    ("d - INTERVAL '7' YEAR", "CAST(d - INTERVAL '7' YEAR AS DATE)"),
    ("d + INTERVAL 45 DAY", "CAST(d + INTERVAL 45 DAY AS DATE)"),
    ("ts - INTERVAL '3' MONTH", None),
    ("EXTRACT(YEAR FROM d)", None), ("EXTRACT(MONTH FROM ts)", None), ("EXTRACT(DAY FROM d)", None),
    ("CASE WHEN p > 0 THEN s WHEN b THEN ds ELSE 'none' END", None),
    ("CASE WHEN b THEN p ELSE q END", None), ("CASE WHEN i32 > 0 THEN f END", None),
    ("COALESCE(s, ls, ds)", None), ("COALESCE(p, q, 0)", None), ("COALESCE(ts, d)", None),
    ("CAST(p AS int64)", "CAST(p AS BIGINT)"), ("CAST(p AS float64)", "CAST(p AS DOUBLE)"),
    ("CAST(w AS float64)", "CAST(w AS DOUBLE)"), ("CAST(p AS decimal(12,1))", None),
    ("CAST(i32 AS decimal(6,2))", None), ("CAST(d AS utf8)", "CAST(d AS VARCHAR)"),
    ("CAST(p AS utf8)", "CAST(p AS VARCHAR)"), ("CAST(ts AS date32)", "CAST(ts AS DATE)"),
    ("CAST(d AS timestamp)", None), ("CAST(b AS int32)", "CAST(b AS INTEGER)"),
    ("CAST(i64 AS utf8)", "CAST(i64 AS VARCHAR)"),
    ("CAST(CAST(w AS utf8) AS decimal(38,4))", "CAST(CAST(w AS VARCHAR) AS DECIMAL(38,4))"),
    ("u64", None), ("ds", None), ("b", None),
]
FILTER = [
    "f > 1", "f = f", "f < 0.5", "p > 50.5", "p BETWEEN -1000 AND 1000", "p IN (0.01, -0.5, 3)",
    "w > p", "q <> 0.05", "i8 IN (-128, 127)", "u64 > 9223372036854775807", "u32 >= 4294967295",
    "d < DATE '1998-12-01' - INTERVAL '90' DAY", "ts >= d", "d BETWEEN DATE '1994-01-01' AND "
    "DATE '1995-01-01'", "s < 'b'", "s LIKE 'abc%'", "s LIKE '%c'", "s LIKE '%bc%'",
    "s LIKE 'a_c%'", "s NOT LIKE '%\u00e9%'", "ls = 'it''s'", "ds = 'red'",
    "ds IN ('red', 'blue')", "ds LIKE '%re%'", "ds NOT LIKE 'g%'", "ds > 'f'", "ds = s",
    "b", "NOT b", "b IS NULL", "s IS NOT NULL AND p < 0", "EXTRACT(YEAR FROM d) = 1998",
    "COALESCE(i32, 0) > 10", "CASE WHEN b THEN i32 > 0 ELSE p < 0 END",
]

failures = []
with Sluice() as sl:
    refused = []
    for name in t.column_names:
        try:
            sl.run("a = scan.table name=t\noutput a\n", {"t": t.select([name])})
        except SluiceError as e:
            refused.append(f"{name} ({t.schema.field(name).type}): {e.msg}")
    if refused:
        print("skipped: Arrow import refuses " + "; ".join(refused))
        sys.exit(77)
    con = duckdb.connect()
    con.register("t", t)

    def check(plan, sql, what, tables=None):
        try:
            got = sl.run(plan, tables or {"t": t})["o"]
        except SluiceError as err:
            failures.append(f"{what}: sluice failed: {err.msg}")
            return
        d = diff(got, con.sql(sql))
        if d:
            failures.append(f"{what}: {d}")

    for ex, dex in PROJECT:
        check(f'a = scan.table name=t\no = project(a) columns="id, v={ex}"\noutput o\n',
              f"select id, {dex or ex} as v from t", "project " + ex)
    for pred in FILTER:
        check(f'a = scan.table name=t\no = filter(a) where="{pred}"\noutput o\n',
              f"select * from t where {pred}", "filter " + pred)
    try:  # an empty result has no batches, so no columns either: count rows only
        got = sl.run('a = scan.table name=t\no = filter(a) where="s LIKE \'a%\' AND p > 0"\n'
                     'output o\n', {"t": t.slice(0, 0)})["o"]
        if got.num_rows:
            failures.append(f"filter on an empty input gave {got.num_rows} rows")
    except SluiceError as err:
        failures.append(f"filter on an empty input: sluice failed: {err.msg}")
print("\n".join(failures) or f"ok: {len(PROJECT)} projections, {len(FILTER) + 1} filters")
sys.exit(1 if failures else 0)
