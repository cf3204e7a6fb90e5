#!/usr/bin/env bash
# GPU aggregate (issue 7, aggperf): tests, sanitizers and the TARGETS.md benchmark rows
# in one device call. Here (worktree aggperf):
#   meson compile -C build-gpu sluice:executable test_gpu_aggregate
#   bash bench/gpu/build_agg.sh /tmp/aggb; bash bench/gpu/aggperf_pack.sh /work/main/.carry-aggperf
# There (carry .carry-aggperf, run from the repository root):
#   bash .carry-aggperf/aggperf_run.sh
set -u
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
C=${C:-.carry-aggperf}
xz -dc "$C/carry.txz" | tar xf -
export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
B=.carry/build-gpu
T=$B/tests/test_gpu_aggregate
S=$B/cli/sluice
export SLUICE_TEST=1
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw --format=csv; } \
    > "$L/devices.txt" 2>&1
# 1. every gpu_aggregate case
for c in kernel_methods kernel_table_too_small_runs_again kernel_int64_overflow_in_status_word \
         op_empty_one_row_one_group op_1000_groups op_many_groups_partitioned op_zipf \
         op_null_and_composite_keys op_int64_overflow_fails_and_engine_stays_usable \
         op_many_batches op_auto_placement_picks_gpu; do
    timeout 60 "$T" "$c" > "$L/t_$c.txt" 2>&1
    echo "test $c: exit $?"
done | tee "$L/tests.txt"
# 2. benchmark rows (TARGETS.md), phases in the JSON
unset SLUICE_TEST
b() { echo "== $*"; timeout 60 $S bench aggregate "$@" --placement gpu --resident device --json 2>&1 \
          | tail -n 2 | cut -c1-900; }
{
    b --rows 2^28 --groups 1000
    b --rows 2^28 --groups 2^24
    b --rows 2^26 --groups 1000 --zipf 1.0
    b --rows 2^26 --groups 2^24 --zipf 1.0
} 2>&1 | tee "$L/bench.txt"
# 3. kernel-level variants (no engine): where the time goes per method
if [[ ${KERNEL:-1} == 1 ]]; then
    timeout 70 .carry/aggb/gpu_agg_bench bench 28 1000,16777216 > "$L/kernel_bench.txt" 2>&1
    echo "kernel bench: exit $?"; grep -E "^\{|d2d|bench" "$L/kernel_bench.txt" | cut -c1-400 | head -30
fi
# 4. sanitizers on small cases
export SLUICE_TEST=1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() {  # san TOOL CASE
    timeout 70 "$SAN" --tool "$1" --error-exitcode 9 "$T" "$2" > "$L/${1}_$2.txt" 2>&1
    echo "$1 $2: exit $? ($(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/${1}_$2.txt"))"
}
san memcheck op_empty_one_row_one_group
san racecheck op_empty_one_row_one_group
san memcheck kernel_table_too_small_runs_again
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
