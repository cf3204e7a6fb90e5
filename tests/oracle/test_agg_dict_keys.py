"""Group-by on dictionary-encoded keys (the group table's path, agg_dict.c) against
DuckDB: batches that each carry another dictionary (other strings, other order, a string
twice in one dictionary, unused entries), null keys, DICT keys with integer and date
keys, few groups and many (the partitioned merge, whose output must come in a few
batches). Exits 1 listing every case that
differs."""
import datetime
import random

from oracle_common import require_modules, Sluice, diff, finish, run_diff

pa, duckdb = require_modules()
rng = random.Random(5)


def table(n, n_batches, n_words):
    words = [f"w{i:05d}" + "x" * (i % 7) for i in range(n_words)] + ["", "é ü"]
    batches = []
    for b in range(n_batches):
        m = n // n_batches
        dic = rng.sample(words, rng.randint(1, len(words)))
        dic = dic + dic[:2]  # a string twice in one dictionary
        idx = [None if rng.random() < 0.05 else rng.randrange(len(dic)) for _ in range(m)]
        d = pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32()), pa.array(dic))
        k = pa.array([None if rng.random() < 0.05 else rng.randrange(3) for _ in range(m)],
                     pa.int32())
        dt = pa.array([datetime.date(1995, 1, 1) + datetime.timedelta(days=rng.randrange(2))
                       for _ in range(m)], pa.date32())
        v = pa.array([rng.randint(-1000, 1000) for _ in range(m)], pa.int64())
        batches.append(pa.record_batch([d, k, dt, v], names=["d", "k", "dt", "v"]))
    return pa.Table.from_batches(batches)


CASES = [
    ('keys="d" aggs="count(*), sum(v), min(v)"',
     "select d, count(*), sum(v), min(v) from t group by d"),
    ('keys="k, d, dt" aggs="count(v), max(v), avg(v)"',
     "select k, d, dt, count(v), max(v), avg(v) from t group by k, d, dt"),
    ('keys="d" aggs="count(*)"', "select d, count(*) from t group by d"),
]

failures = []
cases = 0
with Sluice() as sl:
    for n, nb, nw in ((0, 1, 3), (50, 1, 3), (3000, 7, 4), (60000, 11, 20000)):
        t = table(n, nb, nw)
        for opts, sql in CASES:
            cases += 1
            plan = f"a = scan.table name=t\nr = aggregate(a) {opts}\noutput r\n"
            d = run_diff(sl, plan, {"t": t}, "r", duckdb.sql(sql))
            if d:
                failures.append(f"{n} rows, {nb} batches, {nw} words, {opts}: {d}")

    # Many groups leave the partitioned merge as a few morsel-sized batches, not one
    # batch per partition.
    cases += 1
    big = pa.table({"k": pa.array([(i * 7919) % 150000 for i in range(600000)], pa.int64()),
                    "v": pa.array([i % 13 for i in range(600000)], pa.int64())})
    got = sl.run("a = scan.table name=t\nr = aggregate(a) keys=k aggs=\"sum(v)\"\noutput r\n",
                 {"t": big})["r"]
    d = diff(got, duckdb.sql("select k, sum(v) from big group by k"))
    if d or len(got.to_batches()) > 8:
        failures.append(f"150000 groups: {d or ''} {len(got.to_batches())} batches")

finish(cases, failures)
