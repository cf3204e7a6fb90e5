#!/usr/bin/env bash
# Packs what bench/gpu/aggperf_run.sh needs (the sluice command, test_gpu_aggregate,
# gpu_agg_bench, libsluice and its Debian libraries), xz-compressed, into DIR.
#   bash bench/gpu/aggperf_pack.sh DIR [BUILD_DIR] [AGGB_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:?usage: aggperf_pack.sh DIR [BUILD_DIR] [AGGB_DIR]}
bd=${2:-build-gpu}
ab=${3:-/tmp/aggb}
sysdir=/usr/lib/x86_64-linux-gnu
tmp=$(mktemp -d)
mkdir -p "$tmp/.carry/lib" "$tmp/.carry/build-gpu/cli" "$tmp/.carry/build-gpu/tests" "$tmp/.carry/aggb"
cp -L "$bd/libsluice.so.0" "$tmp/.carry/lib/"
for l in libjemalloc.so.2 libck.so.0 libnuma.so.1 libcmocka.so.0; do cp -L "$sysdir/$l" "$tmp/.carry/lib/"; done
cp "$bd/cli/sluice" "$tmp/.carry/build-gpu/cli/"
cp "$bd/tests/test_gpu_aggregate" "$tmp/.carry/build-gpu/tests/"
cp "$ab/gpu_agg_bench" "$tmp/.carry/aggb/"
strip --strip-debug "$tmp"/.carry/lib/* "$tmp"/.carry/build-gpu/*/* "$tmp"/.carry/aggb/* 2>/dev/null || true
rm -rf "$dir" && mkdir -p "$dir"
(cd "$tmp" && tar cf - .carry) | xz -T2 -6 > "$dir/carry.txz"
cp bench/gpu/aggperf_run.sh "$dir/"
rm -rf "$tmp"
du -sh "$dir"
