#!/usr/bin/env python3
"""DuckDB reference for `sluice bench tpch` (docs/BENCH_PROTOCOL.md, "TPC-H").

The same .tbl files read into DuckDB tables in memory first (the types of
plans/tpch/schema.txt), then each query's standard text (tests/tpch/queries/qNN.sql)
run hot: one warm-up, then the median of `repeat` runs, each fetched as an Arrow table
(the complete result in host memory, as sluice's time ends). Prints one JSON line for
the loading, one per query (query, time_ms, rows, ...) and one of geometric means, like
sluice's.

usage: bench/peers/duckdb_tpch.py [--sf 1 | --data DIR] [--query all|1,6] [--threads 2] [--repeat 5]
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "tpch"))

import duckdb  # noqa: E402
from tpch_duckdb import (arrow_of, ensure_data, have_tables, load_duckdb,  # noqa: E402
                         query_sql, read_schema)


def result_rows(rel):
    """Fetches the whole result (as Arrow where pyarrow is installed, else as Python rows:
    GPU machines may lack pyarrow; TPC-H's results are small either way); its row count."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return len(rel.fetchall())
    return arrow_of(rel).num_rows


def data_dir(a):
    """--data, else ./tpch-sf<X> as `sluice tpch` keeps it (generated when missing)."""
    if not a.sf:
        m = re.search(r"sf([0-9.]+)", os.path.basename(os.path.normpath(a.data or "")))
        a.sf = m.group(1) if m else ("unknown" if a.data else "1")
    d = a.data or f"tpch-sf{a.sf}"
    if not (have_tables(d) if a.data else ensure_data(d, a.sf)):
        sys.exit(f"duckdb_tpch: no .tbl files in {d} (tpchgen-cli -s SF --output-dir={d})")
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sf", help="scale factor (default 1; with --data, its name's sf<X>)")
    ap.add_argument("--data")
    ap.add_argument("--query", default="all")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    queries = range(1, 23) if a.query == "all" else [int(q) for q in a.query.split(",")]
    d = data_dir(a)
    con = duckdb.connect()
    con.execute(f"SET threads={a.threads}")
    t0 = time.perf_counter()
    load_duckdb(con, read_schema(), d)
    load_ms = (time.perf_counter() - t0) * 1e3
    base = {"bench": "duckdb_tpch", "duckdb": duckdb.__version__, "sf": a.sf,
            "threads": a.threads}
    print(json.dumps({**base, "phase": "load", "load_ms": round(load_ms, 3)}), flush=True)
    logs = []
    for q in queries:
        sql = query_sql(q)
        times, cpu = [], []
        for r in range(a.repeat + 1):  # r = 0: the warm-up
            t0, c0 = time.perf_counter(), time.process_time()
            rows = result_rows(con.sql(sql))
            if r:
                times.append((time.perf_counter() - t0) * 1e3)
                cpu.append((time.process_time() - c0) * 1e3)  # every thread of the process
        med = statistics.median(times)
        logs.append(math.log(max(med, 1e-6)))
        print(json.dumps({**base, "query": f"q{q:02d}", "status": "ok",
                          "time_ms": round(med, 3), "min_ms": round(min(times), 3),
                          "max_ms": round(max(times), 3),
                          "cpu_ms": round(statistics.median(cpu), 3), "runs": a.repeat,
                          "rows": rows}),
              flush=True)
    print(json.dumps({**base, "summary": True,
                      "geomean_ms": round(math.exp(sum(logs) / len(logs)), 3),
                      "queries": len(logs), "load_ms": round(load_ms, 3)}))


if __name__ == "__main__":
    main()
