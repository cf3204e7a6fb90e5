#!/bin/sh
# Builds the standalone GPU aggregate check/benchmark (no meson; the kernels and the
# operator's host driver only):  bench/gpu/build_agg.sh [outdir]  (default .carry/gpu)
set -e
cd "$(dirname "$0")/../.."
out=${1:-.carry/gpu}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
CUDA_INC=$(dirname "$(command -v $NVCC)")/../include
${CC:-cc} -std=c17 -O2 -Wall -Wextra -I "$CUDA_INC" -I kernels/include \
    -c operators/aggregate/agg_gpu.c -o "$out/agg_gpu.o"
$NVCC -O3 -std=c++17 -arch=sm_90 -lineinfo -I kernels/include \
    bench/gpu/gpu_agg_bench.cu kernels/aggregate/aggregate_launch.cu "$out/agg_gpu.o" \
    -o "$out/gpu_agg_bench"
echo "built $out/gpu_agg_bench"
