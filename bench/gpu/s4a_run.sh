#!/usr/bin/env bash
# Session 4, first call: the GPU tests after session 3's last changes (sort test fix,
# shared test helpers), the NPJ kernel alone vs build size (and one ncu profile of its
# probe), the 8-join sequence with NPJ vs PHJ, and the mixed workload at 2^24 explained.
#   there (carry .carry-f): bash bench/gpu/s4a_run.sh
set -u
BUDGET=420 source bench/gpu/final3_common.sh
X=.carry-f/gpu_join_ext_bench
step sort.txt 60 $B/tests/test_gpu_sort_op
step gpu_tests.txt 150 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -20
step npj.txt 60 $X bench 27 npj_r12 npj_r16 npj_r20 npj_r22 npj_r24 phj_r20 phj_r22
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[[ -n $NCU ]] && step ncu.txt 60 $NCU --kernel-name regex:probe_kernel --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section LaunchStats --section WarpStateStats $X bench 27 npj_r20
for a in nopart radix; do
  step seq_$a.txt 60 $S bench join --sequence 8 --placement gpu --resident device \
      --probe-rows 2^27 --dim-rows 2^25 --repeat 3 --algo $a --json
done
step mixed.txt 60 $S explain bench/gpu/mixed_2p24.plan --analyze --placement auto
step mixed.txt 30 $S explain bench/gpu/mixed_2p24.plan --analyze --placement gpu
step mixedb.txt 60 $S bench mixed --rows 2^24 --repeat 3 --json
pack_logs
