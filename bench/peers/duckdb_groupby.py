#!/usr/bin/env python3
"""DuckDB reference for `sluice bench aggregate` (docs/BENCH_PROTOCOL.md, "Aggregate").

Same data shape: N rows, keys are G distinct random 32-bit values (a bijective mix of
the group number, drawn uniformly or Zipf(Z)), an int64 value column in 0..999;
SELECT k, count(*), sum(v) GROUP BY k on a table already in DuckDB (in memory), with
`threads` DuckDB threads. One warm-up, then the median of `repeat` runs; the result is
materialized in DuckDB (CREATE TEMP TABLE ... AS) so no Python conversion is timed.
Prints one JSON line like the sluice benchmarks.

usage: bench/peers/duckdb_groupby.py --rows 2^24 --groups 1000 [--zipf 0] [--threads 2] [--repeat 5]
"""
import argparse, json, statistics, time

import duckdb
import numpy as np


def count(s):
    return 2 ** int(s[2:]) if s.startswith("2^") else int(s)


def key_of(i):
    i = i.astype(np.uint32)
    i ^= i >> np.uint32(16)
    i *= np.uint32(0x7FEB352D)
    i ^= i >> np.uint32(15)
    i *= np.uint32(0x846CA68B)
    i ^= i >> np.uint32(16)
    return i.view(np.int32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="2^24")
    ap.add_argument("--groups", default="1000")
    ap.add_argument("--zipf", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    n, g = count(a.rows), count(a.groups)
    rng = np.random.default_rng(a.seed)
    if a.zipf > 0:
        w = np.arange(1, g + 1, dtype=np.float64) ** -a.zipf
        cdf = np.cumsum(w) / w.sum()
        grp = np.searchsorted(cdf, rng.random(n))
    else:
        grp = rng.integers(0, g, n)
    k = key_of(grp)
    v = rng.integers(0, 1000, n, dtype=np.int64)
    con = duckdb.connect()
    con.execute(f"SET threads={a.threads}")
    con.register("src", {"k": k, "v": v})
    con.execute("CREATE TABLE t AS SELECT * FROM src")
    con.unregister("src")
    times = []
    for r in range(a.repeat + 1):
        con.execute("DROP TABLE IF EXISTS res")
        t0 = time.perf_counter()
        con.execute("CREATE TEMP TABLE res AS SELECT k, count(*) AS c, sum(v) AS s FROM t GROUP BY k")
        ms = (time.perf_counter() - t0) * 1e3
        if r:
            times.append(ms)
    out_rows, cnt, tot = con.execute("SELECT count(*), sum(c), sum(s) FROM res").fetchone()
    assert cnt == n and tot == int(v.sum())
    med = statistics.median(times)
    print(json.dumps({"bench": "duckdb_groupby", "duckdb": duckdb.__version__, "time_ms": round(med, 3),
                      "min_ms": round(min(times), 3), "max_ms": round(max(times), 3),
                      "gtuples_per_s": round(n / med / 1e6, 4), "output_rows": out_rows,
                      "rows": n, "groups": g, "zipf": a.zipf, "threads": a.threads,
                      "repeat": a.repeat}))


if __name__ == "__main__":
    main()
