#!/usr/bin/env bash
# The session's closing GPU run: every test of the packed build (GPU cases included),
# compute-sanitizer on the GPU tests, the overlap traces (pinned and pageable), and the
# standalone join kernels bench, with logs packed under $OUT.
#   scripts/pack_for_gpu.sh here; then run: bash bench/gpu_session_run.sh  (carry .carry)
set -u
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
source scripts/on_gpu_env.sh
B=.carry/build-gpu
export SLUICE_TEST=1
{ date -u; nvidia-smi -L; $B/cli/sluice devices; } 2>&1 | tee "$L/devices.txt"

# All tests, as meson would run them (CPU ones too: a 16-core machine finds other races).
bash .carry/run_tests.sh > "$L/all_tests.txt" 2>&1
tail -n 3 "$L/all_tests.txt"
grep -E "^FAIL" "$L/all_tests.txt" | head -20

# Traces of the overlap cases, with the parallel stager for pageable input.
for c in trace_shows_copies_overlapping_kernels gpu_stage_feeds_host_stage_with_overlapping_downloads \
         replicas_reused_within_a_query_only blocked_flow_on_gpu; do
    SLUICE_KEEP_TRACE=1 timeout 300 $B/tests/test_gpu_exec $c > "$L/exec_$c.txt" 2>&1
    echo "$c: exit $? $(grep -hE '^trace|overlaps' "$L/exec_$c.txt" | tr '\n' ' ')"
done
cp /tmp/sluice_gpu_trace_* "$L/" 2>/dev/null

# compute-sanitizer on the GPU tests (small inputs).
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in "test_gpu_exec pipeline_on_gpu_matches_cpu" "test_gpu_exec blocked_flow_on_gpu" \
         "test_gpu_exec replicas_reused_within_a_query_only" "test_gpu_join"; do
    set -- $t
    for c in ${2:-$($B/tests/$1 --list)}; do
        timeout 240 "$SAN" --tool memcheck --leak-check full --error-exitcode 9 $B/tests/$1 "$c" \
            > "$L/memcheck_$1_$c.txt" 2>&1
        echo "memcheck $1 $c: exit $? ($(grep -m1 'ERROR SUMMARY' "$L/memcheck_$1_$c.txt"))"
    done
done

# The standalone join kernels' correctness suite, if built here (bench/gpu/build.sh).
if [ -x .carry/gpu/gpu_join_bench ]; then
    timeout 300 .carry/gpu/gpu_join_bench check 16 > "$L/gpu_join_check.txt" 2>&1
    echo "gpu_join_bench check 16: exit $? ($(tail -n 1 "$L/gpu_join_check.txt"))"
fi
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
