#!/usr/bin/env bash
# Session 3's last GPU run (everything merged): every GPU test case, then the sequence of
# 8 joins and the mixed workload (joinseq_run.sh), then the GPU sort/partition/merge
# operators (gpusort_run.sh).
#   here: scripts/pack_for_gpu.sh; bash bench/gpu/pack_small.sh .carry-f
#   there (carry .carry-f): bash bench/gpu/final4_run.sh
set -u
BUDGET=200 source bench/gpu/final3_common.sh
step gpu_tests.txt 190 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -30
T=$OUT
for s in joinseq_run gpusort_run; do
    [[ -f bench/gpu/$s.sh ]] || continue
    OUT=$T/$s C=.carry-none BUDGET=150 bash bench/gpu/$s.sh 2>&1 | tail -n 25
done
OUT=$T
pack_logs
