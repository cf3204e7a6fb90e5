#!/usr/bin/env bash
# Session 4, sixth call: where the ~1.4 ms of a GPU-resident join outside its finalize go
# (engine_other in bench join): a trace of the narrow join and an nsys CUDA API summary.
#   there (carry .carry-f): bash bench/gpu/s4f_run.sh
set -u
BUDGET=150 source bench/gpu/final3_common.sh
J="bench join --build-rows 2^27 --probe-rows 2^27 --payloads 1 --placement gpu --resident device --algo radix --json"
step trace.txt 40 $S $J --repeat 2 --trace $L/narrow_trace.json
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS" >> $L/trace.txt
[[ -n $NSYS ]] && step nsys.txt 80 $NSYS profile -t cuda,osrt,nvtx -o $L/narrow --stats=true --force-overwrite true $S $J --repeat 2
rm -f $L/*.nsys-rep $L/*.sqlite
pack_logs
