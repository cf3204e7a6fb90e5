#!/usr/bin/env bash
# Session 4, closing call (after merging the out-of-core sort/SMJ): every GPU test case,
# sanitizers on the out-of-core sort and SMJ, the out-of-core sort and SMJ benchmarks
# with the radix-range merge, the 8-join sequence and narrow join under auto.
#   there (carry .carry-f): bash bench/gpu/s4g_run.sh
set -u
BUDGET=540 source bench/gpu/final3_common.sh
step gpu_tests.txt 230 bash .carry/run_tests.sh gpu
grep -E "^FAIL|passed" "$L/gpu_tests.txt" | head -20
san() {  # san TOOL TEST CASE
    step "san_$1_$3.txt" 60 "$SAN" --tool "$1" --error-exitcode 9 "$B/tests/$2" "$3"
    echo "$1 $2 $3: exit $? ($(grep -m1 -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/san_$1_$3.txt"))"
}
san memcheck test_gpu_sort_ooc ooc_sanitize_small
san racecheck test_gpu_sort_ooc ooc_racecheck_tiny
san memcheck test_gpu_join_smj_ooc smj_ooc_sanitize_small
SO="$S bench sort --json --rows 2^28 --key-bytes 4 --payloads 1"
D=$((2 * 1024 * 1024 * 1024))
for f in 2 4 16; do step sort_ooc.txt 40 $SO --placement gpu --repeat 3 --gpu-mem $((D / f)); done
J="$S bench join --json --build-rows 2^26 --probe-rows 2^26 --algo sortmerge"
Q=$((1024 * 1024 * 1024))
for f in 4 16; do step smj_ooc.txt 40 $J --placement gpu --repeat 3 --gpu-mem $((Q / f)); done
step smj_ooc.txt 40 $J --placement cpu --repeat 3
step seq.txt 40 $S bench join --sequence 8 --placement gpu --resident device \
    --probe-rows 2^27 --dim-rows 2^25 --repeat 3 --algo auto --json
step narrow.txt 30 $S bench join --build-rows 2^27 --probe-rows 2^27 --payloads 1 --placement gpu \
    --resident device --algo auto --repeat 5 --json
pack_logs
