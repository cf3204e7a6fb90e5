#!/bin/bash
# Runs on the GPU machine (device tool) from the repository root, with the carry folder
# made by bench/gpu/pack_agg.sh (C, default .carry-gpuagg): the standalone check of every
# method against a CPU reference, the meson test binary tests/gpu/test_gpu_aggregate
# (kernel and operator level), the TARGETS.md benchmark (2^28 rows, 1,000 and 2^24
# groups) standalone and through `sluice bench aggregate --resident device`, the
# table-vs-partitioned sweep that sets the method threshold, and compute-sanitizer
# memcheck (small input) and racecheck (tiny input). Logs under $OUT/logs (+ a tar.gz).
C=${C:-.carry-gpuagg}
O=${OUT:-/tmp/out}
mkdir -p "$O/logs"
export LD_LIBRARY_PATH=$PWD/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=$C/bin/gpu_agg_bench
nvidia-smi > "$O/logs/nvidia-smi.txt" 2>&1
date -u > "$O/logs/date.txt"
step() {
    local name=$1 t=$2; shift 2
    echo "=== $name: $*"
    local t0; t0=$(date +%s.%N)
    timeout "$t" "$@" > "$O/logs/$name.log" 2>&1
    local rc=$?
    echo "=== $name rc=$rc ($(awk "BEGIN{print $(date +%s.%N) - $t0}") s)"
    tail -n "${TAIL:-6}" "$O/logs/$name.log"
}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
TAIL=3 step check 45 $B check ${CHECK_SCALE:-0.5}
grep -E "FAIL|MISMATCH|LEAK" "$O/logs/check.log" | head -20
# Every case of the meson test binary in its own process, as meson runs them.
echo "=== meson test cases (tests/gpu/test_gpu_aggregate)"
for c in $($C/bin/test_gpu_aggregate --list); do
    t0=$(date +%s.%N)
    SLUICE_TEST=1 timeout 40 $C/bin/test_gpu_aggregate "$c" > "$O/logs/t_$c.log" 2>&1
    rc=$?
    echo "case $c rc=$rc ($(awk "BEGIN{print $(date +%s.%N) - $t0}") s)"
    ((rc != 0)) && tail -n 12 "$O/logs/t_$c.log"
done
TAIL=14 step bench 50 $B bench 28 1000,16777216
TAIL=20 step sweep 25 $B sweep 26
for g in 1000 16777216; do
    TAIL=2 step cli_$g 30 $C/bin/sluice bench aggregate --rows 2^28 --groups $g --placement gpu \
        --resident device --repeat 5 --json
done
TAIL=8 step memcheck 40 $CS --tool memcheck --leak-check no $B check 0.005
TAIL=8 step racecheck 35 $CS --tool racecheck --racecheck-report hazard $B tiny
tar czf "$O/logs.tar.gz" -C "$O" logs
