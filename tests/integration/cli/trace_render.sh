#!/usr/bin/env bash
# Runs a plan with --trace, renders the trace to SVG, and checks the picture has a lane
# named by the trace, spans, a time axis, the title and a legend; a trace with no spans
# must be refused.
set -euo pipefail
sluice=$1 plan=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$sluice" run "$plan" --trace "$dir/t.json" > /dev/null
grep -q '"ph":"X"' "$dir/t.json"
grep -q '"name":"thread_name","pid":0,"tid":[0-9]*,"args":{"name":"CPU worker [0-9]*"}' "$dir/t.json"
"$sluice" trace-render "$dir/t.json" -o "$dir/t.svg" --title "sequence sum"
grep -q '<svg' "$dir/t.svg"
grep -q '>CPU worker [0-9]*</text>' "$dir/t.svg"
grep -q '>sequence sum</text>' "$dir/t.svg"
grep -q 'text-anchor="end" fill="#555">ms</text>' "$dir/t.svg"
grep -q '>copy host to device</text>' "$dir/t.svg"
[[ $(grep -c '<rect' "$dir/t.svg") -ge 3 ]]
# a lane takes the name its thread_name record gives (the runtime's lines start with '{')
printf '%s\n' '[' '{"ph":"M","name":"thread_name","pid":0,"tid":3,"args":{"name":"named lane"}},' \
    '{"ph":"X","name":"op","cat":"task","pid":0,"tid":3,"ts":1.0,"dur":2.0,"args":{"bytes":0,"rows":0}}' \
    ']' > "$dir/named.json"
"$sluice" trace-render "$dir/named.json" -o "$dir/named.svg"
grep -q '>named lane</text>' "$dir/named.svg"
echo '[]' > "$dir/empty.json"
if "$sluice" trace-render "$dir/empty.json" -o "$dir/e.svg" 2> "$dir/err"; then
    echo "an empty trace was accepted" >&2
    exit 1
fi
grep -q 'no spans' "$dir/err"
echo ok
