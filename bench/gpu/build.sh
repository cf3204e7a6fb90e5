#!/bin/sh
# Builds the standalone GPU join benchmark (no meson, no other part of the tree):
#   bench/gpu/build.sh [outdir]    (default .carry/gpu, git-ignored; run from the repo root)
set -e
cd "$(dirname "$0")/../.."
out=${1:-.carry/gpu}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
$NVCC -O3 -std=c++17 -arch=sm_90 -lineinfo -I kernels/include \
    bench/gpu/gpu_join_bench.cu kernels/partition/partition_launch.cu kernels/join/join_launch.cu \
    -o "$out/gpu_join_bench"
echo "built $out/gpu_join_bench"
