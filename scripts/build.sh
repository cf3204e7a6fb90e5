#!/usr/bin/env bash
# Configures (first time) and builds a build directory, reusing it afterwards.
#
#   scripts/build.sh [BUILDDIR] [MESON OPTIONS...]
#
# BUILDDIR defaults to build/. Options (-Dcuda=disabled, -Db_sanitize=address, ...) are
# given to `meson setup` the first time and to `meson configure` on a reused directory.
set -euo pipefail
cd "$(dirname "$0")/.."

builddir=build
if (($#)) && [[ $1 != -* ]]; then
    builddir=$1
    shift
fi

if [[ -f $builddir/meson-private/coredata.dat ]]; then
    if (($#)) && ! meson configure "$builddir" "$@"; then
        echo "build: reconfiguring $builddir failed; wiping it" >&2
        meson setup --wipe "$builddir" "$@"
    fi
else
    meson setup "$builddir" "$@"
fi
meson compile -C "$builddir"
