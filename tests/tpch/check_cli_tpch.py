#!/usr/bin/env python3
"""`sluice tpch` and `sluice bench tpch` on SF 0.01 (docs/TPCH.md).

    check_cli_tpch.py SLUICE_EXE DATA_CACHE SCRATCH_DIR

- Q6 (plans/tpch/q06.plan) and three test plans (q02: nation sorted, strings with commas
  and ORDER BY ties; q04: float64 values; q05: an empty result) match DuckDB's answers
  written by tpch_duckdb.write_expected / answer_text; q03 has no plan and shows as
  missing without failing; q07's plan fails: exit 1, the other queries still run.
- Corrupted answers (a decimal's last digit, a string, a missing row, two rows out of
  ORDER BY order, a float beyond 1e-9 relative) each make it exit 1 naming the
  difference; a float within 1e-9 relative still matches.
- Loader errors: a missing .tbl file and a malformed line exit 1 naming the file (and the
  line and column); the engine that met the malformed line still runs a plan
  (through libsluice, $SLUICE_LIB).
- The same answers under placement auto, and with a GPU under placement gpu with the
  tables in host, pinned and GPU memory.
- `bench tpch` prints a load line, one JSON line per query and a summary.
- `tpch --explain` names every pipeline of each query's plan (each node of the plan
  file, where it runs and why); `--explain-analyze` adds to each a measured line and
  one of where each of its stages ran; with `--trace-dir DIR` it writes each query's
  trace and profile (JSON), and `--trace-dir` alone is a usage error.
Exit 77 (skip) without duckdb, pyarrow or tpchgen-cli.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
from tpch_duckdb import (TABLES, answer_text, arrow_of, ensure_data, load_duckdb,  # noqa: E402
                         read_schema, require_modules, write_expected)

require_modules()
import duckdb  # noqa: E402

SLUICE, CACHE, SCRATCH = sys.argv[1:4]
failures = []

TEST_PLANS = {  # query number -> (plan text, DuckDB SQL, ORDER BY columns)
    2: ('n = scan.table name=nation\ns = sort(n) by="n_regionkey DESC, n_name"\n'
        'output s as result\n',
        "select * from nation order by n_regionkey desc, n_name", ["n_regionkey"]),
    4: ('n = scan.table name=nation\n'
        'p = project(n) columns="k=n_nationkey, f=CAST(n_nationkey AS float64) / 3"\n'
        'output p as result\n',
        "select n_nationkey as k, n_nationkey::double / 3 as f from nation", []),
    5: ('n = scan.table name=nation\nf = filter(n) where="n_nationkey < 0"\n'
        'output f as result\n', "select * from nation where n_nationkey < 0", []),
}
FAILING_PLAN = 7  # scans a table that is not loaded


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def sluice(*args):
    p = subprocess.run([SLUICE, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def data_dir():
    if not ensure_data(CACHE, "0.01"):
        print("skipped: tpchgen-cli is not installed")
        sys.exit(77)
    return CACHE


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def setup(data):
    """The plans and answers directories: Q6's real plan plus the test plans."""
    plans, exp = os.path.join(SCRATCH, "plans"), os.path.join(SCRATCH, "expected")
    for d in (plans, exp):
        os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(ROOT, "plans", "tpch", "q06.plan"), plans)
    shutil.copy(os.path.join(ROOT, "plans", "tpch", "schema.txt"), plans)
    con = duckdb.connect()
    load_duckdb(con, read_schema(), data)
    write_expected(con, exp, [6], data)
    write(os.path.join(plans, f"q{FAILING_PLAN:02d}.plan"),
          "x = scan.table name=no_such_table\noutput x as result\n")
    for q, (plan, sql, order) in TEST_PLANS.items():
        write(os.path.join(plans, f"q{q:02d}.plan"), plan)
        write(os.path.join(exp, f"q{q:02d}.csv"),
              answer_text(arrow_of(con.sql(sql)), order, f"test query {q}: {sql}"))
    return plans, exp


def corrupted(exp, name, q, edit):
    """A copy of the answers with qNN.csv's lines passed through edit(lines)."""
    d = os.path.join(SCRATCH, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(exp, d)
    path = os.path.join(d, f"q{q:02d}.csv")
    lines = open(path).read().splitlines()
    write(path, "\n".join(edit(lines)) + "\n")
    return d


def body(lines):
    """Index of the first data row (after comments and the header)."""
    return next(i for i, l in enumerate(lines) if not l.startswith("#")) + 1


def last_digit_up(s):
    return s[:-1] + str((int(s[-1]) + 1) % 10)


def swap_rows(lines):
    b = body(lines)  # first row has the highest n_regionkey, last the lowest
    lines[b], lines[-1] = lines[-1], lines[b]
    return lines


def float_edit(rel):
    def edit(lines):
        b = body(lines)
        k, f = lines[b + 3].split(",")
        lines[b + 3] = f"{k},{repr(float(f) * (1 + rel))}"
        return lines
    return edit


def main():
    data = data_dir()
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    plans, exp = setup(data)
    common = ["--data", data, "--plans", plans, "--placement", "cpu", "--threads", "2"]
    rc, out, err = sluice("tpch", *common, "--query", "2,3,4,5,6", "--expected", exp)
    print(out, err)
    check(rc == 0, "tpch: the right answers exit 0")
    for q in (2, 4, 5, 6):
        check(any(l.startswith(f"q{q:02d} ") and l.endswith("matches the expected answer")
                  for l in out.splitlines()), f"tpch: q{q:02d} matches")
    check("q03  missing" in out, "tpch: q03 (no plan) shows as missing")
    check("loaded lineitem" in out and "loaded 8 tables" in out, "tpch: says what it loaded")

    # The same answers under auto placement, and on a GPU from each residency when the
    # engine sees one (the lead's H100 runs; skipped here without a GPU).
    rc, out, err = sluice("tpch", *common[:4], "--placement", "auto", "--query", "2,4,5,6",
                          "--expected", exp)
    check(rc == 0, f"tpch: placement auto gives the same answers (rc {rc}) {err.strip()}")
    devices = json.loads(sluice("devices", "--json")[1])["devices"]
    if any(d["kind"] == "cuda" and d["usable"] for d in devices):
        for res in ("host", "pinned", "gpu"):
            rc, out, err = sluice("tpch", *common[:4], "--placement", "gpu", "--residency", res,
                                  "--query", "2,4,5,6", "--expected", exp)
            check(rc == 0, f"tpch: placement gpu, residency {res}: the same answers (rc {rc}) "
                           f"{err.strip()}")
    else:
        print("skip  placement gpu: no GPU")

    check_explain(common, plans)

    rc, out, err = sluice("tpch", *common, "--query", f"6,{FAILING_PLAN}", "--expected", exp)
    check(rc == 1 and "q07  ERROR" in out and "no_such_table" in err and
          "q06         1 rows" in out, f"tpch: a failing plan exits 1, the others run (rc {rc})")

    cases = [
        ("decimal", 6, lambda l: l[:-1] + [last_digit_up(l[-1])], "column revenue"),
        ("string", 2, lambda l: [x.replace("ALGERIA", "ALGERIE") for x in l], "ALGERIE"),
        ("missing_row", 2, lambda l: l[:-1], "rows, want"),
        ("order", 2, swap_rows, "order: column n_regionkey"),
        ("float", 4, float_edit(1e-6), "column f"),
    ]
    for name, q, edit, msg in cases:
        d = corrupted(exp, "bad_" + name, q, edit)
        rc, out, err = sluice("tpch", *common, "--query", str(q), "--expected", d)
        check(rc == 1 and "WRONG" in out and msg in out,
              f"tpch: a wrong answer ({name}) exits 1 naming it: rc {rc}, "
              f"{[l for l in out.splitlines() if 'WRONG' in l]}")
    d = corrupted(exp, "float_close", 4, float_edit(1e-12))
    rc, out, err = sluice("tpch", *common, "--query", "4", "--expected", d)
    check(rc == 0, f"tpch: a float within 1e-9 relative matches (rc {rc})")
    d = corrupted(exp, "crlf", 2, lambda l: [x + "\r" for x in l])
    rc, out, err = sluice("tpch", *common, "--query", "2", "--expected", d)
    check(rc == 0, f"tpch: an answer file with CRLF line ends matches (rc {rc})")
    d = corrupted(exp, "open_quote", 2, lambda l: l[:-1] + ['"' + l[-1]])
    rc, out, err = sluice("tpch", *common, "--query", "2", "--expected", d)
    check(rc == 1 and "line 28: not a CSV record" in out,
          f"tpch: a broken answer file is named with its line (rc {rc}) "
          f"{[l for l in out.splitlines() if 'WRONG' in l]}")

    # Loader errors: a missing file, a malformed line.
    broken = os.path.join(SCRATCH, "broken")
    os.makedirs(broken)
    for t in TABLES[:-1]:
        os.symlink(os.path.join(os.path.abspath(data), t + ".tbl"), os.path.join(broken, t + ".tbl"))
    rc, out, err = sluice("tpch", "--data", broken, "--plans", plans, "--query", "6")
    check(rc == 1 and "lineitem.tbl" in err, f"load: a missing file is named: {err.strip()}")
    good = open(os.path.join(data, "lineitem.tbl")).read().splitlines()[:5]
    f = good[3].split("|")
    f[4] = "seventeen"  # l_quantity, the fifth column
    bad_line = "|".join(f)
    write(os.path.join(broken, "lineitem.tbl"), "\n".join(good[:3] + [bad_line] + good[4:]) + "\n")
    rc, out, err = sluice("tpch", "--data", broken, "--plans", plans, "--query", "6")
    check(rc == 1 and "lineitem.tbl' line 4, column 11" in err and "l_quantity" in err,
          f"load: a malformed line is named by file, line and column: {err.strip()}")
    engine_usable_after_load_error(os.path.join(broken, "lineitem.tbl"), data)

    rc, out, err = sluice("bench", "tpch", *common, "--sf", "0.01", "--query", "2,3,6,7",
                          "--repeat", "2", "--expected", exp)
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    print(out, err)
    by_q = {j["query"]: j for j in lines if "query" in j}
    check(rc == 1 and lines and lines[0].get("phase") == "load" and lines[0]["load_ms"] > 0,
          "bench tpch: a load line first (exit 1: q07 fails)")
    check(by_q.get("q07", {}).get("status") == "error", "bench tpch: q07's error")
    check(by_q.get("q02", {}).get("matches_expected") is True and by_q["q02"]["rows"] == 25
          and by_q["q02"]["runs"] == 2 and by_q["q02"]["time_ms"] > 0
          and by_q["q02"]["sf"] == "0.01" and by_q["q02"]["placement"] == "cpu",
          "bench tpch: q02's line")
    check(by_q.get("q03", {}).get("status") == "missing", "bench tpch: q03 missing")
    # Q6 reads l_shipdate (date32) and three decimal(15,2) columns: 4 + 3 * 8 bytes a row.
    with open(os.path.join(data, "lineitem.tbl")) as f:
        li_rows = sum(1 for _ in f)
    q6 = by_q.get("q06", {})
    check(q6.get("scan_bytes") == 28 * li_rows and q6.get("floor") == "memory"
          and q6.get("floor_ms", 0) > 0
          and abs(q6["x_floor"] - q6["time_ms"] / q6["floor_ms"]) < 0.01 * q6["x_floor"] + 0.01,
          f"bench tpch: q06's scan bytes and floor ({q6.get('scan_bytes')} vs {28 * li_rows})")
    s = lines[-1] if lines else {}
    check(s.get("summary") and s["ok"] == 2 and s["missing"] == 1 and s["error"] == 1
          and s["geomean_ms"] > 0,
          "bench tpch: the summary line last")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


def explain_sections(out):
    """{query number: its report's lines} of `tpch --explain` output."""
    sections, cur = {}, None
    for line in out.splitlines():
        if line.startswith("== q") and line.endswith(" =="):
            cur = sections.setdefault(int(line[4:6]), [])
        elif cur is not None:
            cur.append(line)
    return sections


def check_explain(common, plans):
    """Each query's report names its pipelines 0..N-1 (N from its header line), every
    node of its plan file, and where each pipeline runs and why."""
    queries = (2, 4, 5, 6)
    for flag in ("--explain", "--explain-analyze"):
        rc, out, err = sluice("tpch", *common, "--query", ",".join(map(str, queries)), flag)
        secs = explain_sections(out)
        check(rc == 0 and sorted(secs) == list(queries),
              f"tpch {flag}: a report per query (rc {rc}) {err.strip()}")
        for q in queries:
            lines = secs.get(q, [])
            head = next((l for l in lines if l.startswith("plan ")), "")
            n = int(head.split(": ")[1].split()[0]) if ": " in head else -1
            flows = [l for l in lines if l.startswith("pipeline ")]
            devices = [l for l in lines if l.startswith("  device   cpu: ")]
            measured = [l for l in lines if l.startswith("  measured ")]
            ran = [l for l in lines if l.startswith("  ran ") and "not measured" not in l]
            text = open(os.path.join(plans, f"q{q:02d}.plan")).read()
            nodes = [l.split("=")[0].strip() for l in text.splitlines()
                     if "=" in l and not l.startswith(("#", "output"))]
            named = all(any(f"{nd} (" in f for f in flows) for nd in nodes)
            check(n >= 1 and [f.split(":")[0] for f in flows] ==
                  [f"pipeline {k}" for k in range(n)] and len(devices) == n and named
                  and len(measured) == len(ran) == (n if flag == "--explain-analyze" else 0),
                  f"tpch {flag}: q{q:02d} names its {n} pipelines, every node "
                  f"({nodes}) and where each runs ({len(devices)} device lines, "
                  f"{len(measured)} measured, {len(ran)} with where each stage ran)")
    rc, out, err = sluice("tpch", *common, "--query", "3", "--explain")
    check(rc == 1 and "q03.plan" in err, f"tpch --explain: a missing plan is named (rc {rc})")
    # --trace-dir: the measured run's trace (task spans) and profile per query
    tdir = os.path.join(SCRATCH, "traces")
    os.makedirs(tdir, exist_ok=True)
    rc, out, err = sluice("tpch", *common, "--query", "5,6", "--explain-analyze",
                          "--trace-dir", tdir)
    for q in (5, 6):
        try:
            events = json.load(open(os.path.join(tdir, f"q{q:02d}.json")))
            prof = json.load(open(os.path.join(tdir, f"q{q:02d}.profile.json")))
        except (OSError, ValueError) as e:
            events, prof = [], {"error": str(e)}
        spans = [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]
        check(rc == 0 and spans and prof.get("status") == "SL_OK" and prof.get("operators"),
              f"tpch --explain-analyze --trace-dir: q{q:02d}'s trace ({len(spans)} task "
              f"spans) and profile ({str(prof)[:80]}) (rc {rc}) {err.strip()}")
    rc, out, err = sluice("tpch", *common, "--query", "6", "--trace-dir", tdir)
    check(rc == 2 and "--explain-analyze" in err,
          f"tpch --trace-dir without --explain-analyze is a usage error (rc {rc})")


def engine_usable_after_load_error(bad_tbl, data):
    """The loader's scan on the malformed file fails on an engine that then reads the
    good file (libsluice through ctypes; skipped without $SLUICE_LIB)."""
    if not os.environ.get("SLUICE_LIB"):
        print("skip  engine after a load error: no SLUICE_LIB")
        return
    from sluice_py import Sluice, SluiceError
    cols = ", ".join(f"{c}:{t}" for c, t in read_schema()["lineitem"])

    def plan(path):
        return (f't = scan.csv path="{path}" header=false delimiter="|" '
                f'trailing_delimiter=true quote="" columns="{cols}"\noutput t\n')
    with Sluice(placement="cpu") as sl:
        try:
            sl.run(plan(bad_tbl))
            check(False, "engine: the malformed file loads")
        except SluiceError as e:
            check("line 4, column 11" in str(e), f"engine: the load error names the place: {e}")
        n = sl.run(plan(os.path.join(data, "lineitem.tbl")))["t"].num_rows
        check(n == 60175, f"engine: the same engine then loads lineitem ({n} rows)")


if __name__ == "__main__":
    sys.exit(main())
