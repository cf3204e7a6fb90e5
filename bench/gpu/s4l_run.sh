#!/usr/bin/env bash
# Session 4, after the review mends (shared upload stage, key range and sampling helpers,
# shared test helpers): every GPU test case and memcheck of the out-of-core and filter cases.
#   there (carry .carry-f): bash bench/gpu/s4l_run.sh
set -u
BUDGET=300 source bench/gpu/final3_common.sh
step gpu_tests.txt 230 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -20
step san.txt 40 "$SAN" --tool memcheck --error-exitcode 9 $B/tests/test_gpu_sort_ooc ooc_sanitize_small
echo "memcheck sort: exit $?"
step san.txt 40 "$SAN" --tool memcheck --error-exitcode 9 $B/tests/test_gpu_join_ooc ooc_no_matches_and_empty_side
echo "memcheck join ooc: exit $?"
grep -h "ERROR SUMMARY" $L/san.txt
pack_logs
