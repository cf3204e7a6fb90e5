#!/usr/bin/env python3
"""DuckDB reference for `sluice bench join` (issue 5): the same data shape as the bench's
defaults (build side r: 2^24 unique keys 0..n-1 shuffled, 4-byte int key + int payload;
probe side s: 2^24 foreign keys drawn uniformly from r's keys), generated inside DuckDB
before timing, then timed with N threads (median of --repeat runs after one warm-up):

  aggregate:    SELECT count(*), sum(r.p), sum(s.p) FROM s JOIN r USING (k)
  materialize:  CREATE TEMP TABLE out AS SELECT s.k, s.p AS sp, r.p AS rp
                FROM s JOIN r USING (k)   (the join result written to a table; dropped
                after each run, outside the timed span)

With --key-type utf8 the keys are 16-byte strings ('k' and 15 hex digits of the integer
key, as `sluice bench join --key-type utf8` makes them).

Usage: python3 bench/peers/duckdb_join.py [--build-rows N] [--probe-rows N] [--threads 2]
       [--repeat 5] [--key-type int|utf8]. Prints one JSON line per query.
"""
import argparse
import json
import statistics
import time

import duckdb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-rows", type=int, default=1 << 24)
    ap.add_argument("--probe-rows", type=int, default=1 << 24)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--key-type", choices=["int", "utf8"], default="int")
    a = ap.parse_args()
    con = duckdb.connect()
    con.execute(f"SET threads = {a.threads}")
    con.execute("SET preserve_insertion_order = false")
    nb, np_ = a.build_rows, a.probe_rows
    key = "printf('k%015x', {})" if a.key_type == "utf8" else "({})::INTEGER"
    con.execute(f"""CREATE TABLE r AS SELECT {key.format('k')} AS k,
                    (row_number() OVER () + 1)::INTEGER AS p
                    FROM (SELECT range AS k FROM range({nb}) ORDER BY hash(range + 42))""")
    con.execute(f"""CREATE TABLE s AS SELECT {key.format(f'hash(range * 7 + 1) % {nb}')} AS k,
                    (range + 1)::INTEGER AS p FROM range({np_})""")
    queries = {
        "aggregate": ("SELECT count(*), sum(r.p), sum(s.p) FROM s JOIN r USING (k)", None),
        "materialize": ("CREATE TEMP TABLE out AS SELECT s.k, s.p AS sp, r.p AS rp "
                        "FROM s JOIN r USING (k)", "DROP TABLE out"),
    }
    for name, (q, cleanup) in queries.items():
        times = []
        result = None
        for rep in range(a.repeat + 1):
            t0 = time.perf_counter()
            res = con.execute(q).fetchall()
            ms = (time.perf_counter() - t0) * 1e3
            if cleanup:
                result = con.execute("SELECT count(*) FROM out").fetchall()[0]
                con.execute(cleanup)
            else:
                result = res[0]
            if rep > 0:
                times.append(ms)
        med = statistics.median(times)
        print(json.dumps({"bench": "duckdb_join", "key_type": a.key_type, "output": name, "time_ms": round(med, 3),
                          "min_ms": round(min(times), 3), "max_ms": round(max(times), 3),
                          "gtuples_per_s": round((nb + np_) / (med * 1e6), 4),
                          "threads": a.threads, "duckdb": duckdb.__version__,
                          "result": [int(x) for x in result]}))


if __name__ == "__main__":
    main()
