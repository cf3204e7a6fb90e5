#!/usr/bin/env bash
# The session's closing GPU run (2026-11-23): every GPU test case of the packed build
# (join operator, join kernels for every kind, aggregate, k-means), memcheck on small
# operator cases, and the engine benchmarks of the join, aggregate and k-means.
#   here: scripts/pack_for_gpu.sh; there (carry .carry): bash bench/gpu/final_run.sh
set -u
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
[[ -f .carry-final/carry.txz ]] && xz -dc .carry-final/carry.txz | tar xf -
source scripts/on_gpu_env.sh
B=.carry/build-gpu
export SLUICE_TEST=1
{ date -u; nvidia-smi -L; } > "$L/devices.txt" 2>&1
timeout 180 bash .carry/run_tests.sh gpu > "$L/gpu_tests.txt" 2>&1
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -30
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in "test_gpu_join_op aggregate_overflow_is_an_error"; do
    set -- $t
    timeout 60 "$SAN" --tool memcheck --error-exitcode 9 $B/tests/$1 "$2" > "$L/memcheck_$2.txt" 2>&1
    echo "memcheck $2: exit $? ($(grep -m1 'ERROR SUMMARY' "$L/memcheck_$2.txt"))"
done
S=$B/cli/sluice
b() { echo "== $*"; timeout 60 $S bench "$@" --json 2>&1 | tail -n 1 | cut -c1-330 | tee -a "$L/bench.txt"; }
b join --build-rows 2^27 --probe-rows 2^27 --placement gpu --resident device
b aggregate --rows 2^28 --groups 1000 --placement gpu --resident device
b kmeans --points 2^26 --dims 16 --k 64 --iters 5 --placement gpu --resident device
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
