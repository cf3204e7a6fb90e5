#!/usr/bin/env bash
# Session 3's closing GPU benchmark run (after final3_tests.sh, same carry): the GPU-resident
# join rows of TARGETS.md, the aggregate and k-means rows, host-resident and out-of-core
# joins against the transfer floors, the demo on the GPU and the CPU, and traces drawn as
# timelines (the demo's, an out-of-core join's, and the copy/kernel overlap test's).
#   there (carry .carry-f): bash bench/gpu/final3_bench.sh
set -u
source bench/gpu/final3_common.sh
b() {  # one bench line: its exit status, arguments and JSON (cut)
    step bench.txt 45 $S bench "$@" --json
    local rc=$?
    echo "[$rc] $*: $(tail -n 2 "$L/bench.txt" | grep '"bench"' | cut -c1-400)"
}
J="join --placement gpu --resident device --repeat 5"
N="--build-rows 2^27 --probe-rows 2^27"
b $J $N
b $J $N --payloads 2
b $J $N --payloads 3
b $J $N --key-bytes 8
b $J $N --zipf 1
b $J $N --payloads 2 --match-ratio 0.25
b $J $N --payloads 2 --match-ratio 0.1
b $J --build-rows 2^27 --probe-rows 2^28 --payloads 2
b aggregate --rows 2^28 --groups 1000 --placement gpu --resident device
b aggregate --rows 2^28 --groups 2^24 --placement gpu --resident device
b kmeans --points 2^26 --dims 16 --k 64 --iters 5 --placement gpu --resident device
H="join --placement gpu --repeat 3 $N"
G=$((2 * 1024 * 1024 * 1024))
b $H
b $H --pageable
b $H --output aggregate
b $H --gpu-mem $((G / 2)) --output aggregate
b $H --gpu-mem $((G / 4)) --output aggregate
b $H --gpu-mem $((G / 16)) --output aggregate
b $H --gpu-mem $((G / 4))
step demo.txt 60 $S demo --trace "$L/demo_gpu.json"
step demo.txt 60 $S demo --placement cpu
step demo.txt 60 $S demo --placement auto
grep -E "demo on|placement|total|results" "$L/demo.txt"
step trace.txt 60 $S bench join --placement gpu $N --gpu-mem $((G / 4)) --output aggregate \
    --repeat 1 --trace "$L/ooc_trace.json"
SLUICE_KEEP_TRACE=1 step trace.txt 60 $B/tests/test_gpu_exec trace_shows_copies_overlapping_kernels
f=$(grep -o '/tmp/sluice_gpu_trace_[A-Za-z0-9]*' "$L/trace.txt" | head -1)
[[ -n $f ]] && cp "$f" "$L/exec_overlap.json"
for t in demo_gpu ooc_trace exec_overlap; do
    [[ -f $L/$t.json ]] && $S trace-render "$L/$t.json" -o "$L/$t.svg" > /dev/null 2>&1
done
ls "$L"/*.svg
pack_logs
