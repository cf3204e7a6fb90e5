#!/usr/bin/env bash
# Session 4, fourth call (after merging co-processing): every GPU test case, sanitizers
# on the join's small cases, NPJ vs PHJ over build sizes, the 8-join sequence, narrow,
# the mixed workload.
#   there (carry .carry-f): bash bench/gpu/s4d_run.sh
set -u
BUDGET=500 source bench/gpu/final3_common.sh
X=.carry-f/gpu_join_ext_bench
step ext.txt 40 $X check
step gpu_tests.txt 200 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -20
san() {  # san TOOL TEST CASE
    step "san_$1_$3.txt" 100 "$SAN" --tool "$1" --error-exitcode 9 "$B/tests/$2" "$3"
    echo "$1 $2 $3: exit $? ($(grep -m1 -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/san_$1_$3.txt"))"
}
san memcheck test_gpu_join_op sanitize_small
san racecheck test_gpu_join_op sanitize_tiny
san memcheck test_gpu_join_op nopart_wide_sides_dense_sparse_and_duplicate_builds
for b in 12 20 22 24 27; do for a in nopart radix; do
  step op.txt 30 $S bench join --build-rows 2^$b --probe-rows 2^27 --payloads 1 --placement gpu \
      --resident device --algo $a --repeat 5 --json
done; done
for a in nopart auto; do
  step seq_$a.txt 50 $S bench join --sequence 8 --placement gpu --resident device \
      --probe-rows 2^27 --dim-rows 2^25 --repeat 3 --algo $a --json
done
step narrow.txt 30 $S bench join --build-rows 2^27 --probe-rows 2^27 --payloads 1 --placement gpu \
      --resident device --algo auto --repeat 5 --json
step mixed.txt 60 $S bench mixed --rows 2^24 --repeat 3 --json
step mixed.txt 60 $S bench mixed --rows 2^26 --repeat 3 --json
pack_logs
