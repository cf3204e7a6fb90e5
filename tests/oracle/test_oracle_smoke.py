"""The oracle harness itself: a group-by compared with DuckDB on random data must match,
and a deliberately different DuckDB query must be reported as a difference (so the
comparison can fail)."""
import random
import sys

from oracle_common import require_modules, Sluice, diff

pa, duckdb = require_modules()

rng = random.Random(7)
n = 5000
t = pa.table({
    "k": pa.array([rng.choice([None, -2**63, 2**63 - 1, 0, 1, 2, 3]) for _ in range(n)], pa.int64()),
    "v": pa.array([None if rng.random() < 0.1 else rng.uniform(-1e6, 1e6) for _ in range(n)]),
})
plan = 'a = scan.table name=t\ng = aggregate(a) keys=k aggs="count(*), sum(v)"\noutput g\n'
failures = []
with Sluice() as sl:
    got = sl.run(plan, {"t": t})["g"]
    d = diff(got, duckdb.sql("select k, count(*), sum(v) from t group by k"))
    if d:
        failures.append("group-by: " + d)
    if diff(got, duckdb.sql("select k, count(*) + 1, sum(v) from t group by k")) is None:
        failures.append("the comparison missed a wrong count")
print("\n".join(failures) or "ok")
sys.exit(1 if failures else 0)
