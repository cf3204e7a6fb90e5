#!/usr/bin/env python3
"""Runs sluice's benchmarks from their specs and writes bench/RESULTS.md.

A spec (bench/specs/<area>.json, a list of them) names one benchmark: the command that
measures sluice, the JSON value it reports, what that value is compared with (a peer
program, a floor the command itself reports, or a peer figure recorded elsewhere) and the
target. The protocol is docs/BENCH_PROTOCOL.md. Examples:

  bench/run.py --list                              the specs and their commands
  bench/run.py --device cpu                        run every CPU spec, then the report
  bench/run.py --area join --device gpu --build .carry/build-gpu
  bench/run.py --report-only                       regenerate RESULTS.md from results/

Each run appends one file to the results folder (raw JSON: every command, its output line
and the values taken from it); the report takes the newest result of every spec from all
files there and from bench/results/recorded.json (figures measured before the runner
existed). Only the Python standard library is needed.
"""
import argparse
import datetime
import glob
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC_KEYS = {"name", "area", "device", "workload", "run", "select", "metric", "unit",
             "vs", "target", "timeout", "limits", "per_query"}
VS_KINDS = {"peer", "floor"}
COLUMNS = ["workload", "device", "date", "commit", "sluice", "peer or floor", "target", "met"]


class SpecError(Exception):
    pass


def load_specs(paths):
    """Every spec of the given files (or of the *.json files in the given folders)."""
    files = []
    for p in paths:
        files += sorted(glob.glob(os.path.join(p, "*.json"))) if os.path.isdir(p) else [p]
    specs, names = [], set()
    for f in files:
        with open(f) as fh:
            try:
                items = json.load(fh)
            except json.JSONDecodeError as e:
                raise SpecError(f"{f}: {e}")
        if not isinstance(items, list):
            raise SpecError(f"{f}: a list of specs expected")
        for s in items:
            check_spec(f, s)
            if s["name"] in names:
                raise SpecError(f"{f}: spec {s['name']} defined twice")
            names.add(s["name"])
            specs.append(s)
    return specs


def check_spec(f, s):
    where = f"{f}: spec {s.get('name', '?')}"
    for k in ("name", "area", "device", "workload", "run", "metric", "target"):
        if k not in s:
            raise SpecError(f"{where}: no '{k}'")
    if set(s) - SPEC_KEYS:
        raise SpecError(f"{where}: unknown keys {sorted(set(s) - SPEC_KEYS)}")
    if s["device"] not in ("cpu", "gpu"):
        raise SpecError(f"{where}: device must be cpu or gpu")
    if not isinstance(s["run"], list) or not s["run"]:
        raise SpecError(f"{where}: 'run' must be a command (a list of words)")
    vs = s.get("vs")
    if vs is not None:
        if vs.get("kind") not in VS_KINDS or "name" not in vs:
            raise SpecError(f"{where}: 'vs' needs kind (peer or floor) and name")
        if sum(k in vs for k in ("run", "recorded", "metric")) == 0:
            raise SpecError(f"{where}: 'vs' needs run + metric, metric or recorded")
    t = s["target"]
    if "text" not in t or set(t) - {"text", "max", "max_ratio", "query_max_ratio"}:
        raise SpecError(f"{where}: target needs text and only max / max_ratio / "
                        "query_max_ratio")
    if "query_max_ratio" in t and not s.get("per_query"):
        raise SpecError(f"{where}: a query_max_ratio target needs per_query")
    if "max_ratio" in t and vs is None:
        raise SpecError(f"{where}: a max_ratio target needs 'vs'")


def command(words, build):
    """The spec's words with the program resolved: sluice is the build's CLI, build/X a
    program of the build, anything else as written (paths relative to the repository);
    {threads} is this machine's core count (peers use every core, as sluice does), {build}
    the build folder."""
    words = [str(w).replace("{threads}", str(os.cpu_count() or 1)).replace("{build}", build)
             for w in words]
    prog = words[0]
    if prog == "sluice":
        prog = os.path.join(build, "cli", "sluice")
    elif prog.startswith("build/"):
        prog = os.path.join(build, prog[len("build/"):])
    return [prog] + [str(w) for w in words[1:]]


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def run_lines(words, build, timeout, key=None):
    """Runs a command; returns (its JSON lines, the command line). A failed exit is an
    error, unless `key` is given and some line has it (a per-query benchmark whose
    failed queries have their own lines)."""
    cmd = command(words, build)
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    lines = json_lines(p.stdout)
    if p.returncode != 0 and not (key and any(key in j for j in lines)):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return lines, " ".join(cmd)


def run_json(words, build, select, timeout):
    """Runs a command; returns (its last JSON line matching `select`, the command line)."""
    lines, cmd = run_lines(words, build, timeout)
    lines = [j for j in lines if all(j.get(k) == v for k, v in (select or {}).items())]
    if not lines:
        raise RuntimeError(f"{cmd}: no JSON line matching {select}")
    return lines[-1], cmd


def number(obj, key, what):
    v = obj.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise RuntimeError(f"{what}: no number '{key}' in its JSON line")
    return float(v)


def per_query_lines(words, build, key, metric, timeout):
    """{query: its JSON line} of a per-query benchmark, with the metric where it ran."""
    lines, cmdline = run_lines(words, build, timeout, key)
    out = {}
    for j in lines:
        if key in j:
            if j.get("status", "ok") == "ok":
                number(j, metric, cmdline)
            out[str(j[key])] = j
    if not out:
        raise RuntimeError(f"{cmdline}: no JSON line with '{key}'")
    return out, cmdline, lines


def geomean(values):
    return math.exp(sum(math.log(max(v, 1e-9)) for v in values) / len(values))


def measure_per_query(spec, build, no_peers, timeout):
    """A per-query spec's record (TPC-H): every query's figure and its peer's; the spec's
    figures are the geometric means over the queries both answered (with the same row
    count)."""
    key, metric = spec["per_query"], spec["metric"]
    mine, cmdline, lines = per_query_lines(spec["run"], build, key, metric, timeout)
    vs, peer, peer_cmd = spec.get("vs"), {}, None
    if vs and "run" in vs and not no_peers:
        try:
            peer, peer_cmd, _ = per_query_lines(vs["run"], build, key, vs["metric"], timeout)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            print(f"peer of {spec['name']} failed: {e}", file=sys.stderr)
    queries = {}
    for q in sorted(set(mine) | set(peer)):
        m, p = mine.get(q, {"status": "missing"}), peer.get(q)
        e = {"status": m.get("status", "ok"), "rows": m.get("rows")}
        for k in ("floor_ms", "floor", "gpu_peak_bytes"):  # sluice tpch's extras
            if m.get(k) is not None:
                e[k] = m[k]
        if e["status"] == "ok":
            e["sluice"] = float(m[metric])
        if p is not None and p.get("status", "ok") == "ok":
            e["vs"], e["vs_rows"] = float(p[vs["metric"]]), p.get("rows")
            if e["status"] == "ok" and e["rows"] != e["vs_rows"]:
                e["status"] = "rows differ"
        queries[q] = e
    both = [e for e in queries.values() if e["status"] == "ok" and (not peer or "vs" in e)]
    if not both:
        raise RuntimeError(f"{cmdline}: no query answered")
    device = next((j["device"] for j in lines if "device" in j), "?")
    rec = {"spec": spec["name"], "area": spec["area"], "device": device,
           "sluice": geomean([e["sluice"] for e in both]), "command": cmdline,
           "queries": queries, "n_queries": len(both),
           "output": next((j for j in lines if j.get("summary")), lines[-1])}
    if peer:
        rec["vs"] = geomean([e["vs"] for e in both])
        rec["vs_command"] = peer_cmd
    return rec


def measure(spec, build, no_peers):
    """One result record of a spec: sluice's value and the peer's or floor's."""
    timeout = spec.get("timeout", 600)
    if spec.get("per_query"):
        return measure_per_query(spec, build, no_peers, timeout)
    line, cmdline = run_json(spec["run"], build, spec.get("select"), timeout)
    rec = {"spec": spec["name"], "area": spec["area"], "device": line.get("device", "?"),
           "sluice": number(line, spec["metric"], cmdline), "command": cmdline,
           "output": line}
    vs = spec.get("vs")
    if vs and "run" in vs and not no_peers:
        try:  # a peer that cannot run here (no duckdb, no GPU) leaves sluice's figure alone
            peer, peer_cmd = run_json(vs["run"], build, vs.get("select"), timeout)
            rec["vs"] = number(peer, vs["metric"], peer_cmd)
            rec["vs_command"], rec["vs_output"] = peer_cmd, peer
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            print(f"peer of {spec['name']} failed: {e}", file=sys.stderr)
    elif vs and "metric" in vs and "run" not in vs:
        rec["vs"] = number(line, vs["metric"], cmdline)
    elif vs and "recorded" in vs:
        rec["vs"] = float(vs["recorded"])
    return rec


def git_commit():
    """HEAD's short hash, with +changes when the tree differs from it."""
    try:
        p = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                           capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT, timeout=30)
        head = p.stdout.strip()
        return head + ("+changes" if dirty.returncode == 1 else "") if head else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def matches(spec, word):
    """word names the spec's area, the spec, or a group of specs (join.gpu: join.gpu.*)."""
    return word in (spec["area"], spec["name"]) or spec["name"].startswith(word + ".")


def selected(specs, a):
    return [s for s in specs
            if (not a.area or s["area"] in a.area) and (not a.name or s["name"] in a.name)
            and (not a.match or any(matches(s, m) for m in a.match))
            and (not a.device or s["device"] == a.device)]


def run_specs(specs, a):
    now = datetime.datetime.now(datetime.timezone.utc)
    commit = a.commit or git_commit()
    records, failed = [], 0
    for s in specs:
        try:
            rec = measure(s, a.build, a.no_peers)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            print(f"FAIL  {s['name']}: {e}", file=sys.stderr)
            failed += 1
            continue
        rec.update(date=now.strftime("%Y-%m-%d"), commit=commit)
        records.append(rec)
        other = f" vs {rec['vs']:g}" if "vs" in rec else ""
        print(f"OK    {s['name']}: {rec['sluice']:g}{other} {s.get('unit', 'ms')}")
    os.makedirs(a.results, exist_ok=True)
    out = os.path.join(a.results, f"run-{now.strftime('%Y%m%dT%H%M%SZ')}.json")
    with open(out, "w") as fh:
        json.dump({"date": now.isoformat(timespec="seconds"), "commit": commit,
                   "results": records}, fh, indent=1)
        fh.write("\n")
    print(f"{len(records)} measured, {failed} failed; results in {os.path.relpath(out, ROOT)}")
    return failed


def load_results(folders):
    """Every result record, oldest first (recorded.json, then runs by name = by time)."""
    recs = []
    for d in folders:
        files = sorted(glob.glob(os.path.join(d, "*.json")),
                       key=lambda f: (not f.endswith("recorded.json"), os.path.basename(f)))
        for f in files:
            with open(f) as fh:
                recs += json.load(fh)["results"]
    return recs


def fmt(v, unit):
    if v is None:
        return "—"
    return f"{v:,.2f} {unit}" if abs(v) < 100 else f"{v:,.1f} {unit}"


def query_met(spec, e):
    """A per-query row's target: answered, and within query_max_ratio of its peer."""
    qmr = spec["target"].get("query_max_ratio")
    if e["status"] != "ok":
        return "no"
    if qmr is None or "vs" not in e or e["vs"] <= 0:
        return "—"
    return "yes" if e["sluice"] / e["vs"] <= qmr else "no"


def met(spec, rec):
    t, v, o = spec["target"], rec["sluice"], rec.get("vs")
    if "max" not in t and "max_ratio" not in t:
        return "—"
    if "max_ratio" in t and (o is None or o <= 0):
        return "—"
    ok = ("max" not in t or v <= t["max"]) and ("max_ratio" not in t or v / o <= t["max_ratio"])
    if "queries" in rec:  # every query answered, none below its own target
        ok = ok and all(query_met(spec, e) != "no" for e in rec["queries"].values())
    return "yes" if ok else "no"


def per_query_table(spec, rec):
    """The Markdown table of a per-query spec's newest record: each query's figure, its
    peer's and their ratio, then the geometric means."""
    unit, vs = spec.get("unit", "ms"), spec.get("vs", {}).get("name", "peer")
    qs = rec["queries"]
    floor = next((e["floor"] for e in qs.values() if "floor" in e), None)
    peak = any("gpu_peak_bytes" in e for e in qs.values())
    extra_head = (f" {floor} floor | × floor |" if floor else "") + (" peak GPU memory |"
                                                                       if peak else "")
    out = [f"### `{spec['name']}` per query ({rec['device']}, {rec['date']}, {rec['commit']})",
           "", f"| query | sluice | {vs} | sluice / {vs} | rows | status | met |{extra_head}",
           "|---|---|---|---|---|---|---|" + "---|" * extra_head.count("|")]
    for q, e in sorted(qs.items()):
        ratio = (f"×{e['sluice'] / e['vs']:.2f}" if "sluice" in e and e.get("vs", 0) > 0
                 else "—")
        extra = ""
        if floor:
            f = e.get("floor_ms")
            extra += (f" {fmt(f, unit)} | ×{e['sluice'] / f:.1f} |" if f and "sluice" in e
                      else " — | — |")
        if peak:
            b = e.get("gpu_peak_bytes")
            extra += f" {b / 2**20:,.0f} MiB |" if b is not None else " — |"
        out.append(f"| {q} | {fmt(e.get('sluice'), unit)} | {fmt(e.get('vs'), unit)} | "
                   f"{ratio} | {e.get('rows') if e.get('rows') is not None else '—'} | "
                   f"{e['status']} | {query_met(spec, e)} |{extra}")
    ratio = f"×{rec['sluice'] / rec['vs']:.2f}" if rec.get("vs") else "—"
    out.append(f"| geometric mean ({rec['n_queries']} answered by both) | "
               f"{fmt(rec['sluice'], unit)} | {fmt(rec.get('vs'), unit)} | {ratio} | | | "
               f"{met(spec, rec)} |" + " |" * extra_head.count("|"))
    return out + [""]


def row(spec, rec):
    unit = spec.get("unit", "ms")
    name = f"{spec['workload']} (`{spec['name']}`)"
    if rec is None:
        return [name, spec["device"].upper(), "—", "—", "not yet run", "—",
                spec["target"]["text"], "—"]
    vs = spec.get("vs")
    other = "—"
    if vs and rec.get("vs") is not None:
        ratio = f", ×{rec['sluice'] / rec['vs']:.2f}" if rec["vs"] > 0 else ""
        other = f"{fmt(rec['vs'], unit)} ({vs['kind']}: {vs['name']}{ratio})"
    return [name, rec["device"], rec["date"], rec["commit"], fmt(rec["sluice"], unit), other,
            spec["target"]["text"], met(spec, rec)]


def report(specs, recs, history):
    latest = {}  # spec -> device -> its newest record (newer records come later)
    for r in recs:
        latest.setdefault(r["spec"], {})[r["device"]] = r
    by_name = {s["name"]: s for s in specs}
    areas = []
    for s in specs:
        if s["area"] not in areas:
            areas.append(s["area"])
    out = ["# sluice benchmark results", "",
           "Generated by `bench/run.py` from the specs in `bench/specs/` and the raw results in",
           "`bench/results/`; do not edit by hand. Each row is the newest result of one spec on",
           "one device: rerun it with `bench/run.py --name SPEC` (the spec holds the command). How",
           "everything is measured: `docs/BENCH_PROTOCOL.md`. Targets: the specs' `target`.",
           "A ratio in the peer-or-floor column is sluice / that figure (below 1: sluice is",
           "faster). Rows dated before the runner existed were measured by hand as the history",
           "below says, with the spec's command or its equivalent at the time.", ""]
    for area in areas:
        out += [f"## {area}", "", "| " + " | ".join(COLUMNS) + " |",
                "|" + "---|" * len(COLUMNS)]
        missed = []
        for s in specs:
            if s["area"] != area:
                continue
            for rec in latest.get(s["name"], {}).values() or [None]:
                cells = [c.replace("|", "\\|") for c in row(s, rec)]
                out.append("| " + " | ".join(cells) + " |")
                if cells[-1] == "no" and s["name"] not in missed:
                    missed.append(s["name"])
        out.append("")
        for s in specs:
            if s["area"] == area and s.get("per_query"):
                for rec in latest.get(s["name"], {}).values():
                    out += per_query_table(s, rec)
        why = [f"- `{n}`: {by_name[n].get('limits', 'not analysed yet.')}" for n in missed]
        if why:
            out += ["What limits the missed targets:", ""] + why + [""]
    if history:
        with open(history) as fh:
            out += [fh.read().rstrip(), ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--specs", action="append", help="spec file or folder (bench/specs)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build folder")
    ap.add_argument("--area", action="append", help="only this area (repeatable)")
    ap.add_argument("--name", action="append", help="only this spec (repeatable)")
    ap.add_argument("--match", action="append",
                    help="an area, a spec or a prefix of spec names (repeatable)")
    ap.add_argument("--device", choices=["cpu", "gpu"], help="only specs for this device")
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"),
                    help="folder of raw results (read and appended to)")
    ap.add_argument("--report", default=os.path.join(ROOT, "bench", "RESULTS.md"),
                    help="the Markdown report to write ('-' for none)")
    ap.add_argument("--history", default=os.path.join(ROOT, "bench", "history.md"),
                    help="appendix added to the report ('-' for none)")
    ap.add_argument("--commit", help="the commit to record (default: git rev-parse HEAD)")
    ap.add_argument("--no-peers", action="store_true", help="do not run peer programs")
    ap.add_argument("--list", action="store_true", help="print the selected specs' commands")
    ap.add_argument("--report-only", action="store_true", help="run nothing, only report")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    try:
        specs = load_specs(a.specs or [os.path.join(ROOT, "bench", "specs")])
    except SpecError as e:
        print(f"bench/run.py: {e}", file=sys.stderr)
        return 2
    chosen = selected(specs, a)
    if a.list:
        for s in chosen:
            vs = s.get("vs", {})
            peer = f"\n    vs: {' '.join(command(vs['run'], a.build))}" if "run" in vs else ""
            print(f"{s['name']} [{s['area']}, {s['device']}]: "
                  f"{' '.join(command(s['run'], a.build))}{peer}")
        return 0
    if not chosen and not a.report_only:
        print("bench/run.py: no spec selected", file=sys.stderr)
        return 2
    failed = 0 if a.report_only else run_specs(chosen, a)
    if a.report != "-":
        text = report(specs, load_results([a.results]),
                      None if a.history == "-" else a.history)
        with open(a.report, "w") as fh:
            fh.write(text)
        print(f"report: {os.path.relpath(a.report, os.getcwd())}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
