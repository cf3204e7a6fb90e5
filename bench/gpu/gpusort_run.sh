#!/usr/bin/env bash
# The GPU sort, partition and merge operators (issue 6, branch gpusort): the test cases
# of test_gpu_sort_op (one process each), compute-sanitizer memcheck and racecheck on
# its small case, and the TARGETS.md sort rows through `sluice bench sort` with
# GPU-resident input. Under 150 s (BUDGET; step() cuts what would run past it).
#   there (from the merged main; final3_common.sh unpacks the carry to .carry/build-gpu):
#   bash bench/gpu/gpusort_run.sh      (logs under $OUT/logs, packed into $OUT/logs.tgz)
set -u
BUDGET=${BUDGET:-150}
source bench/gpu/final3_common.sh
T=$B/tests/test_gpu_sort_op
san() {  # san TOOL: compute-sanitizer on the small case
    step "san_sort_$1.txt" 45 "$SAN" --tool "$1" --error-exitcode 9 "$T" sanitize_small
    echo "$1 sanitize_small: exit $? ($(grep -m1 -h 'ERROR SUMMARY\|RACECHECK SUMMARY' \
        "$L/san_sort_$1.txt"))"
}
# 1. Correctness vs the CPU operators, every case in its own process (~40 s); the last
# case, cub_reference_times, prints CUB's radix sort alone (the bench's reference).
for c in $("$T" --list); do
    step sort_tests.txt 30 "$T" "$c"
    echo "test $c: exit $?"
done
grep -E "MISMATCH|FAIL|first difference" "$L/sort_tests.txt" | head -20
san memcheck
# 2. TARGETS.md: 2^28 (int32 key, int32 value) pairs within 1.1x of CUB alone (8.7 ms on
# the H100); with 3 payloads less than CUB sorting each column; 2^27 with 8-byte keys.
for args in "--rows 268435456 --key-bytes 4 --payloads 1" \
            "--rows 268435456 --key-bytes 4 --payloads 3" \
            "--rows 134217728 --key-bytes 8 --payloads 1"; do
    # shellcheck disable=SC2086
    step sort_bench.txt 30 "$S" bench sort $args --placement gpu --resident device --json
    echo "bench sort $args: exit $?"
done
grep -h '^{' "$L/sort_tests.txt" "$L/sort_bench.txt"
san racecheck
pack_logs
