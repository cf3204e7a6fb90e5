#!/usr/bin/env bash
# Session 3's second GPU run: the plan-file cases (the star join's steps), and traces of
# host-resident GPU pipelines drawn as timelines (copies under kernels, issue 9).
#   here: scripts/pack_for_gpu.sh; bash bench/gpu/pack_small.sh .carry-v
#   there (carry .carry-v): C=.carry-v bash bench/gpu/verify2_run.sh
set -u
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
C=${C:-.carry-v}
[[ -f $C/carry.txz ]] && xz -dc "$C/carry.txz" | tar xf -
source scripts/on_gpu_env.sh
B=.carry/build-gpu
S=$B/cli/sluice
export SLUICE_TEST=1
for c in star_join_step1 star_join_step2 star_join_step3 star_join demo join_wide; do
    timeout 120 $B/tests/test_gpu_plans $c > "$L/plans_$c.txt" 2>&1
    echo "gpu_plans.$c: exit $?"; grep -E "MISMATCH|rows on" "$L/plans_$c.txt" | head -8
done
tr() {  # tr NAME BENCH ARGS...: a traced host-resident bench and its timeline
    local n=$1; shift
    timeout 120 $S bench "$@" --placement gpu --repeat 1 --trace "$L/$n.json" > "$L/$n.txt" 2>&1
    echo "$n: exit $?: $(tail -n 1 "$L/$n.txt" | cut -c1-200)"
    $S trace-render "$L/$n.json" -o "$L/$n.svg" > /dev/null 2>&1
}
tr agg_host aggregate --rows 2^26 --groups 1000
tr kmeans_host kmeans --points 2^24 --dims 16 --k 64 --iters 3
tr join_host join --build-rows 2^24 --probe-rows 2^24
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
