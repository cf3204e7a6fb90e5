#!/usr/bin/env bash
# Session 4, last call: pageable staging in the out-of-core sort (and join): their GPU test
# cases, memcheck of the small out-of-core cases (pageable tables: the staging path), and
# pageable vs pinned out-of-core sort and join.
#   there (carry .carry-f): bash bench/gpu/s4k_run.sh
set -u
BUDGET=240 source bench/gpu/final3_common.sh
for t in test_gpu_sort_ooc test_gpu_join_ooc test_gpu_join_smj_ooc; do
  step tests.txt 90 $B/tests/$t
done
grep -E "PASSED|FAILED" "$L/tests.txt" | sort | uniq -c
step san.txt 60 "$SAN" --tool memcheck --error-exitcode 9 $B/tests/test_gpu_sort_ooc ooc_sanitize_small
echo "memcheck sort: exit $? ($(grep -m1 -h 'ERROR SUMMARY' $L/san.txt))"
SO="$S bench sort --json --rows 2^28 --key-bytes 4 --payloads 1 --placement gpu --repeat 3 --gpu-mem $((1024*1024*1024))"
step sort.txt 30 $SO
step sort.txt 40 $SO --pageable
step join.txt 40 $S bench join --build-rows 2^27 --probe-rows 2^27 --placement gpu --output aggregate \
    --repeat 3 --json --gpu-mem 512Mi --pageable
pack_logs
