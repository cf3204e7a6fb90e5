"""Group-by, sort and top-k on every column type compared with DuckDB on random data with
nulls, NaNs, duplicates and extreme values. Exits 77 (skipped) while
sl_table_import_stream refuses one of the types (Arrow import of the new types lands
from another branch); active once it takes them."""
import decimal
import random
import sys

from oracle_common import require_modules, Sluice, SluiceError, diff

pa, duckdb = require_modules()

rng = random.Random(11)
n = 3000


def maybe(v, p=0.1):
    return None if rng.random() < p else v


words = ["", "a", "ab", "abc", "b", "zz", "\u00e9t\u00e9", "x" * 20]
t = pa.table({
    "s": pa.array([maybe(rng.choice(words)) for _ in range(n)], pa.string()),
    "d": pa.array([maybe(rng.choice(words[::-1])) for _ in range(n)],
                  pa.string()).dictionary_encode(),
    "dt": pa.array([maybe(rng.randint(-30000, 30000)) for _ in range(n)], pa.int32()).cast(pa.date32()),
    "p": pa.array([maybe(decimal.Decimal(rng.randint(-10**13, 10**13)) / 100) for _ in range(n)],
                  pa.decimal128(15, 2)),
    "w": pa.array([maybe(decimal.Decimal(rng.choice([-1, 1]) * rng.randint(0, 10**27)) / 1000)
                   for _ in range(n)], pa.decimal128(30, 3)),
    "b": pa.array([maybe(rng.random() < 0.5) for _ in range(n)], pa.bool_()),
    "f": pa.array([maybe(rng.choice([float("nan"), 0.0, -1.5, 2.25, 1e300, -1e300]))
                   for _ in range(n)], pa.float64()),
    "i": pa.array([maybe(rng.randint(-5, 5)) for _ in range(n)], pa.int16()),
})

cases = [
    ('r = aggregate(a) keys="s, b" aggs="count(*), count(d), sum(p), min(dt), max(s), '
     'count(DISTINCT d), sum(w), avg(p), min(f), max(b)"',
     "select s, b, count(*), count(d), sum(p), min(dt), max(s), count(distinct d), sum(w), "
     "avg(p), min(f), max(b) from t group by s, b", False),
    ('r = aggregate(a) keys="d, dt" aggs="sum(i), max(f), count(DISTINCT s)"',
     "select d, dt, sum(i), max(f), count(distinct s) from t group by d, dt", False),
    ('r = aggregate(a) aggs="sum(p), sum(w), min(s), max(d), count(DISTINCT f)"',
     "select sum(p), sum(w), min(s), max(d), count(distinct f) from t", False),
    # min/max of a decimal(38)-wide column compare 128-bit integers (agg_any.c), nulls skipped
    ('r = aggregate(a) keys="b" aggs="min(w), max(w), count(w)"',
     "select b, min(w), max(w), count(w) from t group by b", False),
    ('r = aggregate(a) aggs="max(w), min(w)"', "select max(w), min(w) from t", False),
    ('r = sort.topk(a) keys="f DESC NULLS LAST, s NULLS FIRST" limit=25',
     "select * from t order by f desc nulls last, s nulls first, d nulls last, dt nulls last, "
     "p nulls last, w nulls last, b nulls last, i nulls last limit 25", True),
    ('r = sort(a) by="d NULLS FIRST, p DESC NULLS LAST, w, dt DESC, s, b, f, i"',
     "select * from t order by d nulls first, p desc nulls last, w nulls last, dt desc nulls first, "
     "s nulls last, b nulls last, f nulls last, i nulls last", True),
]

failures = []
with Sluice() as sl:
    try:
        sl.run("a = scan.table name=t\noutput a\n", {"t": t})
    except SluiceError as e:
        print(f"skipped: sl_table_import_stream refuses these types ({e})")
        sys.exit(77)
    for plan, sql, ordered in cases:
        try:
            got = sl.run("a = scan.table name=t\n" + plan + "\noutput r\n", {"t": t})["r"]
        except SluiceError as e:
            failures.append(f"{plan}: {e}")
            continue
        d = diff(got, duckdb.sql(sql), ordered=ordered)
        if d:
            failures.append(f"{plan}: {d}")
print("\n".join(failures) or "ok")
sys.exit(1 if failures else 0)
