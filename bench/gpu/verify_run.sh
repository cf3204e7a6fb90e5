#!/usr/bin/env bash
# Session 3's first GPU run (2026-11-23): every GPU test case of the packed build, compute-
# sanitizer on small aggregate and k-means cases, the aggregate and k-means benchmarks, and
# the demo on the GPU with a trace drawn as a timeline (issue 9: copies over kernels).
#   here: scripts/pack_for_gpu.sh && bash bench/gpu/pack_small.sh .carry-v
#   there (carry .carry-v): C=.carry-v bash bench/gpu/verify_run.sh
set -u
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
C=${C:-.carry-v}
[[ -f $C/carry.txz ]] && xz -dc "$C/carry.txz" | tar xf -
source scripts/on_gpu_env.sh
B=.carry/build-gpu
export SLUICE_TEST=1
{ date -u; nvidia-smi -L; } > "$L/devices.txt" 2>&1
timeout 240 bash .carry/run_tests.sh gpu > "$L/gpu_tests.txt" 2>&1
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -30
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() {  # san TOOL TEST CASE
    timeout 120 "$SAN" --tool "$1" --error-exitcode 9 "$B/tests/$2" "$3" > "$L/${1}_$3.txt" 2>&1
    echo "$1 $3: exit $? ($(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/${1}_$3.txt"))"
}
san memcheck test_gpu_aggregate op_empty_one_row_one_group
san memcheck test_gpu_aggregate op_null_and_composite_keys
san racecheck test_gpu_aggregate op_empty_one_row_one_group
san memcheck test_gpu_kmeans op_small_k1_and_given
S=$B/cli/sluice
b() { echo "== $*"; timeout 90 $S bench "$@" --json 2>&1 | tail -n 1 | cut -c1-600 | tee -a "$L/bench.txt"; }
b aggregate --rows 2^28 --groups 1000 --placement gpu --resident device
b aggregate --rows 2^28 --groups 2^24 --placement gpu --resident device
b kmeans --points 2^26 --dims 16 --k 64 --iters 5 --placement gpu --resident device
for pl in auto gpu; do
    timeout 120 $S demo --placement $pl --trace "$L/demo_$pl.json" > "$L/demo_$pl.txt" 2>&1
    echo "demo $pl: exit $?"; tail -n 12 "$L/demo_$pl.txt"
    $S trace-render "$L/demo_$pl.json" -o "$L/demo_$pl.svg" > /dev/null 2>&1
done
timeout 60 $S bench join --build-rows 2^24 --probe-rows 2^24 --placement gpu \
    --trace "$L/join_host.json" > "$L/join_host.txt" 2>&1
$S trace-render "$L/join_host.json" -o "$L/join_host.svg" > /dev/null 2>&1
tail -n 3 "$L/join_host.txt"
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
