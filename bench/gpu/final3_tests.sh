#!/usr/bin/env bash
# Session 3's closing GPU correctness run: every GPU test case of the packed build (one
# process each), then compute-sanitizer memcheck and racecheck on small cases.
#   here: scripts/pack_for_gpu.sh; bash bench/gpu/pack_small.sh .carry-f
#   there (carry .carry-f): bash bench/gpu/final3_tests.sh
set -u
source bench/gpu/final3_common.sh
step gpu_tests.txt 330 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -40
san() {  # san TOOL TEST CASE
    step "san_$1_$3.txt" 90 "$SAN" --tool "$1" --error-exitcode 9 "$B/tests/$2" "$3"
    echo "$1 $2 $3: exit $? ($(grep -m1 -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/san_$1_$3.txt"))"
}
san memcheck test_gpu_join_op sanitize_small
san racecheck test_gpu_join_op sanitize_tiny
san memcheck test_gpu_aggregate op_empty_one_row_one_group
san racecheck test_gpu_aggregate op_empty_one_row_one_group
san memcheck test_gpu_kmeans step_small_k_and_d
san racecheck test_gpu_kmeans step_small_k_and_d
san memcheck test_gpu_gen keys_m2m_and_nulls
san memcheck test_gpu_join_ooc ooc_no_matches_and_empty_side
pack_logs
