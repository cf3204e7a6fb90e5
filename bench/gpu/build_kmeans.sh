#!/bin/sh
# Builds the standalone GPU k-means check/benchmark (no meson):
#   bench/gpu/build_kmeans.sh [outdir]    (default .carry/gpu; run from anywhere)
# gpu_kmeans_bench: the kernels as the library builds them; gpu_kmeans_bench_shared: the
# fused kernels with one block-wide copy of the partial sums (shared atomics) instead of
# one per warp, to compare.
set -e
cd "$(dirname "$0")/../.."
out=${1:-.carry/gpu}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
$NVCC -O3 -std=c++17 -arch=sm_90 -lineinfo -I kernels/include \
    bench/gpu/gpu_kmeans_bench.cu kernels/kmeans/kmeans_launch.cu -o "$out/gpu_kmeans_bench"
$NVCC -O3 -std=c++17 -arch=sm_90 -lineinfo -I kernels/include -DSL_K_KMEANS_PRIVATE_SUMS=0 \
    bench/gpu/gpu_kmeans_bench.cu kernels/kmeans/kmeans_launch.cu -o "$out/gpu_kmeans_bench_shared"
echo "built $out/gpu_kmeans_bench and gpu_kmeans_bench_shared"
