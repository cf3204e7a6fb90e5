#!/bin/bash
# Runs on the GPU machine (device tool) from the repository root, everything prebuilt
# here and carried in $C (default .carry-gpukmeans): the standalone kernel check and
# benchmark (bench/gpu/gpu_kmeans_bench.cu), the meson test binary test_gpu_kmeans
# (kernel and operator cases), `sluice bench kmeans --placement gpu` (points resident
# on the GPU and in host memory), then compute-sanitizer memcheck (small input),
# racecheck and synccheck (tiny input). Logs in $OUT.
C=${C:-.carry-gpukmeans}
# Logs live beside $OUT; only their tarball (refreshed after every step, so a run cut
# short still returns it) goes to $OUT.
OUTDIR=${OUT:-/tmp/out}
O=$OUTDIR/../kmeans_run
mkdir -p $O/logs $OUTDIR
export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem,temperature.gpu --format=csv > $O/logs/gpu.txt 2>&1
date -u >> $O/logs/gpu.txt
# S scales every step's time limit (S=0.6: a short device slot).
S=${S:-1}
step() { local name=$1 t=$(awk "BEGIN{print int($2 * $S)}"); shift 2; echo "=== $name: $*"; local t0=$(date +%s.%N)
  timeout $t "$@" > $O/logs/$name.log 2>&1; local rc=$?
  echo "=== $name rc=$rc ($(awk "BEGIN{print $(date +%s.%N) - $t0}") s)"; tail -n ${TAIL:-8} $O/logs/$name.log
  tar czf $OUTDIR/logs.tar.gz -C $O logs 2>/dev/null; }
B=$C/gpu_kmeans_bench
TAIL=3 step check 60 $B check ${CHECK_LG:-16}
grep -c '^ok' $O/logs/check.log; grep '^FAIL' $O/logs/check.log | head -30
TAIL=30 step bench 70 $B bench ${BENCH_LG:-26}
TAIL=3 step memcheck 50 compute-sanitizer --tool memcheck --leak-check no $B tiny
TAIL=3 step racecheck 40 compute-sanitizer --tool racecheck --racecheck-report all $B tiny
TAIL=3 step synccheck 20 compute-sanitizer --tool synccheck $B tiny
[ -x $C/test_gpu_kmeans ] && TAIL=3 step memcheck_op 40 env SLUICE_TEST=1 compute-sanitizer --tool memcheck --leak-check no $C/test_gpu_kmeans op_small_k1_and_given
if [ -x $C/sluice ]; then
  TAIL=1 step op_bench_dev 40 $C/sluice bench kmeans --points 2^26 --dims 16 --k 64 --iters 10 --placement gpu --resident device --repeat 5
fi
if [ -x $C/test_gpu_kmeans ]; then
  for c in $($C/test_gpu_kmeans --list 2>/dev/null); do
    TAIL=${TT:-2} step "t_$c" 30 env SLUICE_TEST=1 $C/test_gpu_kmeans $c
  done
fi
if [ -x $C/sluice ]; then
  TAIL=1 step op_bench_host 40 $C/sluice bench kmeans --points 2^26 --dims 16 --k 64 --iters 10 --placement gpu --repeat 3
fi
grep -h '^{' $O/logs/bench.log $O/logs/op_bench*.log 2>/dev/null
