#!/usr/bin/env python3
"""Reads a TPC-H-style .tbl file (`|`-separated, trailing `|`, no header) of every
column type with `sluice run` (scan.csv with a schema of names and types, printed
with --format csv) and with DuckDB, and checks that both read the same values: random
int64, dates, decimal(15,2) and decimal(38,10), timestamps, booleans and UTF-8
strings with nulls, their extremes included. Also writes the table back through
write.csv and gen.values through `sluice gen`, and checks DuckDB reads those too.
Exit code 77 (skipped) without the duckdb module.

argv[1]: the sluice executable."""
import csv
import datetime
import decimal
import io
import os
import random
import subprocess
import sys
import tempfile

try:
    import duckdb
except ImportError:
    print("SKIP: duckdb is not importable")
    sys.exit(77)

SLUICE = sys.argv[1]
rng = random.Random(5)
decimal.getcontext().prec = 60
COLS = [("k", "int64", "BIGINT"), ("d", "date32", "DATE"),
        ("price", "decimal(15,2)", "DECIMAL(15,2)"), ("big", "decimal(38,10)", "DECIMAL(38,10)"),
        ("ts", "timestamp", "TIMESTAMP"), ("flag", "bool", "BOOLEAN"),
        ("mode", "dict", "VARCHAR"), ("comment", "utf8", "VARCHAR")]
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def rand_row(i):
    words = ["carefully", "final", "deposits", "caf\u00e9", "\u4e2d\u6587", "x"]
    vals = [
        str(rng.randint(-2 ** 63, 2 ** 63 - 1) if i > 1 else [-2 ** 63, 2 ** 63 - 1][i]),
        (datetime.date(1, 1, 1) + datetime.timedelta(days=rng.randint(0, 3652058))).isoformat(),
        str(decimal.Decimal(rng.randint(-10 ** 15 + 1, 10 ** 15 - 1)).scaleb(-2)),
        str(decimal.Decimal(rng.randint(-10 ** 38 + 1, 10 ** 38 - 1)).scaleb(-10)),
        (datetime.datetime(1970, 1, 1) + datetime.timedelta(
            microseconds=rng.randint(-2 ** 55, 2 ** 55))).isoformat(sep=" "),
        rng.choice(["true", "false"]),
        rng.choice(["AIR", "MAIL", "SHIP", "TRUCK"]),
        " ".join(rng.choice(words) for _ in range(rng.randint(1, 5))),
    ]
    return [v if rng.random() > 0.1 else "" for v in vals]


def as_text(v):
    """A DuckDB value as sluice prints it."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    return str(v)


def sluice_rows(plan_text, tmp):
    plan = os.path.join(tmp, "q.plan")
    with open(plan, "w") as f:
        f.write(plan_text)
    out = subprocess.run([SLUICE, "run", plan, "--format", "csv", "--limit", "1000000"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"sluice run failed: {out.stderr}")
    rows = list(csv.reader(io.StringIO(out.stdout)))
    return (rows[0], sorted(rows[1:])) if rows else ([], [])


def duck_rows(sql):
    return sorted([as_text(v) for v in r] for r in duckdb.sql(sql).fetchall())


with tempfile.TemporaryDirectory() as tmp:
    tbl = os.path.join(tmp, "t.tbl")
    rows = [rand_row(i) for i in range(3000)]
    with open(tbl, "w", encoding="utf-8") as f:
        for r in rows:
            f.write("|".join(r) + "|\n")
    decl = ", ".join(f"{n}:{t}" for n, t, _ in COLS)
    header, got = sluice_rows(f's = scan.csv path="{tbl}" header=false delimiter="|" '
                              f'trailing_delimiter=true quote="" columns="{decl}"\n'
                              f'output s\n', tmp)
    check(header == [n for n, _, _ in COLS], f"sluice's column names ({header})")
    duck_cols = ", ".join(f"'{n}': '{t}'" for n, _, t in COLS) + ", 'trail': 'VARCHAR'"
    want = duck_rows(f"select {', '.join(n for n, _, _ in COLS)} from read_csv('{tbl}', "
                     f"delim='|', header=false, quote='', columns={{{duck_cols}}})")
    check(len(got) == 3000, f"sluice read 3000 rows ({len(got)})")
    bad = [(g, w) for g, w in zip(got, want) if g != w]
    check(not bad, f"every value equals DuckDB's ({len(bad)} differ; first {bad[:1]})")

    # write.csv, read back by DuckDB.
    out_csv = os.path.join(tmp, "w.csv")
    sluice_rows(f's = scan.csv path="{tbl}" header=false delimiter="|" trailing_delimiter=true '
                f'quote="" columns="{decl}"\nw = write.csv(s) path="{out_csv}" null=NULL\n', tmp)
    duck_cols = ", ".join(f"'{n}': '{t}'" for n, _, t in COLS)
    again = duck_rows(f"select * from read_csv('{out_csv}', header=true, nullstr='NULL', "
                      f"columns={{{duck_cols}}})")
    check(again == want, "write.csv output reads back in DuckDB unchanged")

    # sluice gen writes generated strings and decimals that DuckDB reads.
    gen_csv = os.path.join(tmp, "g.csv")
    subprocess.run([SLUICE, "gen", "gen.values", "rows=1000", "type=decimal(12,3)",
                    "min=-5", "max=5", "-o", gen_csv], check=True, capture_output=True)
    vals = [r[0] for r in duckdb.sql(f"select * from read_csv('{gen_csv}', header=true, "
                                     f"columns={{'x': 'DECIMAL(12,3)'}})").fetchall()]
    check(len(vals) == 1000 and min(vals) >= -5 and max(vals) <= 5,
          "sluice gen decimals read by DuckDB, in range")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
