#!/usr/bin/env bash
# One GPU-machine call for the runtime (issue #2/#3): runs from the repository root with
# the packed build in .carry/ (scripts/pack_for_gpu.sh) and writes logs under $OUT.
#   run: bash bench/gpu_runtime_run.sh     (carry .carry)
set -u
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT/logs"
source scripts/on_gpu_env.sh
B=.carry/build-gpu
export SLUICE_TEST=1
{
    date -u
    nvidia-smi -L
    $B/cli/sluice devices
    $B/cli/sluice devices --json
} > "$OUT/logs/devices.txt" 2>&1
cat "$OUT/logs/devices.txt"

# Every GPU test case in its own process, and compute-sanitizer memcheck on the runtime.
OUT=$OUT/logs/check SANITIZER_TOOLS="memcheck" bash bench/gpu_check.sh $B > "$OUT/logs/gpu_check.txt" 2>&1
tail -n 40 "$OUT/logs/gpu_check.txt"

# The trace of the overlap test, kept for the record.
SLUICE_KEEP_TRACE=1 $B/tests/test_gpu_exec trace_shows_copies_overlapping_kernels \
    > "$OUT/logs/trace_test.txt" 2>&1
grep -E "trace|overlaps|PASSED|FAILED" "$OUT/logs/trace_test.txt"
cp /tmp/sluice_gpu_trace_* "$OUT/logs/" 2>/dev/null

# compute-sanitizer on the GPU pipeline (small inputs).
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for c in pipeline_on_gpu_matches_cpu status_word_fails_query; do
    timeout 300 "$SAN" --tool memcheck --leak-check full --error-exitcode 9 \
        $B/tests/test_gpu_exec "$c" > "$OUT/logs/memcheck_exec_$c.txt" 2>&1
    echo "memcheck test_gpu_exec $c: exit $? ($(grep -m1 'ERROR SUMMARY' "$OUT/logs/memcheck_exec_$c.txt"))"
done
timeout 300 "$SAN" --tool racecheck --error-exitcode 9 $B/tests/test_gpu_runtime kernels_match_cpu \
    > "$OUT/logs/racecheck_runtime.txt" 2>&1
echo "racecheck test_gpu_runtime kernels_match_cpu: exit $? ($(grep -m1 'ERROR SUMMARY' "$OUT/logs/racecheck_runtime.txt"))"

# The scheduler benchmark and the demo on this machine's CPUs.
$B/cli/sluice bench tasks --tasks 100000 --repeat 5 | tee "$OUT/logs/bench_tasks.txt"
$B/cli/sluice demo | tee "$OUT/logs/demo.txt"
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
