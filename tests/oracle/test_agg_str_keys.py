"""Group-by on utf8 and large_utf8 keys (the group table's path, agg_str.c) against
DuckDB: empty input, one row, all-null keys, keys of 0, 7, 8, 15, 16, 17 and 200 bytes
(strings that differ in one byte only, where the two-word comparison of short keys and
the hash of long ones must tell them apart), sliced batches (offsets not starting at
0), composite keys (a string with an integer, a date or a dictionary key, two strings),
and enough distinct strings to grow the shared table and empty the workers' caches.
Exits 1 listing every case that differs."""
import datetime
import random

from oracle_common import require_modules, Sluice, diff, finish, run_diff

pa, duckdb = require_modules()
rng = random.Random(17)

LENGTHS = (0, 7, 8, 15, 16, 17, 200)


def words():
    """Per length: a base string and variants differing in the first, a middle and the
    last byte, plus a non-ASCII one."""
    out = []
    for n in LENGTHS:
        base = "".join(chr(97 + (i * 7) % 26) for i in range(n))
        out.append(base)
        for at in {0, n // 2, n - 1} if n else ():
            out.append(base[:at] + "Z" + base[at + 1:])
    return out + ["é ü", "\u4e2d\u6587"]


def maybe(v, p):
    return None if rng.random() < p else v


def table(n, n_batches, null_p, large, pool):
    st = pa.large_string() if large else pa.string()
    batches = []
    for b in range(n_batches):
        m = n // n_batches + 3
        s = pa.array([maybe(rng.choice(pool), null_p) for _ in range(m)], st)
        s2 = pa.array([maybe(rng.choice(pool[:5]), 0.05) for _ in range(m)], st)
        d = pa.array([maybe(rng.choice(pool[:4]), 0.05) for _ in range(m)],
                     pa.string()).dictionary_encode()
        k = pa.array([maybe(rng.randrange(3), 0.05) for _ in range(m)], pa.int32())
        dt = pa.array([datetime.date(1995, 1, 1) + datetime.timedelta(days=rng.randrange(2))
                       for _ in range(m)], pa.date32())
        v = pa.array([maybe(rng.randint(-1000, 1000), 0.1) for _ in range(m)], pa.int64())
        f = pa.array([maybe(rng.random(), 0.1) for _ in range(m)], pa.float64())
        rb = pa.record_batch([s, s2, d, k, dt, v, f], names=["s", "s2", "d", "k", "dt", "v", "f"])
        batches.append(rb.slice(3))  # offsets not starting at 0
    return pa.Table.from_batches(batches)


CASES = [
    ('keys="s" aggs="count(*), sum(v), min(v), max(f), avg(v), count(v)"',
     "select s, count(*), sum(v), min(v), max(f), avg(v), count(v) from t group by s"),
    ('keys="s, k" aggs="count(*), sum(v)"',
     "select s, k, count(*), sum(v) from t group by s, k"),
    ('keys="k, s2, dt, s" aggs="sum(f), max(v)"',
     "select k, s2, dt, s, sum(f), max(v) from t group by k, s2, dt, s"),
    ('keys="d, s" aggs="count(*)"', "select d, s, count(*) from t group by d, s"),
    ('keys="s"', "select s, count(*) from t group by s"),  # no aggs: count(*)
]

failures = []
cases = 0
pool = words()
with Sluice() as sl:
    for n, nb, null_p in ((0, 1, 0.1), (1, 1, 0.0), (500, 1, 1.0), (5000, 7, 0.05),
                          (60000, 11, 0.02)):
        for large in (False, True):
            t = table(n, nb, null_p, large, pool)
            if n == 1:
                t = t.slice(0, 1)
            for opts, sql in CASES:
                cases += 1
                plan = f"a = scan.table name=t\nr = aggregate(a) {opts}\noutput r\n"
                d = run_diff(sl, plan, {"t": t}, "r", duckdb.sql(sql))
                if d:
                    failures.append(f"{n} rows, {nb} batches, nulls {null_p}, "
                                    f"large {large}, {opts}: {d}")

    # Many distinct strings: the shared table grows many times, each worker's cache
    # fills and is emptied, and the partitioned merge runs; the output comes in a few
    # batches.
    for large in (False, True):
        cases += 1
        m = 250000
        st = pa.large_string() if large else pa.string()
        big = pa.table({"s": pa.array([f"key-{(i * 7919) % 100000:07d}" + "x" * (i % 3 * 9)
                                       for i in range(m)], st),
                        "v": pa.array([i % 13 for i in range(m)], pa.int64())})
        got = sl.run("a = scan.table name=big\nr = aggregate(a) keys=s aggs=\"sum(v), "
                     "count(*)\"\noutput r\n", {"big": big})["r"]
        d = diff(got, duckdb.sql("select s, sum(v), count(*) from big group by s"))
        if d or len(got.to_batches()) > 16:
            failures.append(f"many groups, large {large}: {d or ''} "
                            f"{len(got.to_batches())} batches")

finish(cases, failures)
