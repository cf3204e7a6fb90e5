#!/bin/sh
# Builds the standalone GPU k-means check/benchmark (no meson):
#   bench/gpu/build_kmeans.sh [outdir]    (default .carry/gpu; run from anywhere)
set -e
cd "$(dirname "$0")/../.."
out=${1:-.carry/gpu}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
$NVCC -O3 -std=c++17 -arch=sm_90 -lineinfo -I kernels/include \
    bench/gpu/gpu_kmeans_bench.cu kernels/kmeans/kmeans_launch.cu -o "$out/gpu_kmeans_bench"
echo "built $out/gpu_kmeans_bench"
