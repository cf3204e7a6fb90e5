#!/usr/bin/env bash
# The join operator on a GPU, through the engine (issue 6): the GPU test suites of the
# packed build, compute-sanitizer memcheck on the operator tests (small inputs), and
# `sluice bench join --placement gpu --resident device` on the TARGETS.md workloads.
#   here: scripts/pack_for_gpu.sh; there (device tool, carry .carry):
#   bash bench/gpu/join_op_run.sh [quick]
set -u
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
source scripts/on_gpu_env.sh
B=.carry/build-gpu
export SLUICE_TEST=1
{ date -u; nvidia-smi -L; $B/cli/sluice devices; } > "$L/devices.txt" 2>&1
head -3 "$L/devices.txt"
timeout 240 bash .carry/run_tests.sh gpu > "$L/gpu_tests.txt" 2>&1
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -20
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for c in pk_fk_narrow_int32 duplicates_both_sides_wide_int64 aggregate_output_exact; do
    timeout 120 "$SAN" --tool memcheck --error-exitcode 9 $B/tests/test_gpu_join_op "$c" \
        > "$L/memcheck_$c.txt" 2>&1
    echo "memcheck $c: exit $? ($(grep -m1 'ERROR SUMMARY' "$L/memcheck_$c.txt"))"
done
J="$B/cli/sluice bench join --placement gpu --resident device --json --repeat 5"
run() { echo "== $*"; timeout 120 $J "$@" 2>&1 | tail -n 2 | tee -a "$L/bench.txt"; }
run --build-rows 2^27 --probe-rows 2^27
run --build-rows 2^27 --probe-rows 2^27 --zipf 1
run --build-rows 2^27 --probe-rows 2^27 --key-bytes 8
run --build-rows 2^27 --probe-rows 2^27 --payloads 2
run --build-rows 2^27 --probe-rows 2^27 --output aggregate
[[ ${1:-} == quick ]] || {
run --build-rows 2^27 --probe-rows 2^27 --payloads 3
run --build-rows 2^27 --probe-rows 2^27 --payloads 2 --match-ratio 0.25
run --build-rows 2^27 --probe-rows 2^28 --payloads 2
}
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
