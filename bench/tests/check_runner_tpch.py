#!/usr/bin/env python3
"""Runs bench/run.py on two per-query TPC-H specs at SF 0.01 (written here, with a plans
folder holding Q6's plan only) and checks what it writes: every query's figure, its
DuckDB figure and status in the raw result (Q1 missing, not failing), and the report's
per-query table with the geometric mean; the spec whose query is missing misses its
target, the one with Q6 alone meets its generous one.

usage: check_runner_tpch.py BUILD_DIR    (exit 77 without duckdb or tpchgen-cli)
"""
import json
import os
import shutil
import sys
import tempfile

from check_runner import fail, run_runner

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def spec(name, queries, plans, data, target):
    return {"name": name, "area": "tpch", "device": "cpu", "workload": f"SF 0.01 q{queries}",
            "run": ["sluice", "bench", "tpch", "--sf", "0.01", "--cache", data, "--plans",
                    plans, "--query", queries, "--repeat", "1", "--placement", "cpu"],
            "per_query": "query", "metric": "time_ms",
            "vs": {"kind": "peer", "name": "DuckDB",
                   "run": ["python3", "bench/peers/duckdb_tpch.py", "--data", data, "--query",
                           queries, "--repeat", "1", "--threads", "{threads}"],
                   "metric": "time_ms"},
            "target": target}


def main():
    build = os.path.abspath(sys.argv[1])
    try:
        import duckdb  # noqa: F401
    except ImportError:
        print("skipped: no duckdb")
        return 77
    data = os.path.join(build, "tpch-sf0.01")
    if not os.path.exists(os.path.join(data, "lineitem.tbl")) and not shutil.which("tpchgen-cli"):
        print("skipped: no tpchgen-cli")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        plans = os.path.join(tmp, "plans")
        os.makedirs(plans)
        shutil.copy(os.path.join(ROOT, "plans", "tpch", "q06.plan"), plans)
        specs = [spec("tiny.tpch_missing", "1,6", plans, data,
                      {"text": "≤ 1,000,000×", "max_ratio": 1e6, "query_max_ratio": 1e6}),
                 spec("tiny.tpch_q6", "6", plans, data,
                      {"text": "≤ 1,000,000×", "max_ratio": 1e6, "query_max_ratio": 1e6})]
        specs_file = os.path.join(tmp, "tpch.json")
        with open(specs_file, "w") as f:
            json.dump(specs, f)
        recs, text = run_runner(specs_file, build, tmp, timeout=600)
    q = recs["tiny.tpch_missing"]["queries"]
    if q["q01"]["status"] != "missing" or "sluice" in q["q01"] or not q["q01"].get("vs"):
        fail(f"q01: {q['q01']}")
    if q["q06"]["status"] != "ok" or not q["q06"]["sluice"] > 0 or not q["q06"]["vs"] > 0:
        fail(f"q06: {q['q06']}")
    r = recs["tiny.tpch_q6"]
    if r["n_queries"] != 1 or abs(r["sluice"] - r["queries"]["q06"]["sluice"]) > 1e-9:
        fail(f"geometric mean of one query: {r}")
    lines = text.splitlines()
    for name, met in (("tiny.tpch_missing", "no"), ("tiny.tpch_q6", "yes")):
        row = next((l for l in lines if f"(`{name}`)" in l), None) or fail(f"no row {name}")
        if not row.rstrip(" |").endswith(met):
            fail(f"{name}: met should be {met}: {row}")
        head = f"### `{name}` per query"
        if not any(l.startswith(head) for l in lines):
            fail(f"no per-query table for {name}")
    q01 = next(l for l in lines if l.startswith("| q01 |"))
    cells = [c.strip() for c in q01.strip("|").split("|")]
    if cells[1] != "—" or not cells[2].endswith("ms") or cells[5] != "missing" or cells[6] != "no":
        fail(f"q01 row: {cells}")
    if not any(l.startswith("| geometric mean (1 answered by both) |") for l in lines):
        fail("no geometric mean row")
    print("check_runner_tpch: per-query records and tables well-formed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
