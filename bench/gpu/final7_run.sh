#!/usr/bin/env bash
# Re-check of the GPU sort cases after the small-budget test was corrected.
#   there (carry .carry-f): bash bench/gpu/final7_run.sh
set -u
BUDGET=90 source bench/gpu/final3_common.sh
step sort.txt 80 $B/tests/test_gpu_sort_op
grep -E "PASSED|FAILED|ERROR" "$L/sort.txt" | sort | uniq -c
pack_logs
