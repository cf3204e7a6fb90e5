#!/bin/bash
# Packs what bench/gpu/joinop_run.sh needs on the GPU machine into .carry-joinop/ (git-
# ignored), compressed: the GPU join test binaries, the sluice CLI with libsluice and its
# Debian libraries (only these: the whole pack of scripts/pack_for_gpu.sh is over the
# carry limit). BUILD_DIR: a release CUDA build (default build-gpu), built here first.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${BUILD_DIR:-build-gpu}
c=.carry-joinop
ninja -C "$b" -j2 cli/sluice tests/test_gpu_join_op tests/test_gpu_join_ext tests/test_gpu_join
rm -rf "$c" && mkdir -p "$c/bin" "$c/lib"
cp "$b/cli/sluice" "$b/tests/test_gpu_join_op" "$b/tests/test_gpu_join_ext" \
    "$b/tests/test_gpu_join" "$c/bin/"
cp -L "$b/libsluice.so.0" "$c/lib/"
for l in libjemalloc.so.2 libck.so.0 libnuma.so.1 libcmocka.so.0; do
    cp -L "/usr/lib/x86_64-linux-gnu/$l" "$c/lib/"
done
strip --strip-debug "$c"/bin/* "$c"/lib/* 2>/dev/null || true
tar cJf "$c/carry.txz" -C "$c" bin lib && rm -rf "$c/bin" "$c/lib"
cp bench/gpu/joinop_run.sh "$c/"
git rev-parse --short HEAD > "$c/commit.txt"
du -sh "$c"
