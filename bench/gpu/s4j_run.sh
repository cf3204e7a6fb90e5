#!/usr/bin/env bash
# Session 4, closing call: every GPU test case after all merges (range filter, NPJ,
# co-processing, out-of-core sort with the GPU merge, pageable staging of the out-of-core
# join), sanitizers on the out-of-core join and sort, and the pageable-vs-pinned rows.
#   there (carry .carry-f): bash bench/gpu/s4j_run.sh
set -u
BUDGET=420 source bench/gpu/final3_common.sh
step gpu_tests.txt 260 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -20
san() {  # san TOOL TEST CASE
    step "san_$1_$3.txt" 60 "$SAN" --tool "$1" --error-exitcode 9 "$B/tests/$2" "$3"
    echo "$1 $2 $3: exit $? ($(grep -m1 -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/san_$1_$3.txt"))"
}
san memcheck test_gpu_join_ooc ooc_no_matches_and_empty_side
san memcheck test_gpu_sort_ooc ooc_sanitize_small
J="$S bench join --build-rows 2^27 --probe-rows 2^27 --placement gpu --output aggregate --repeat 3 --json"
step host.txt 30 $J
step host.txt 30 $J --pageable
step host.txt 40 $J --gpu-mem 512Mi
step host.txt 40 $J --gpu-mem 512Mi --pageable
pack_logs
