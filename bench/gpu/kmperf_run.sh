#!/bin/bash
# Device run of the k-means performance work (issue 7, branch kmperf), from the root of
# the tree the device tool sends, with the pack in .carry-kmperf/carry.txz (from
# scripts/pack_for_gpu.sh + bench/gpu/pack_small.sh; it holds .carry/build-gpu with the
# sluice CLI and test_gpu_kmeans, .carry/lib, and .carry/gpu with the standalone kernel
# benchmark from bench/gpu/build_kmeans.sh). Order: the operator benchmark (phases and
# floor), the kernel benchmark of the target shape (per-warp and shared partial sums),
# correctness (kernel check, test_gpu_kmeans cases), compute-sanitizer (memcheck,
# racecheck on tiny inputs), then the other kernel shapes. Logs tarred into $OUT.
#   bash .carry-kmperf/kmperf_run.sh        (S=0.5 halves every step's time limit)
OUTDIR=${OUT:-/tmp/out}
O=$OUTDIR/../kmperf_logs
mkdir -p "$O" "$OUTDIR"
xz -dc .carry-kmperf/carry.txz | tar xf - || { echo "unpack failed"; exit 1; }
source scripts/on_gpu_env.sh
C=.carry/build-gpu
G=.carry/gpu
S=${S:-1}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit --format=csv > "$O/gpu.txt" 2>&1
date -u >> "$O/gpu.txt"
step() {
  local name=$1 t; t=$(awk "BEGIN{print int($2 * $S)}"); shift 2
  echo "=== $name: $*"; local t0; t0=$(date +%s.%N)
  timeout "$t" "$@" > "$O/$name.log" 2>&1; local rc=$?
  echo "=== $name rc=$rc ($(awk "BEGIN{print $(date +%s.%N) - $t0}") s)"
  tail -n "${TAIL:-6}" "$O/$name.log"
  tar czf "$OUTDIR/logs.tar.gz" -C "$O" . 2>/dev/null
}
TAIL=2 step op_bench 45 $C/cli/sluice bench kmeans --points 2^26 --dims 16 --k 64 --iters 5 --placement gpu --resident device --json
TAIL=2 step op_bench_tc 45 env SLUICE_KMEANS_METHOD=3 $C/cli/sluice bench kmeans --points 2^26 --dims 16 --k 64 --iters 5 --placement gpu --resident device --json
TAIL=8 step kbench 40 env KM_FIRST_SHAPE=1 $G/gpu_kmeans_bench bench 26
TAIL=8 step kbench_shared 40 env KM_FIRST_SHAPE=1 $G/gpu_kmeans_bench_shared bench 26
TAIL=3 step check 50 $G/gpu_kmeans_bench check 16
grep -c '^ok' "$O/check.log"; grep '^FAIL' "$O/check.log" | head -20
for c in $($C/tests/test_gpu_kmeans --list 2>/dev/null); do
  TAIL=2 step "t_$c" 40 env SLUICE_TEST=1 $C/tests/test_gpu_kmeans "$c"
done
TAIL=2 step t_op_tc 40 env SLUICE_TEST=1 SLUICE_KMEANS_METHOD=3 $C/tests/test_gpu_kmeans op_d16_k64_init_modes
TAIL=3 step memcheck 40 compute-sanitizer --tool memcheck --leak-check no $G/gpu_kmeans_bench tiny
TAIL=3 step racecheck 40 compute-sanitizer --tool racecheck --racecheck-report all $G/gpu_kmeans_bench tiny
TAIL=3 step memcheck_op 40 env SLUICE_TEST=1 compute-sanitizer --tool memcheck --leak-check no $C/tests/test_gpu_kmeans op_small_k1_and_given
TAIL=2 step op_bench20 45 $C/cli/sluice bench kmeans --points 2^26 --dims 16 --k 64 --iters 20 --repeat 3 --placement gpu --resident device --json
TAIL=12 step kbench_all 60 $G/gpu_kmeans_bench bench 26
grep -h '^{' "$O"/op_bench*.log "$O"/kbench*.log 2>/dev/null
