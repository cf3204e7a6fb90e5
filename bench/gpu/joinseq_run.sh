#!/usr/bin/env bash
# The sequence of 8 joins (paper-003 row of TARGETS.md: fact 2^27, dimensions 2^25 in all;
# target <= 98.3 ms on an H100, GPU-resident) and the scheduler's mixed workload (auto
# within 1.1x of min(cpu, gpu)). Run from /work/main after merging joinseq, with the merged
# build unpacked at .carry/build-gpu (set C=<carry folder> to unpack its carry.txz first):
#   there: bash bench/gpu/joinseq_run.sh          (under 150 s; logs in $OUT/logs.tgz)
# Every sequence run checks its warm-up checksum against the direct computation
# (expected_checksum; the bench exits 1 when they differ).
set -u
export BUDGET=${BUDGET:-150}
C=${C:-.carry-joinseq-none}   # final3_common.sh re-unpacks only if $C/carry.txz exists
source bench/gpu/final3_common.sh
b() {  # one bench line: its exit status, arguments and JSON (cut)
    local f=$1 t=$2; shift 2
    step "$f" "$t" $S bench "$@" --json
    local rc=$?
    echo "[$rc] $*: $(tail -n 3 "$L/$f" | grep '"bench"' | cut -c1-600)"
}
Q="join --sequence 8 --placement gpu --resident device"
# small first: the chained GPU joins against the direct computation
b seq.txt 20 $Q --probe-rows 2^20 --dim-rows 2^16 --repeat 1
b seq.txt 20 $Q --probe-rows 2^20 --dim-rows 2^16 --repeat 1 --output aggregate
# full size (TARGETS.md): materialized and aggregated, median of 5 after a warm-up
b seq.txt 40 $Q --probe-rows 2^27 --dim-rows 2^25 --repeat 5
b seq.txt 35 $Q --probe-rows 2^27 --dim-rows 2^25 --repeat 5 --output aggregate
# the mixed workload: cpu, gpu and auto placement, 3 repeats each
b mixed.txt 45 mixed --rows 2^26 --repeat 3
# if time is left: the CPU on all cores, same sequence, for comparison
b seq_cpu.txt 25 join --sequence 8 --placement cpu --probe-rows 2^27 --dim-rows 2^25 \
    --repeat 1 --output aggregate
pack_logs
