#!/usr/bin/env bash
# Session 4: the PHJ probe-side filter (dense build keys, low match ratios): the join
# operator's GPU cases, memcheck of the filter case, and the match-ratio rows.
#   there (carry .carry-f): bash bench/gpu/s4h_run.sh
set -u
BUDGET=300 source bench/gpu/final3_common.sh
step joinop.txt 150 $B/tests/test_gpu_join_op
grep -E "PASSED|FAILED|MISMATCH|probe rows partitioned" "$L/joinop.txt" | sort | uniq -c | head -20
for m in 0.25 0.1 1; do
  step match.txt 30 $S bench join --build-rows 2^27 --probe-rows 2^27 --payloads 2 --match-ratio $m \
      --placement gpu --resident device --repeat 5 --json
done
step match.txt 30 $S bench join --build-rows 2^27 --probe-rows 2^27 --payloads 1 \
      --placement gpu --resident device --repeat 5 --json
step san.txt 100 "$SAN" --tool memcheck --error-exitcode 9 $B/tests/test_gpu_join_op probe_filter_low_match_dense_build
echo "memcheck filter: exit $? ($(grep -m1 -h 'ERROR SUMMARY' $L/san.txt))"
pack_logs
