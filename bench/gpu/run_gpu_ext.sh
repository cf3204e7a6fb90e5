#!/bin/bash
# Runs on the GPU machine (device tool), binaries prebuilt here by bench/gpu/build_ext.sh
# and bench/gpu/build.sh into $C (default .carry/gpu): correctness of the GFTR/kinds/SMJ/
# NPJ kernels vs CPU references, the narrow PHJ check with the per-type block size, the
# 2^27 benchmarks, compute-sanitizer memcheck (small) and racecheck (tiny), the meson
# test binary if carried. Logs under $OUT/logs, packed as $OUT/logs.tar.gz.
C=${C:-.carry/gpu}
B=$C/gpu_join_ext_bench
O=${OUT:-/tmp/out}
mkdir -p $O/logs
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $O/logs/nvidia-smi.txt 2>&1
date -u > $O/logs/date.txt
step() { local name=$1 t=$2; shift 2; echo "=== $name: $*"; local t0=$(date +%s.%N)
  timeout $t "$@" > $O/logs/$name.log 2>&1; local rc=$?
  echo "=== $name rc=$rc ($(awk "BEGIN{print $(date +%s.%N) - $t0}") s)"; tail -n ${TAIL:-8} $O/logs/$name.log; }
[ -z "$SKIP_CHECK" ] && TAIL=3 step check ${T_CHECK:-30} $B check ${CHECK_LG:-13}
grep -h FAIL $O/logs/check.log | head -20
[ -z "$SKIP_SAN" ] && TAIL=4 step memcheck ${T_MEM:-28} compute-sanitizer --tool memcheck --leak-check no $B check ${MEMCHECK_LG:-10}
[ -z "$SKIP_SAN" ] && TAIL=4 step racecheck ${T_RACE:-15} compute-sanitizer --tool racecheck --racecheck-report all $B tiny
[ -n "$MESON" ] && [ -x $C/test_gpu_join_ext ] && TAIL=8 step meson_test 15 env SLUICE_TEST=1 \
    LD_LIBRARY_PATH=$C/lib bash -c "$C/test_gpu_join_ext; $C/test_gpu_join"
[ -n "$OLD" ] && [ -x $C/gpu_join_bench ] && TAIL=2 step old_check ${T_OLDC:-15} $C/gpu_join_bench check 16
[ -n "$OLD" ] && [ -x $C/gpu_join_bench ] && TAIL=3 step old_bench ${T_OLD:-15} $C/gpu_join_bench bench 27 k8,cubonly
[ -n "$W12" ] && [ -x ${B}_w12 ] && TAIL=3 step bench_w12 ${T_W12:-12} ${B}_w12 bench 27 $W12
[ -z "$SKIP_BENCH" ] && TAIL=40 step bench ${T_BENCH:-40} $B bench ${BENCH_LG:-27} ${BENCH_ONLY:-}
tar czf $O/logs.tar.gz -C $O logs
