#!/bin/bash
# Runs on the GPU machine (device tool), binary prebuilt by bench/gpu/build.sh into
# .carry/gpu: correctness (2^20), the 2^27 benchmark, compute-sanitizer memcheck and
# racecheck on small inputs. Logs go to $OUT (packed as one tar.gz too).
B=${B:-.carry/gpu/gpu_join_bench}
O=${OUT:-/tmp/out}
mkdir -p $O/logs
nvidia-smi > $O/logs/nvidia-smi.txt 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $O/logs/nvidia-smi.txt 2>&1
date -u > $O/logs/date.txt
step() { local name=$1 t=$2; shift 2; echo "=== $name: $*"; local t0=$(date +%s.%N)
  timeout $t "$@" > $O/logs/$name.log 2>&1; local rc=$?
  echo "=== $name rc=$rc ($(awk "BEGIN{print $(date +%s.%N) - $t0}") s)"; tail -n ${TAIL:-8} $O/logs/$name.log; }
[ -z "$SKIP_CHECK" ] && TAIL=4 step check 150 $B check ${CHECK_LG:-20}
[ -z "$SKIP_BENCH" ] && TAIL=12 step bench 300 $B bench ${BENCH_LG:-27} ${BENCH_ONLY:-}
[ -x ${B}_b256 ] && TAIL=3 step bench_b256 60 ${B}_b256 bench ${BENCH_LG:-27} narrow,cubonly
# the meson test binary (tests/gpu/test_gpu_join.c), built here by meson and carried
[ -x .carry/gpu/test_gpu_join ] && TAIL=12 step meson_test_gpu_join 120 env SLUICE_TEST=1 \
    LD_LIBRARY_PATH=.carry/gpu/lib .carry/gpu/test_gpu_join
[ -z "$SKIP_SAN" ] && TAIL=6 step memcheck 150 compute-sanitizer --tool memcheck --leak-check no $B check ${MEMCHECK_LG:-13}
[ -z "$SKIP_SAN" ] && TAIL=6 step racecheck 100 compute-sanitizer --tool racecheck --racecheck-report all $B tiny
grep -h '^{' $O/logs/bench.log $O/logs/bench_b256.log 2>/dev/null
tar czf $O/logs.tar.gz -C $O logs
