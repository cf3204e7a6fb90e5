#!/usr/bin/env python3
"""Fails when a public function is called by no test: lists every SL_API function
declared in include/sluice/*.h and looks for a call of each (its name followed by "(", or
its name where a Python test binds it through ctypes, or a plugin's call through the host
table) in the tests (tests/**: C, headers,
Python, shell) other than this file. Functions listed in tests/api_coverage_known.txt
(a debt list) are accepted; exit 1 if another function is uncovered or a listed one is
now covered (the list must shrink with it).

    tests/api_coverage.py [REPO_ROOT]
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
decl = re.compile(r"\bSL_API\b[^;{(]*?\b(sl_[a-z0-9_]+)\s*\(", re.S)
public = set()
for h in sorted((root / "include" / "sluice").glob("*.h")):
    public.update(decl.findall(h.read_text(encoding="utf-8")))
if not public:
    sys.exit(f"api_coverage: no SL_API function found under {root}/include/sluice")

me = pathlib.Path(__file__).resolve()
text = []
for p in sorted((root / "tests").rglob("*")):
    if p.is_file() and p.suffix in (".c", ".h", ".py", ".sh", ".cpp") and p.resolve() != me:
        text.append(p.read_text(encoding="utf-8", errors="replace"))
text = "\n".join(text)



# a direct call, a ctypes binding, or a plugin's call through the host table
# (include/sluice/plugin.h: host->task_emit(...) for sl_task_emit)
seen = set(re.findall(r"\b(sl_[a-z0-9_]+)\s*\(", text))
seen |= set(re.findall(r"\b(?:lib|L)\.(sl_[a-z0-9_]+)\b", text))
seen |= {"sl_" + m for m in re.findall(r"->\s*([a-z0-9_]+)\s*\(", text)}


def called(f):
    return f in seen


uncovered = sorted(f for f in public if not called(f))
known_path = root / "tests" / "api_coverage_known.txt"
known = {ln.strip() for ln in known_path.read_text(encoding="utf-8").splitlines()
         if ln.strip() and not ln.startswith("#")}
print(f"{len(public)} public functions, {len(public) - len(uncovered)} called by a test, "
      f"{len(known)} listed as a debt in {known_path.name}")
bad = 0
for f in uncovered:
    if f not in known:
        print(f"  called by no test: {f}")
        bad += 1
for f in sorted(known - set(uncovered)):
    print(f"  listed in {known_path.name} but {'called by a test' if f in public else 'not public'}: {f}")
    bad += 1
sys.exit(1 if bad else 0)
