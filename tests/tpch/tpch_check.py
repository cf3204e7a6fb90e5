#!/usr/bin/env python3
"""Runs the TPC-H plans (plans/tpch/qNN.plan) on sluice and checks each answer against
DuckDB running the standard query text (tests/tpch/queries/qNN.sql) on the same .tbl
files.

    tpch_check.py [--sf 0.01 | --data DIR] [--query 1,5,22] [--placement cpu|gpu|auto]
                  [--require-all] [--repeat N]
    tpch_check.py [--sf 0.01 | --data DIR] [--query ...] --write-expected DIR

Data: --data DIR holds the eight .tbl files; else tpchgen-cli writes them for --sf into
$SLUICE_TPCH_CACHE (default: build/tpch-sf<SF> beside this checkout) once. sluice loads
each table with scan.csv and the schema of plans/tpch/schema.txt; the plans name the
tables (scan.table name=lineitem) and output their answer as `result`.

The answer must equal DuckDB's as a multiset of rows (decimals exact, floats within 1e-9
relative), and the columns of the query's `-- sluice-order:` line must come in DuckDB's
order (so ties may come in any order). --write-expected DIR writes DuckDB's answers as
DIR/qNN.csv (every selected query, plan or not) for `sluice tpch --expected DIR`, which
checks by the same rules, and runs nothing on sluice. Exit: 0 when every run query matched, 1 when one
did not (or, with --require-all, a plan is missing), 77 when pyarrow, duckdb or
tpchgen-cli is missing.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
from tpch_duckdb import (TABLES, ensure_data, load_duckdb, order_columns,  # noqa: E402
                         query_sql, read_schema, require_modules, write_expected)

require_modules()
import duckdb  # noqa: E402
from compare import as_table, diff  # noqa: E402
from sluice_py import Sluice, SluiceError  # noqa: E402


def data_dir(args):
    if args.data:
        return args.data
    cache = os.environ.get("SLUICE_TPCH_CACHE") or os.path.join(ROOT, "build",
                                                                  f"tpch-sf{args.sf}")
    if not ensure_data(cache, args.sf):
        print("skipped: tpchgen-cli is not installed (scripts/setup.sh installs it)")
        sys.exit(77)
    return cache


def load_sluice(sl, schema, ddir):
    """{table: sluice table handle}, each read by sluice's own .tbl reader."""
    handles = {}
    for t in TABLES:
        cols = ", ".join(f"{c}:{ty}" for c, ty in schema[t])
        path = os.path.join(ddir, t + ".tbl")
        plan = (f't = scan.csv path="{path}" header=false delimiter="|" '
                f'trailing_delimiter=true quote="" columns="{cols}"\noutput t\n')
        handles[t] = sl.import_table(sl.run(plan)["t"])
    return handles


def check_order(got, want, cols):
    """None when got's ORDER BY columns come in want's order, else what differs."""
    names = want.column_names
    for c in cols:
        i = names.index(c)
        g, w = got.column(i).to_pylist(), want.column(i).to_pylist()
        if g != w:
            bad = next(k for k, (x, y) in enumerate(zip(g, w)) if x != y)
            return f"order: column {c} differs first at row {bad}: got {g[bad]}, want {w[bad]}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", default="0.01")
    ap.add_argument("--data")
    ap.add_argument("--query", default="all", help="comma-separated numbers, or all")
    ap.add_argument("--placement", choices=["cpu", "gpu", "auto"])
    ap.add_argument("--require-all", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="runs per query (time: best)")
    ap.add_argument("--write-expected", metavar="DIR",
                    help="write DuckDB's answers as DIR/qNN.csv, then stop")
    args = ap.parse_args()
    queries = range(1, 23) if args.query == "all" else [int(q) for q in args.query.split(",")]

    schema = read_schema()
    ddir = data_dir(args)
    con = duckdb.connect()
    load_duckdb(con, schema, ddir)
    if args.write_expected:
        write_expected(con, args.write_expected, queries, ddir)
        print(f"wrote {len(queries)} answers into {args.write_expected}")
        return 0
    failed = missing = passed = 0
    with Sluice(placement=args.placement) as sl:
        t0 = time.perf_counter()
        tables = load_sluice(sl, schema, ddir)
        print(f"loaded {ddir} in {time.perf_counter() - t0:.2f} s")
        for q in queries:
            name = f"q{q:02d}"
            plan_path = os.path.join(ROOT, "plans", "tpch", name + ".plan")
            sql = query_sql(q)
            if not os.path.exists(plan_path):
                print(f"{name} missing")
                missing += 1
                continue
            want = as_table(con.sql(sql))
            try:
                best = None
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    out = sl.run(open(plan_path).read(), tables)
                    dt = time.perf_counter() - t0
                    best = dt if best is None else min(best, dt)
                got = out["result"]
                problem = diff(got, want) or check_order(got, want, order_columns(sql))
            except (SluiceError, KeyError) as e:
                problem = f"error: {e}"
            if problem:
                failed += 1
                print(f"{name} FAIL {problem}")
            else:
                passed += 1
                print(f"{name} ok {got.num_rows} rows {best * 1e3:.1f} ms")
        for h in tables.values():
            sl.release(h)
    print(f"{passed} passed, {failed} failed, {missing} missing")
    return 1 if failed or (args.require_all and missing) else 0


if __name__ == "__main__":
    sys.exit(main())
