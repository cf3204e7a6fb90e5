#!/usr/bin/env bash
# Reruns tests with a configuration from tests/configs/ (see its README):
#   scripts/test_config.sh CONFIG [BUILDDIR] [SUITE...]
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1
cfg=tests/configs/$name.env
[[ -f $cfg ]] || { echo "no such config: $cfg" >&2; exit 2; }
builddir=${2:-build}
shift $(($# >= 2 ? 2 : 1))
set -a
# shellcheck disable=SC1090
source "$cfg"
SLUICE_TEST_CONFIG=$name # unit test config_stage: this configuration must change something
set +a
suites=()
for s in "$@"; do suites+=(--suite "$s"); done
meson test -C "$builddir" --num-processes 2 --print-errorlogs --logbase "testlog-$name" "${suites[@]}"
