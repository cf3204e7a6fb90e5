#!/usr/bin/env bash
# Host-resident and out-of-core GPU join (issue 8) on the device: the out-of-core and
# join-operator GPU tests, compute-sanitizer memcheck on a tiny out-of-core join, then
# `sluice bench join --placement gpu` (host-resident inputs) against the transfer floors
# measured in the same run: in-budget pinned and pageable, out of core with the budget at
# 1/2, 1/4 and 1/16 of the state (2 GiB: 2^27 x 2^27 rows of 4-byte key + payload), the
# CPU join on all cores beside it, and a trace of one out-of-core run.
#   here: BUILD_DIR=build-gpu scripts/pack_for_gpu.sh (trimmed .carry); there (carry
#   .carry-ooc, moved to .carry): bash bench/gpu/ooc_run.sh
set -u
END=$((SECONDS + ${OOC_SECONDS:-265}))   # leave time to pack the logs
left() { ((SECONDS + ${1:-20} < END)); }
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
[[ -f .carry/carry.tar.xz ]] && (cd .carry && tar xJf carry.tar.xz && rm carry.tar.xz)
source scripts/on_gpu_env.sh
B=.carry/build-gpu
export SLUICE_TEST=1
{ date -u; nvidia-smi -L; nproc; $B/cli/sluice devices; } > "$L/devices.txt" 2>&1
head -4 "$L/devices.txt"
T0=$SECONDS
timeout 100 $B/tests/test_gpu_join_ooc > "$L/test_ooc.txt" 2>&1
echo "test_gpu_join_ooc: exit $? ($((SECONDS - T0)) s)"; grep -E "FAIL|OK|PASS|rows" "$L/test_ooc.txt" | cut -c1-200 | head -30
T0=$SECONDS
timeout 45 $B/tests/test_gpu_join_op > "$L/test_join_op.txt" 2>&1
echo "test_gpu_join_op: exit $? ($((SECONDS - T0)) s)"; grep -E "FAIL|PASS" "$L/test_join_op.txt" | head
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
T0=$SECONDS
timeout 45 "$SAN" --tool memcheck --error-exitcode 9 $B/cli/sluice bench join --placement gpu \
    --build-rows 2^17 --probe-rows 2^19 --zipf 1 --gpu-mem 16777216 --repeat 1 --json \
    > "$L/memcheck_ooc.txt" 2>&1
echo "memcheck ooc: exit $? ($(grep -m1 'ERROR SUMMARY' "$L/memcheck_ooc.txt")) $((SECONDS - T0)) s"
J="$B/cli/sluice bench join --placement gpu --json --build-rows 2^27 --probe-rows 2^27"
run() { left 25 || { echo "== skipped (time): $*"; return; }; echo "== $*"; timeout $((END - SECONDS > 75 ? 75 : END - SECONDS)) $J "$@" 2>&1 | tail -n 1 | tee -a "$L/bench.txt" | \
    python3 -c 'import json,sys
for l in sys.stdin:
    try: j=json.loads(l)
    except Exception: print(l.strip()[:300]); continue
    print({k: j.get(k) for k in ("time_ms","min_ms","max_ms","gtuples_per_s","output_rows","peak_device_bytes","h2d_gbps","d2h_gbps","floor_ms","vs_floor","ooc_floor_ms","vs_ooc_floor","pinned")})'; }
run --repeat 3
S=$((2 * 1024 * 1024 * 1024))
for f in 4 16 2; do run --repeat 3 --gpu-mem $((S / f)); done
run --repeat 1 --gpu-mem $((S / 4)) --trace "$L/ooc_trace.json"
run --repeat 3 --pageable
run --repeat 3 --gpu-mem $((S / 4)) --output aggregate
run --repeat 3 --output aggregate
left 30 && echo "== cpu" && timeout $((END - SECONDS)) $B/cli/sluice bench join --placement cpu --json --build-rows 2^27 \
    --probe-rows 2^27 --repeat 3 2>&1 | tail -n 1 | tee -a "$L/bench.txt" | cut -c1-200
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
