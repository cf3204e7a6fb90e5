#!/usr/bin/env python3
"""Sums meson testlog.json files: prints the failed tests, then one line
`N passed, N failed, N skipped`, and, when the GPU suite ran, how many of its cases ran
and were skipped. Exit status 1 if any test failed, or if a GPU is present (a device
node) and the GPU suite ran none of its cases.

Each line of a testlog.json is one JSON object with "name" and "result"
(OK, FAIL, SKIP, TIMEOUT, EXPECTEDFAIL, UNEXPECTEDPASS, ERROR, ...).
With --extra-failed N, N more failures are added (stages that failed
before running their tests).
"""
import glob
import json
import sys

PASSED = {"OK", "EXPECTEDFAIL"}
SKIPPED = {"SKIP"}


def main(argv):
    extra_failed = 0
    paths = []
    it = iter(argv)
    for a in it:
        if a == "--extra-failed":
            extra_failed = int(next(it))
        else:
            paths.append(a)
    passed = failed = skipped = 0
    gpu = {"ran": 0, "skipped": 0}
    for path in paths:
        try:
            f = open(path, encoding="utf-8")
        except OSError:
            continue
        with f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                t = json.loads(line)
                r = t.get("result", "")
                # the name reads "project:suite / test"
                if t.get("name", "").split(" / ")[0].split(":")[-1] == "gpu":
                    gpu["skipped" if r in SKIPPED else "ran"] += 1
                if r in PASSED:
                    passed += 1
                elif r in SKIPPED:
                    skipped += 1
                else:
                    failed += 1
                    print(f"  {r}: {t.get('name', '?')} ({path})")
    failed += extra_failed
    if gpu["ran"] + gpu["skipped"]:
        print(f"GPU cases: {gpu['ran']} ran, {gpu['skipped']} skipped")
        if gpu["ran"] == 0 and glob.glob("/dev/nvidia[0-9]*"):
            print("  FAIL: a GPU is present and no GPU case ran")
            failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
