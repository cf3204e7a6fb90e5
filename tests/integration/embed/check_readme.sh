#!/usr/bin/env bash
# Follows README.md's "Embedding" section as a new user would: the program it shows
# (app.c) and the shell steps after it, run verbatim from the README text, against a
# fresh build directory of this source tree and a scratch $HOME (so the install goes to
# a scratch prefix). The program must print what the README says it prints. Then the
# static link the README mentions (libsluice.a + pkg-config --static), which must run
# without libsluice.so.
#
#   check_readme.sh SOURCEDIR SANITIZE
#
# The fresh build is `scripts/build.sh DIR -Dcuda=disabled -Dtests=false` (the README's
# build, without the CUDA kernels and the tests, to keep this test to a few minutes).
# Skipped (77) in sanitizer builds: the `test` stage of .ci/run runs it.
set -euo pipefail
srcdir=$1 sanitize=$2
[[ $sanitize == none || -z $sanitize ]] || { echo "skipped under $sanitize"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
readme=$srcdir/README.md

# The first ```c block and the first ```sh block after "## Embedding".
section=$(sed -n '/^## Embedding$/,/^## [^E]/p' "$readme")
awk '/^```c$/ {on = 1; next} on && /^```$/ {exit} on' <<<"$section" >"$tmp/app.c"
awk '/^```sh$/ {on = 1; next} on && /^```$/ {exit} on' <<<"$section" >"$tmp/steps.sh"
want=$(sed -n 's/^It prints `\([^`]*\)`.*/\1/p' <<<"$section")
[[ -s $tmp/app.c && -s $tmp/steps.sh && -n $want ]] ||
    { echo "FAIL: README.md's Embedding section lacks the program, the steps or 'It prints'"; exit 1; }
echo "--- the README's steps:"; cat "$tmp/steps.sh"

# "After the two commands above": a build directory named build, next to app.c.
(cd "$srcdir" && scripts/build.sh "$tmp/build" -Dcuda=disabled -Dtests=false) \
    >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; echo "FAIL: the build"; exit 1; }

mkdir -p "$tmp/home"
out=$(cd "$tmp" && HOME=$tmp/home PKG_CONFIG_PATH= LD_LIBRARY_PATH= bash -e steps.sh 2>&1) ||
    { echo "$out"; echo "FAIL: the README's steps"; exit 1; }
last=$(tail -1 <<<"$out")
echo "--- ./app printed: $last"
[[ $last == "$want" ]] || { echo "$out"; echo "FAIL: want '$want'"; exit 1; }

# The static link the README names: libsluice.a with pkg-config --static.
prefix=$tmp/home/.local/sluice
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[[ -f $prefix/lib/libsluice.a ]] || { echo "FAIL: no $prefix/lib/libsluice.a"; exit 1; }
# shellcheck disable=SC2046 # flags are words
cc -o "$tmp/app_static" "$tmp/app.c" $(pkg-config --cflags sluice) -l:libsluice.a \
    -Wl,--as-needed $(pkg-config --static --libs sluice) ||
    { echo "FAIL: static link with pkg-config --static"; exit 1; }
if command -v ldd >/dev/null && ldd "$tmp/app_static" | grep -q libsluice; then
    ldd "$tmp/app_static"; echo "FAIL: the static program still needs libsluice.so"; exit 1
fi
got=$("$tmp/app_static")
[[ $got == "$want" ]] || { echo "FAIL: static program printed '$got'"; exit 1; }
echo "ok: README.md's embedding steps build and run the program (shared and static)"
