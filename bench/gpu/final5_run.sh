#!/usr/bin/env bash
# Session 3's re-check after the last fixes: every GPU test case, and the mixed workload
# (placement cpu / gpu / auto) that the previous run had no time left for.
#   here: scripts/pack_for_gpu.sh; bash bench/gpu/pack_small.sh .carry-f
#   there (carry .carry-f): bash bench/gpu/final5_run.sh
set -u
BUDGET=330 source bench/gpu/final3_common.sh
step gpu_tests.txt 200 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -30
for r in 2^24 2^26; do
    step mixed.txt 120 $S bench mixed --rows $r --repeat 3 --json
    echo "mixed $r: exit $?: $(grep '"bench"' "$L/mixed.txt" | tail -n 1)"
done
pack_logs
