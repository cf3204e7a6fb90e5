#!/usr/bin/env bash
# Session 4, second call: the reworked NPJ (coalesced output, first-match stop on a
# duplicate-free build, > 8 columns a side) — kernel checks, operator tests, sanitizers,
# the NPJ/PHJ sweep over build sizes, and the 8-join sequence with NPJ.
#   there (carry .carry-f): bash bench/gpu/s4b_run.sh
set -u
BUDGET=400 source bench/gpu/final3_common.sh
X=.carry-f/gpu_join_ext_bench
step ext.txt 60 $X check
step ext.txt 30 $X tiny
grep -E "fail|FAIL|ok" "$L/ext.txt" | tail -3
step joinop.txt 120 $B/tests/test_gpu_join_op
grep -E "PASSED|FAILED|MISMATCH" "$L/joinop.txt" | head
san() {  # san TOOL TEST CASE
    step "san_$1_$3.txt" 90 "$SAN" --tool "$1" --error-exitcode 9 "$B/tests/$2" "$3"
    echo "$1 $2 $3: exit $? ($(grep -m1 -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/san_$1_$3.txt"))"
}
san memcheck test_gpu_join_op sanitize_small
san racecheck test_gpu_join_op sanitize_tiny
step npj.txt 60 $X bench 27 npj_r12,npj_r16,npj_r20,npj_r22,npj_r24,npj_r27,phj_r20,phj_r22,phj_r24,npj_wide2_match25,npj_wide2_match10
for b in 20 22 24; do for a in nopart radix; do
  step op.txt 40 $S bench join --build-rows 2^$b --probe-rows 2^27 --payloads 1 --placement gpu \
      --resident device --algo $a --repeat 5 --json
done; done
for a in nopart auto; do
  step seq_$a.txt 60 $S bench join --sequence 8 --placement gpu --resident device \
      --probe-rows 2^27 --dim-rows 2^25 --repeat 3 --algo $a --json
done
pack_logs
