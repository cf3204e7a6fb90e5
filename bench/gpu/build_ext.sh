#!/bin/sh
# Builds the standalone check/benchmark of the GFTR/kinds/SMJ/NPJ join kernels:
#   bench/gpu/build_ext.sh [outdir]    (default .carry/gpu; run from anywhere)
set -e
cd "$(dirname "$0")/../.."
out=${1:-.carry/gpu}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
$NVCC -O3 -std=c++17 -arch=sm_90 -lineinfo -I kernels/include \
    bench/gpu/gpu_join_ext_bench.cu kernels/partition/partition_launch.cu \
    kernels/partition/partition_rows.cu kernels/join/join_gftr.cu kernels/join/join_smj.cu \
    kernels/join/join_npj.cu -o "$out/gpu_join_ext_bench"
echo "built $out/gpu_join_ext_bench"
