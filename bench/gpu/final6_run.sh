#!/usr/bin/env bash
# Re-check of the GPU sort/partition/merge sinks under a small budget, then every GPU case.
#   there (carry .carry-f): bash bench/gpu/final6_run.sh
set -u
BUDGET=200 source bench/gpu/final3_common.sh
step sort.txt 60 $B/tests/test_gpu_sort_op
grep -E "PASSED|FAILED|ERROR" "$L/sort.txt" | head
step gpu_tests.txt 130 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -20
pack_logs
