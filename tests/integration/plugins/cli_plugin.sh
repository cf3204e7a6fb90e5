#!/usr/bin/env bash
# `sluice ... --plugin`: the ABI v1 fixture and the example plugin run in plan files
# through the command, and a plugin built for a newer ABI is refused with a message.
#
#   cli_plugin.sh SLUICE FIXTURE_V1.so FIXTURE_NEWER.so TOPK.so FIXTURE.plan EXAMPLE_DIR
set -euo pipefail
sluice=$1 fixture=$2 newer=$3 topk=$4 fixture_plan=$5 example_dir=$6

fail() { echo "FAIL: $*"; exit 1; }

# Plugins reach sluice only through the host table: no sluice symbol is left undefined.
if command -v nm >/dev/null; then
    for so in "$fixture" "$topk"; do
        if nm -D --undefined-only "$so" | grep -E ' sl_[a-z]'; then
            fail "$so references sluice symbols instead of the host table"
        fi
    done
fi

out=$("$sluice" run --plugin "$fixture" "$fixture_plan" --format csv)
echo "$out"
grep -qx '10000,50045000' <<<"$out" || fail "fixture plan: unexpected output"

out=$("$sluice" run --plugin "$topk" "$example_dir/topk.plan" --format csv)
echo "$out"
want=$'999999\n999998\n999997\n999996\n999995'
[[ $(grep -E '^[0-9]+$' <<<"$out") == "$want" ]] || fail "topk.plan: unexpected output"

"$sluice" explain --plugin "$topk" "$example_dir/topk.plan" >/dev/null ||
    fail "explain --plugin"
# Every plan file of the example plugin runs (topk.plan is checked above).
for f in "$example_dir"/*.plan; do
    "$sluice" run --plugin "$topk" "$f" >/dev/null || fail "run --plugin ${f##*/}"
done
# grep without -q reads the whole list: an early exit would kill sluice with SIGPIPE once
# the list passes one stdio buffer (pipefail then fails the line).
"$sluice" operators --plugin "$topk" | grep '^topk ' >/dev/null ||
    fail "operators --plugin lists no topk"

# Without the plugin the plan names an unknown operator.
if err=$("$sluice" run "$example_dir/topk.plan" 2>&1); then fail "ran without --plugin"; fi
grep -q "no operator named 'topk'" <<<"$err" || fail "without --plugin: $err"

# A plugin built for a newer ABI, a missing file: non-zero exit and a clear message.
set +e
err=$("$sluice" run --plugin "$newer" "$fixture_plan" 2>&1); rc=$?
set -e
((rc != 0)) || fail "newer ABI accepted"
grep -q "built for operator ABI 4" <<<"$err" || fail "newer ABI: $err"
set +e
err=$("$sluice" run --plugin /nonexistent/x.so "$fixture_plan" 2>&1); rc=$?
set -e
((rc != 0)) || fail "missing plugin accepted"
grep -q "No such file" <<<"$err" || fail "missing plugin: $err"
echo "ok: sluice --plugin"
