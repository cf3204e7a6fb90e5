#!/usr/bin/env python3
"""DuckDB reference for `sluice bench aggregate` (docs/BENCH_PROTOCOL.md, "Aggregate").

Same data shape, generated inside DuckDB before timing (no other Python package): N
rows, the group of each drawn uniformly from G (or Zipf(Z) through the inverse CDF), the
key a bijective 32-bit mix of the group as sluice's key_of makes it, an int64 value in
0..999; SELECT k, count(*), sum(v) GROUP BY k on that table, with `threads` DuckDB
threads. One warm-up, then the median of `repeat` runs; the result is materialized in
DuckDB (CREATE TEMP TABLE ... AS) so no Python conversion is timed. Prints one JSON line
like the sluice benchmarks.

--key-type utf8 or dict: the key is the group's 16-byte string as `sluice bench aggregate`
makes it (the hex digits of two mixes; DuckDB stores both as VARCHAR and compresses them
its own way); --value-type decimal: v is a DECIMAL(15,2) of the same digits (cents).

usage: bench/peers/duckdb_groupby.py --rows 2^24 --groups 1000 [--zipf 0] [--threads 2]
       [--repeat 5] [--key-type int32|utf8|dict] [--value-type int64|decimal]
"""
import argparse
import json
import statistics
import time

import duckdb


def count(s):
    return 2 ** int(s[2:]) if s.startswith("2^") else int(s)


def key_of_sql(x):
    """sluice's key_of (a bijection of uint32) as a DuckDB expression over BIGINT x."""
    m = "4294967295"
    x = f"xor(({x}), ({x}) >> 16)"
    x = f"(((({x})::HUGEINT * 2146121005) & {m})::BIGINT)"
    x = f"xor(({x}), ({x}) >> 15)"
    x = f"(((({x})::HUGEINT * 2221713035) & {m})::BIGINT)"
    return f"xor(({x}), ({x}) >> 16)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="2^24")
    ap.add_argument("--groups", default="1000")
    ap.add_argument("--zipf", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--key-type", choices=("int32", "utf8", "dict"), default="int32")
    ap.add_argument("--value-type", choices=("int64", "decimal"), default="int64")
    a = ap.parse_args()
    n, g = count(a.rows), count(a.groups)
    con = duckdb.connect()
    con.execute(f"SET threads={a.threads}")
    con.execute("SET preserve_insertion_order = false")
    con.execute(f"SELECT setseed({(a.seed % 1000) / 1000.0})")
    if a.zipf > 0:  # group = the first g whose CDF reaches a uniform draw
        con.execute(f"""CREATE TABLE cdf AS SELECT range AS g, sum(pow(range + 1, -{a.zipf}))
                        OVER (ORDER BY range) AS c FROM range({g})""")
        con.execute("CREATE TABLE u AS SELECT range AS i, random() * (SELECT max(c) FROM cdf) "
                    f"AS r, (floor(random() * 1000))::BIGINT AS v FROM range({n})")
        con.execute("CREATE TABLE src AS SELECT cdf.g, u.v FROM u ASOF JOIN cdf ON cdf.c >= u.r")
    else:
        con.execute(f"CREATE TABLE src AS SELECT (floor(random() * {g}))::BIGINT AS g, "
                    f"(floor(random() * 1000))::BIGINT AS v FROM range({n})")
    if a.key_type == "int32":
        u = key_of_sql("g")  # the uint32 read as int32, as sluice stores it
        key = f"(({u}) - CASE WHEN ({u}) >= 2147483648 THEN 4294967296 ELSE 0 END)::INTEGER"
    else:  # the same 16 hex digits as sluice's key_text
        key = (f"lpad(lower(hex({key_of_sql('g')})), 8, '0') || "
               f"lpad(lower(hex({key_of_sql('xor(g, 1540483477)')})), 8, '0')")
    val = "(v::DECIMAL(18,0) / 100)::DECIMAL(15,2)" if a.value_type == "decimal" else "v"
    con.execute(f"CREATE TABLE t AS SELECT {key} AS k, {val} AS v FROM src")
    vsum = con.execute("SELECT sum(v) FROM src").fetchone()[0]
    con.execute("DROP TABLE src")
    times = []
    for r in range(a.repeat + 1):
        con.execute("DROP TABLE IF EXISTS res")
        t0 = time.perf_counter()
        con.execute("CREATE TEMP TABLE res AS SELECT k, count(*) AS c, sum(v) AS s FROM t GROUP BY k")
        ms = (time.perf_counter() - t0) * 1e3
        if r:
            times.append(ms)
    out_rows, cnt, tot = con.execute("SELECT count(*), sum(c), sum(s) FROM res").fetchone()
    exact = tot * 100 if a.value_type == "decimal" else tot
    assert cnt == n and int(exact) == vsum and out_rows <= g, (cnt, exact, vsum, out_rows)
    med = statistics.median(times)
    print(json.dumps({"bench": "duckdb_groupby", "duckdb": duckdb.__version__,
                      "time_ms": round(med, 3), "min_ms": round(min(times), 3),
                      "max_ms": round(max(times), 3), "gtuples_per_s": round(n / med / 1e6, 4),
                      "output_rows": out_rows, "rows": n, "groups": g, "zipf": a.zipf,
                      "threads": a.threads, "key_type": a.key_type,
                      "value_type": a.value_type, "repeat": a.repeat}))


if __name__ == "__main__":
    main()
