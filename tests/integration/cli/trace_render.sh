#!/usr/bin/env bash
# Runs a plan with --trace, renders the trace to SVG, and checks the picture has a lane
# and spans; a trace with no spans must be refused.
set -euo pipefail
sluice=$1 plan=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$sluice" run "$plan" --trace "$dir/t.json" > /dev/null
grep -q '"ph":"X"' "$dir/t.json"
"$sluice" trace-render "$dir/t.json" -o "$dir/t.svg"
grep -q '<svg' "$dir/t.svg"
grep -q 'CPU worker' "$dir/t.svg"
[[ $(grep -c '<rect' "$dir/t.svg") -ge 3 ]]
echo '[]' > "$dir/empty.json"
if "$sluice" trace-render "$dir/empty.json" -o "$dir/e.svg" 2> "$dir/err"; then
    echo "an empty trace was accepted" >&2
    exit 1
fi
grep -q 'no spans' "$dir/err"
echo ok
