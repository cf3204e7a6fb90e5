#!/bin/bash
# Builds the GPU aggregate's kernels, launchers, host driver and gpu_agg_bench for the CPU
# emulation in this folder and runs `gpu_agg_bench check SCALE` (default 0.01): a check of
# the logic (hashing, tables, growth and replay, partitioning, rounds, outputs, nulls,
# overflow) without a GPU. Not a substitute for the GPU run (warps, memory model, speed).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT_DIR:-/tmp/sluice_agg_emu}
mkdir -p "$out"
em=bench/gpu/emu
rewrite() {  # CUDA source -> C++ for the emulation
    python3 - "$1" "$2" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r'#include <cub/[^>]*>', '', s)
s = s.replace('extern __shared__ __align__(16) char agg_smem[];', '#define agg_smem emu_smem')
s = re.sub(r'([\w:]+(?:<[^<>;]*>)?)<<<(.*?)>>>\s*\((.*?)\);',
           lambda m: 'emu_launch(%s, [&] { %s(%s); });' % (m.group(2), m.group(1), m.group(3)),
           s, flags=re.S)
s = '#include "emu.hpp"\n' + s
open(sys.argv[2], 'w').write(s)
PY
}
rewrite kernels/aggregate/aggregate_launch.cu "$out/aggregate_launch.cpp"
for f in kernels/aggregate/*.cuh; do rewrite "$f" "$out/$(basename "$f")"; done
rewrite bench/gpu/gpu_agg_bench.cu "$out/gpu_agg_bench.cpp"
sed -i 's|#include "../../operators/aggregate/agg_gpu.h"|#include "agg_gpu.h"|' "$out/gpu_agg_bench.cpp"
inc="-I $em -I $out -I kernels/include -I operators/aggregate"
${CXX:-g++} -std=c++17 -O1 -g -pthread ${EMU_CFLAGS:-} $inc -w -o "$out/gpu_agg_bench_emu" \
    "$out/aggregate_launch.cpp" "$out/gpu_agg_bench.cpp" $em/emu.cpp \
    -x c operators/aggregate/agg_gpu.c -lm ${EMU_CFLAGS:-}
"$out/gpu_agg_bench_emu" check "${1:-0.01}"
