#!/bin/bash
# Packs what bench/gpu/run_agg.sh needs on the GPU machine into .carry-gpuagg/ (git-
# ignored): the standalone check/bench, the GPU test binary, the sluice CLI with
# libsluice and its Debian libraries, and the run script. BUILD_DIR: a CUDA build
# (default build-gpu); the standalone binary comes from bench/gpu/build_agg.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${BUILD_DIR:-build-gpu}
c=.carry-gpuagg
rm -rf "$c" && mkdir -p "$c/bin" "$c/lib"
cp "$b/aggb/gpu_agg_bench" "$b/tests/test_gpu_aggregate" "$b/cli/sluice" "$c/bin/"
cp -L "$b/libsluice.so.0" "$c/lib/"
for l in libjemalloc.so.2 libck.so.0 libnuma.so.1 libcmocka.so.0; do
    cp -L "/usr/lib/x86_64-linux-gnu/$l" "$c/lib/"
done
strip --strip-debug "$c"/bin/* "$c"/lib/* 2>/dev/null || true
# Compressed (the carry limit): run_agg.sh unpacks it there.
tar cJf "$c/carry.txz" -C "$c" bin lib && rm -rf "$c/bin" "$c/lib"
cp bench/gpu/run_agg.sh "$c/"
du -sh "$c"
