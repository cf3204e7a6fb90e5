#!/usr/bin/env bash
# Second, short device call for issue 8 (after ooc_run.sh): the out-of-core tests (DMA and
# zero-copy read-back), memcheck on a tiny out-of-core join, and the bench rows that the
# first call could not measure or that changed: in-budget host-resident materialize
# (pinned, pageable), out of core at 1/2, 1/4, 1/16 (aggregate: DMA vs kernel read-back;
# materialize), a trace. Same packing as ooc_run.sh.
set -u
END=$((SECONDS + ${OOC_SECONDS:-100}))
left() { ((SECONDS + ${1:-20} < END)); }
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
[[ -f .carry/carry.tar.xz ]] && (cd .carry && tar xJf carry.tar.xz && rm carry.tar.xz)
source scripts/on_gpu_env.sh
B=.carry/build-gpu
export SLUICE_TEST=1
date -u > "$L/devices.txt"; nvidia-smi -L >> "$L/devices.txt" 2>&1
timeout 30 $B/tests/test_gpu_join_ooc > "$L/test_ooc.txt" 2>&1; echo "ooc tests (dma): exit $?"
SLUICE_OOC_READBACK=kernel timeout 30 $B/tests/test_gpu_join_ooc > "$L/test_ooc_zc.txt" 2>&1
echo "ooc tests (kernel read-back): exit $?"
timeout 20 $B/tests/test_gpu_join_op > "$L/test_join_op.txt" 2>&1; echo "join_op tests: exit $?"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
SLUICE_OOC_READBACK=kernel timeout 30 "$SAN" --tool memcheck --error-exitcode 9 $B/cli/sluice \
    bench join --placement gpu --build-rows 2^16 --probe-rows 2^18 --zipf 1 --gpu-mem 16777216 \
    --repeat 1 --json > "$L/memcheck_ooc.txt" 2>&1
echo "memcheck ooc: exit $? ($(grep -m1 'ERROR SUMMARY' "$L/memcheck_ooc.txt"))"
J="$B/cli/sluice bench join --placement gpu --json --build-rows 2^27 --probe-rows 2^27"
run() { left 12 || { echo "== skipped (time): $*"; return; }; echo "== $*"
    timeout $((END - SECONDS > 40 ? 40 : END - SECONDS)) $J "$@" 2>&1 | tail -n 1 | \
    tee -a "$L/bench.txt" | python3 -c 'import json,sys
for l in sys.stdin:
    try: j=json.loads(l)
    except Exception: print(l.strip()[:300]); continue
    print({k: j.get(k) for k in ("time_ms","min_ms","max_ms","gtuples_per_s","output_rows","peak_device_bytes","h2d_gbps","floor_ms","vs_floor","ooc_floor_ms","vs_ooc_floor")})'; }
S=$((2 * 1024 * 1024 * 1024))
run --repeat 3
run --repeat 3 --gpu-mem $((S / 4)) --output aggregate
SLUICE_OOC_READBACK=kernel run --repeat 3 --gpu-mem $((S / 4)) --output aggregate
SLUICE_OOC_READBACK=kernel run --repeat 3 --gpu-mem $((S / 16)) --output aggregate
run --repeat 3 --gpu-mem $((S / 16)) --output aggregate
run --repeat 3 --gpu-mem $((S / 2)) --output aggregate
run --repeat 3 --gpu-mem $((S / 4))
run --repeat 3 --pageable
run --repeat 1 --gpu-mem $((S / 4)) --output aggregate --trace "$L/ooc_trace_agg.json"
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
