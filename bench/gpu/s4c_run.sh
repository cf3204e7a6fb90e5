#!/usr/bin/env bash
# Session 4, third call: NPJ with the direct table for dense keys — operator tests,
# sanitizers, operator-level NPJ vs PHJ over build sizes, the 8-join sequence, narrow.
#   there (carry .carry-f): bash bench/gpu/s4c_run.sh
set -u
BUDGET=420 source bench/gpu/final3_common.sh
X=.carry-f/gpu_join_ext_bench
step ext.txt 60 $X check
step joinop.txt 150 $B/tests/test_gpu_join_op
grep -E "PASSED|FAILED|MISMATCH" "$L/joinop.txt" | sort | uniq -c
san() {  # san TOOL TEST CASE
    step "san_$1_$3.txt" 120 "$SAN" --tool "$1" --error-exitcode 9 "$B/tests/$2" "$3"
    echo "$1 $2 $3: exit $? ($(grep -m1 -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/san_$1_$3.txt"))"
}
san memcheck test_gpu_join_op sanitize_small
san racecheck test_gpu_join_op sanitize_tiny
san memcheck test_gpu_join_op nopart_wide_sides_dense_sparse_and_duplicate_builds
for b in 12 16 20 22 24 27; do for a in nopart radix; do
  step op.txt 40 $S bench join --build-rows 2^$b --probe-rows 2^27 --payloads 1 --placement gpu \
      --resident device --algo $a --repeat 5 --json
done; done
step op.txt 40 $S bench join --build-rows 2^22 --probe-rows 2^27 --payloads 1 --placement gpu \
      --resident device --algo auto --repeat 5 --json
for a in nopart auto; do
  step seq_$a.txt 60 $S bench join --sequence 8 --placement gpu --resident device \
      --probe-rows 2^27 --dim-rows 2^25 --repeat 3 --algo $a --json
done
step narrow.txt 40 $S bench join --build-rows 2^27 --probe-rows 2^27 --payloads 1 --placement gpu \
      --resident device --algo auto --repeat 5 --json
pack_logs
