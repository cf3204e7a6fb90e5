#!/bin/bash
# Runs on the GPU machine (device tool) from the repository root, with the carry folder
# made by bench/gpu/pack_agg.sh (C, default .carry-gpuagg). Steps in priority order, each
# cut to what is left of BUDGET seconds (device time is scarce):
#   check      every method against a CPU reference (standalone, CHECK_SCALE)
#   bench      TARGETS.md: 2^28 rows, int32 key, int64 value, count + sum, 1,000 and 2^24
#              groups, median of 5 after a warm-up, floor from a device copy (BENCH_G)
#   t_*        every case of the meson test binary tests/gpu/test_gpu_aggregate
#   memcheck   compute-sanitizer memcheck, small input; racecheck: tiny input
#   cli_*      `sluice bench aggregate --placement gpu --resident device` (CLI_LG rows)
#   sweep      table vs partitioned over G = 2^8..2^24 (the method threshold)
# Logs under $OUT/logs (+ logs.tar.gz).
C=${C:-.carry-gpuagg}
O=${OUT:-/tmp/out}
END=$(($(date +%s) + ${BUDGET:-42}))
mkdir -p "$O/logs"
[ -f "$C/carry.txz" ] && [ ! -d "$C/bin" ] && tar xJf "$C/carry.txz" -C "$C"
export LD_LIBRARY_PATH=$PWD/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=$C/bin/gpu_agg_bench
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$O/logs/gpu.txt" 2>&1
date -u >> "$O/logs/gpu.txt"
step() {  # step NAME MAX_SECONDS TAIL COMMAND...
    local name=$1 t=$2 tl=$3; shift 3
    local left=$((END - $(date +%s)))
    ((left < 3)) && { echo "=== $name: skipped (no time left)"; return; }
    ((t > left)) && t=$left
    local t0; t0=$(date +%s.%N)
    timeout "$t" "$@" > "$O/logs/$name.log" 2>&1
    local rc=$?
    echo "=== $name rc=$rc ($(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s): $*"
    tail -n "$tl" "$O/logs/$name.log"
}
step check 15 3 $B check ${CHECK_SCALE:-0.05}
grep -E "FAIL|MISMATCH|LEAK" "$O/logs/check.log" | head -12
step bench 14 12 $B bench 28 ${BENCH_G:-1000,16777216}
for c in $($C/bin/test_gpu_aggregate --list); do
    step "t_$c" 8 0 env SLUICE_TEST=1 $C/bin/test_gpu_aggregate "$c"
    grep -qE "^\[  PASSED|OK" "$O/logs/t_$c.log" || tail -n 8 "$O/logs/t_$c.log"
done
step memcheck 10 4 $CS --tool memcheck --leak-check no $B check 0.002
step racecheck 8 4 $CS --tool racecheck --racecheck-report hazard $B tiny
for g in ${CLI_G:-}; do
    step cli_$g 20 1 $C/bin/sluice bench aggregate --rows ${CLI_LG:-2^28} --groups $g \
        --placement gpu --resident device --repeat 5 --json
done
[ -n "${TRACE:-}" ] && step cli_trace 25 1 $C/bin/sluice bench aggregate --rows ${CLI_LG:-2^28} \
    --groups 1000 --placement gpu --resident device --repeat 1 --json --trace "$O/logs/agg_trace.json"
[ -n "${SWEEP:-}" ] && step sweep 30 20 $B sweep 26
tar czf "$O/logs.tar.gz" -C "$O" logs
