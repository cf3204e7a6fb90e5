#!/usr/bin/env bash
# Packs what bench/gpu/oocsort_run.sh needs on the GPU machine into .carry/carry.tar.xz
# (a trimmed scripts/pack_for_gpu.sh: the CLI, the out-of-core sort/SMJ tests, a
# neighbour, libsluice and the Debian libraries), from an already built build-gpu/.
#   here: bench/gpu/oocsort_pack.sh && cp -r .carry /work/main/.carry-oocsort
set -euo pipefail
cd "$(dirname "$0")/../.."
B=build-gpu
rm -rf .carry && mkdir -p .carry/lib .carry/$B/cli .carry/$B/tests
cp $B/cli/sluice .carry/$B/cli/
for t in test_gpu_sort_ooc test_gpu_join_smj_ooc test_gpu_sort_op test_ooc_merge; do
    cp $B/tests/$t .carry/$B/tests/
done
strip --strip-debug .carry/$B/cli/* .carry/$B/tests/* 2>/dev/null || true
cp -L $B/libsluice.so.0 .carry/lib/libsluice.so.0
strip --strip-debug .carry/lib/libsluice.so.0 2>/dev/null || true
for l in libjemalloc.so.2 libck.so.0 libnuma.so.1 libcmocka.so.0; do
    cp -L /usr/lib/x86_64-linux-gnu/$l .carry/lib/$l
done
# Each test binary links the CUDA kernels statically (27 MB): xz keeps the carry small.
(cd .carry && tar cJf carry.tar.xz build-gpu lib && rm -rf build-gpu lib)
du -sh .carry
