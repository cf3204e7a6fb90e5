#!/bin/bash
# The join operator on a GPU through the engine (issue 6), on the device machine from the
# repository root with the carry folder of bench/gpu/pack_joinop.sh (C, default
# .carry-joinop). Steps in priority order, each cut to what is left of BUDGET seconds:
#   tests      tests/gpu: gpu_join_op (every kind x key x payload count x algorithm vs the
#              CPU join), gpu_join_ext, gpu_join
#   bench      `sluice bench join --placement gpu --resident device --json` for the
#              GPU-resident join rows of TARGETS.md (median of 5 after a warm-up; phases)
#   memcheck   compute-sanitizer memcheck on gpu_join_op sanitize_small, racecheck on
#              sanitize_tiny
#   extra      algorithm choices: NPJ vs PHJ (small build side), SMJ, kinds at scale
# Output: $OUT/{run,tests,bench,san}.txt and logs.tgz of them.
C=${C:-.carry-joinop}
O=${OUT:-/tmp/out}
END=$(($(date +%s) + ${BUDGET:-280}))
MODE=${1:-all}
mkdir -p "$O"
[ -f "$C/carry.txz" ] && [ ! -d "$C/bin" ] && tar xJf "$C/carry.txz" -C "$C"
export LD_LIBRARY_PATH=$PWD/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SLUICE_TEST=1
B=$C/bin
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{ date -u; cat "$C/commit.txt"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$O/run.txt" 2>&1
step() {  # step FILE MAX_SECONDS COMMAND...
    local f=$1 t=$2; shift 2
    local left=$((END - $(date +%s)))
    ((left < 5)) && { echo "=== skipped (no time left): $*" >> "$O/$f"; return; }
    ((t > left)) && t=$left
    echo "=== $* (limit ${t}s)" >> "$O/$f"
    local t0=$SECONDS
    timeout "$t" "$@" >> "$O/$f" 2>&1
    echo "=== exit $? after $((SECONDS - t0))s" >> "$O/$f"
}
J="$B/sluice bench join --placement gpu --resident device --json --repeat 5"
N="--build-rows 2^27 --probe-rows 2^27"
if [[ $MODE != bench ]]; then
    step tests.txt 60 $B/test_gpu_join_op
    step tests.txt 20 $B/test_gpu_join_ext
    step tests.txt 20 $B/test_gpu_join
fi
step bench.txt 30 $J $N
step bench.txt 30 $J $N --payloads 2
step bench.txt 30 $J $N --zipf 1
step bench.txt 30 $J $N --key-bytes 8
step bench.txt 30 $J $N --payloads 3
step bench.txt 40 $J --build-rows 2^27 --probe-rows 2^28 --payloads 2
step bench.txt 20 $J $N --payloads 2 --match-ratio 0.25
step bench.txt 20 $J $N --payloads 2 --match-ratio 0.1
# engine overhead: the same narrow query with 2^24-row GPU morsels (8 instead of 128)
step bench.txt 20 env SLUICE_GPU_MORSEL_ROWS=16777216 $J $N
if [[ $MODE != bench ]]; then
    step san.txt 70 "$CS" --tool memcheck --error-exitcode 9 $B/test_gpu_join_op sanitize_small
    step san.txt 40 "$CS" --tool racecheck --racecheck-report all --error-exitcode 9 $B/test_gpu_join_op sanitize_tiny
fi
step bench.txt 20 $J $N --output aggregate
step bench.txt 20 $J $N --algo sortmerge
step bench.txt 15 $J --build-rows 2^20 --probe-rows 2^27 --algo nopart
step bench.txt 15 $J --build-rows 2^20 --probe-rows 2^27 --algo radix
step bench.txt 15 $J $N --kind left --match-ratio 0.5
step bench.txt 15 $J $N --kind anti --match-ratio 0.5
step bench.txt 15 $J $N --kind semi --match-ratio 0.5
step bench.txt 15 $J --build-rows 2^22 --probe-rows 2^27 --algo nopart
step bench.txt 15 $J --build-rows 2^22 --probe-rows 2^27 --algo radix
grep -h '"bench"' "$O/bench.txt" | head -40
grep -hE "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|MISMATCH|=== exit" "$O"/tests.txt "$O"/san.txt 2>/dev/null | sort | uniq -c | head -30
(cd "$O" && tar czf logs.tgz run.txt tests.txt bench.txt san.txt 2>/dev/null)
