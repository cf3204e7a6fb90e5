#!/usr/bin/env bash
# Sets up, builds and runs every test, then prints `N passed, N failed, N skipped`.
#
#   scripts/test.sh [BUILDDIR] [MESON TEST ARGS...]
#
# BUILDDIR defaults to build/ (configured with the defaults: CUDA when nvcc is found).
# Extra arguments go to `meson test`, e.g. `scripts/test.sh build --suite unit`.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

builddir=build
if (($#)) && [[ $1 != -* ]]; then
    builddir=$1
    shift
fi

# The no-GPU tests run only where no GPU is expected (see tests/integration/embed).
if [[ -z ${SLUICE_EXPECT_NO_GPU:-} ]] && ! compgen -G '/dev/nvidia[0-9]*' >/dev/null; then
    export SLUICE_EXPECT_NO_GPU=1
fi

scripts/setup.sh || exit 1
scripts/build.sh "$builddir" || exit 1

rm -f "$builddir/meson-logs/testlog.json"
meson test -C "$builddir" --num-processes 2 --print-errorlogs "$@"
rc=$?
python3 scripts/testlog_summary.py "$builddir/meson-logs/testlog.json" || rc=1
exit $rc
