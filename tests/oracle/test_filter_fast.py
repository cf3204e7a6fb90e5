"""Filters whose predicate is an AND of comparisons of integer-like columns with
constants or with each other (the selection on stored values, pred_fast.c) against
DuckDB: int32, int64, date32, timestamp and decimal columns, constants at other scales,
beyond int32, on the left, column against column, batches with and without nulls (nulls
take the general evaluation), and predicates the fast path leaves to it. Exits 1 listing
every case that differs."""
import datetime
import decimal
import random

from oracle_common import require_modules, Sluice, finish, run_diff

pa, duckdb = require_modules()
rng = random.Random(31)
D0 = datetime.date(1995, 1, 1)
T0 = datetime.datetime(1995, 1, 1)


def batch(m, nulls):
    def maybe(v):
        return None if nulls and rng.random() < 0.1 else v
    return pa.record_batch([
        pa.array([maybe(rng.randint(-50, 50)) for _ in range(m)], pa.int32()),
        pa.array([maybe(rng.randint(-2**40, 2**40)) for _ in range(m)], pa.int64()),
        pa.array([maybe(D0 + datetime.timedelta(days=rng.randint(-400, 400))) for _ in range(m)],
                 pa.date32()),
        pa.array([D0 + datetime.timedelta(days=rng.randint(-400, 400)) for _ in range(m)],
                 pa.date32()),
        pa.array([maybe(decimal.Decimal(rng.randint(-1000, 1000)) / 100) for _ in range(m)],
                 pa.decimal128(15, 2)),
        pa.array([maybe(T0 + datetime.timedelta(seconds=rng.randint(-10**6, 10**6)))
                  for _ in range(m)], pa.timestamp("us")),
    ], names=["i", "l", "d", "d2", "p", "ts"])


t = pa.Table.from_batches([batch(3000, False), batch(2000, True), batch(1500, False)])
PREDICATES = [
    "i < 10",
    "i >= -5 AND i <= 5",
    "i BETWEEN -3 AND 30 AND l > 0",
    "10 > i",
    "i <> 0 AND i = i",
    "i < 3000000000",
    "i > -3000000000 AND i = 7",
    "l >= 1099511627776 OR l < 0",
    "d >= DATE '1995-01-01' AND d < DATE '1995-01-01' + INTERVAL '3' MONTH",
    "d < d2",
    "d <= d2 AND d2 <> DATE '1995-02-01'",
    "p BETWEEN 0.05 AND 0.07",
    "p < 3 AND p > -2.5",
    "p = 1.50",
    "p < 0.055",
    "p >= -1",
    "ts > TIMESTAMP '1995-01-05 00:00:00' AND ts < TIMESTAMP '1995-01-10 12:00:00'",
    "ts > DATE '1995-01-03'",
    "i = 3 AND d IS NOT NULL",
]

failures = []
with Sluice() as sl:
    for where in PREDICATES:
        plan = f'a = scan.table name=t\nf = filter(a) where="{where}"\noutput f\n'
        sql = f"select * from t where {where}"
        d = run_diff(sl, plan, {"t": t}, "f", duckdb.sql(sql))
        if d:
            failures.append(f"{where}: {d}")

finish(len(PREDICATES), failures)
