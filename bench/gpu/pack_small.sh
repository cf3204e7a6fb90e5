#!/usr/bin/env bash
# Packs .carry (from scripts/pack_for_gpu.sh) small enough for a device call: only the GPU
# test executables, the sluice command and the libraries, xz-compressed into DIR/carry.txz.
#   bash bench/gpu/pack_small.sh DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:?usage: pack_small.sh DIR}
find .carry/build-gpu -type f ! -path '*/tests/test_gpu_*' ! -path '*/cli/sluice' \
    ! -path '*/bench/*' -delete
rm -rf "$dir" && mkdir -p "$dir"
tar cf - .carry | xz -T2 -6 > "$dir/carry.txz"
du -sh "$dir"
