#!/usr/bin/env python3
"""Runs bench/run.py on the tiny CPU spec set (tiny_cpu.json: every `sluice bench` area in
a few seconds) into a temporary folder and checks what it writes: a raw result for every
spec with sluice's figure and its peer's or floor's, and a report with one well-formed
table per area whose `met` column follows the targets (tiny.aggregate's target cannot
be met, tiny.tasks' cannot be missed, tiny.join_sequence has none).

usage: check_runner.py BUILD_DIR
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(os.path.dirname(HERE), "run.py")
COLUMNS = ["workload", "device", "date", "commit", "sluice", "peer or floor", "target", "met"]


def fail(msg):
    print(f"check_runner: {msg}", file=sys.stderr)
    sys.exit(1)


def tables(report):
    """area -> list of rows (lists of cells) from the report's Markdown."""
    out, area, lines = {}, None, report.splitlines()
    for line in lines:
        if line.startswith("## "):
            area = line[3:].strip()
        elif line.startswith("|") and area is not None:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            out.setdefault(area, []).append(cells)
    return out


def run_runner(specs_file, build, tmp, timeout=300):
    """Runs bench/run.py on a spec file into tmp (results and RESULTS.md, no history);
    returns ({spec: its raw record}, the report's text)."""
    report, results = os.path.join(tmp, "RESULTS.md"), os.path.join(tmp, "results")
    p = subprocess.run([sys.executable, RUNNER, "--specs", specs_file, "--build", build,
                        "--results", results, "--report", report, "--history", "-",
                        "--commit", "test"], capture_output=True, text=True, timeout=timeout)
    print(p.stdout, p.stderr)
    if p.returncode != 0:
        fail(f"runner exit {p.returncode}")
    raw = glob.glob(os.path.join(results, "run-*.json"))
    if len(raw) != 1:
        fail(f"expected one raw result file, found {raw}")
    recs = {r["spec"]: r for r in json.load(open(raw[0]))["results"]}
    return recs, open(report).read()


def main():
    build = sys.argv[1]
    specs_file = os.path.join(HERE, "tiny_cpu.json")
    specs = json.load(open(specs_file))
    with tempfile.TemporaryDirectory() as tmp:
        recs, text = run_runner(specs_file, build, tmp)
        for s in specs:
            r = recs.get(s["name"]) or fail(f"no result for {s['name']}")
            if not isinstance(r["sluice"], float) or r["sluice"] < 0:
                fail(f"{s['name']}: sluice figure {r['sluice']!r}")
            if "vs" in s and not (isinstance(r.get("vs"), float) and r["vs"] >= 0):
                fail(f"{s['name']}: no peer or floor figure")
            if r["commit"] != "test" or not re.fullmatch(r"\d{4}-\d\d-\d\d", r["date"]):
                fail(f"{s['name']}: commit {r['commit']!r}, date {r['date']!r}")
    t = tables(text)
    want_areas = {s["area"] for s in specs}
    if set(t) != want_areas:
        fail(f"areas {sorted(t)} != {sorted(want_areas)}")
    met = {}
    for area, rows in t.items():
        if rows[0] != COLUMNS:
            fail(f"{area}: header {rows[0]}")
        if not all(set(c) <= {"-"} for c in rows[1]):
            fail(f"{area}: no separator row")
        for cells in rows[2:]:
            if len(cells) != len(COLUMNS):
                fail(f"{area}: row of {len(cells)} cells: {cells}")
            name = re.search(r"`([^`]+)`\)$", cells[0]) or fail(f"no spec name in {cells[0]}")
            if not re.fullmatch(r"[\d,]+\.\d+ \S+", cells[4]):
                fail(f"{name.group(1)}: sluice cell {cells[4]!r}")
            if cells[7] not in ("yes", "no", "—"):
                fail(f"{name.group(1)}: met cell {cells[7]!r}")
            met[name.group(1)] = cells[7]
    if sorted(met) != sorted(s["name"] for s in specs):
        fail(f"rows {sorted(met)} are not the specs")
    for name, want in (("tiny.aggregate", "no"), ("tiny.tasks", "yes"),
                       ("tiny.join_sequence", "—")):
        if met[name] != want:
            fail(f"{name}: met {met[name]!r}, expected {want!r}")
    print(f"check_runner: {len(met)} rows in {len(t)} tables, all well-formed")


if __name__ == "__main__":
    main()
