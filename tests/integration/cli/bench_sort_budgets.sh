#!/usr/bin/env bash
# sluice bench sort --budgets (cli/bench_sort.c): on any build (without a GPU the queries
# fall back to the CPU) one line per budget and variant, then one "summary":"budgets" line
# per variant; a --then spec longer than 200 characters, or with a '"', is refused before
# anything runs (it was printed into fixed JSON buffers: some 2,000 characters wrote past
# them), and so is a --budgets list over 200 characters (it was cut at 255 silently).
set -euo pipefail
sluice=$1
out=$("$sluice" bench sort --placement gpu --rows 1000 --repeat 2 --budgets 64Mi,128Mi \
    --then "debug_sort_sink=upload" 2>/dev/null)
lines=$(grep -c '"bench":"sort"' <<<"$out")
summaries=$(grep -c '"summary":"budgets"' <<<"$out")
[[ $lines == 6 && $summaries == 2 ]] ||
    { echo "FAIL: want 4 runs and 2 summaries, got $lines lines, $summaries summaries: $out"; exit 1; }
grep -q '"variant":"debug_sort_sink=upload"' <<<"$out" || { echo "FAIL: no variant line"; exit 1; }
long="debug_sort_sink=upload$(printf ' %.0s' {1..300})x"
if err=$("$sluice" bench sort --placement gpu --rows 1000 --repeat 1 --budgets 1Mi \
    --then "$long" 2>&1 >/dev/null); then
    echo "FAIL: a --then of ${#long} characters was taken"; exit 1
fi
grep -q -- '--then: at most 200 characters' <<<"$err" || { echo "FAIL: message: $err"; exit 1; }
if "$sluice" bench sort --placement gpu --rows 1000 --repeat 1 --budgets 1Mi \
    --then 'debug_sort_sink="upload"' >/dev/null 2>&1; then
    echo "FAIL: a --then with a quote was taken"; exit 1
fi
list="1Mi$(printf ',1Mi%.0s' {1..60})"
if err=$("$sluice" bench sort --placement gpu --rows 1000 --repeat 1 --budgets "$list" \
    2>&1 >/dev/null); then
    echo "FAIL: a --budgets list of ${#list} characters was taken"; exit 1
fi
grep -q -- '--budgets: at most 200 characters' <<<"$err" || { echo "FAIL: message: $err"; exit 1; }
echo ok
