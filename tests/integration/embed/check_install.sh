#!/usr/bin/env bash
# Installs the build into a temporary DESTDIR, then builds the examples against
# the installed copy through pkg-config (exactly as an embedder would, with the README's
# `cc ... $(pkg-config --cflags --libs sluice)`), also through examples/Makefile when
# make is present, and runs it with LD_LIBRARY_PATH at the installed library.
#
#   check_install.sh BUILDDIR SOURCEDIR PREFIX LIBDIR VERSION SANITIZE
#
# CC is the C compiler command (meson passes its own). SANITIZE is meson's b_sanitize;
# with a sanitizer the example is built with it too, since the library needs its runtime.
set -euo pipefail
builddir=$1 srcdir=$2 prefix=$3 libdir=$4 version=$5 sanitize=$6
read -r -a cc <<<"${CC:-cc}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root
[[ $libdir == /* ]] || libdir=$prefix/$libdir

# Without --no-rebuild: `meson test` builds only what tests need, and install needs all.
meson install -C "$builddir" --destdir "$dest" --quiet >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }

for f in "$dest$libdir/libsluice.so" "$dest$libdir/pkgconfig/sluice.pc" \
         "$dest$prefix/include/sluice/sluice.h"; do
    [[ -e $f ]] || { echo "FAIL: not installed: ${f#"$dest"}"; exit 1; }
done
for h in "$srcdir"/include/sluice/*.h; do
    cmp -s "$h" "$dest$prefix/include/sluice/${h##*/}" ||
        { echo "FAIL: header ${h##*/} not installed or differs"; exit 1; }
done

# The .pc file names the real prefix; the sysroot maps it into DESTDIR.
export PKG_CONFIG_PATH=$dest$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest

got=$(pkg-config --modversion sluice)
[[ $got == "$version" ]] || { echo "FAIL: pkg-config --modversion: $got, want $version"; exit 1; }
flags=$(pkg-config --cflags --libs sluice)
echo "pkg-config --cflags --libs sluice: $flags"

extra=()
[[ $sanitize == none || -z $sanitize ]] || extra=(-fsanitize="$sanitize")
# shellcheck disable=SC2086 # flags are words
"${cc[@]}" -std=c17 -Wall -Wextra -Werror "${extra[@]}" -o "$tmp/embed_sum" \
    "$srcdir/examples/embed_sum.c" $flags

if command -v make >/dev/null; then
    mkdir -p "$tmp/ex/plugin"
    cp "$srcdir/examples/Makefile" "$srcdir/examples/embed_sum.c" "$tmp/ex/"
    cp "$srcdir/examples/plugin/topk.c" "$tmp/ex/plugin/"
    make -s -C "$tmp/ex" CC="${cc[*]}" CFLAGS="-O2 -Wall -Wextra -Werror ${extra[*]}" \
        LDFLAGS="${extra[*]}" embed_sum plugin/topk.so
fi

export LD_LIBRARY_PATH=$dest$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=$("$tmp/embed_sum" 1000000)
echo "embed_sum: $out"
[[ $out == "count=1000000 sum=499999500000" ]] || { echo "FAIL: unexpected output"; exit 1; }
# The program must have used the installed library, not the build tree's.
if command -v ldd >/dev/null; then
    deps=$(ldd "$tmp/embed_sum")
    [[ $deps == *"$dest$libdir/libsluice.so"* ]] ||
        { echo "$deps"; echo "FAIL: not linked to the installed libsluice"; exit 1; }
fi
if [[ -x $tmp/ex/embed_sum ]]; then
    out=$("$tmp/ex/embed_sum" 1000)
    [[ $out == "count=1000 sum=499500" ]] || { echo "FAIL: Makefile build: $out"; exit 1; }
fi
# A static link: the archive plus pkg-config --static (with CUDA, the static CUDA runtime
# from the .pc's cuda_libdir, an absolute path that a sysroot must not prefix: so the
# prefix is redefined here instead).
static_pc=(env PKG_CONFIG_SYSROOT_DIR= pkg-config --define-variable=prefix="$dest$prefix")
# shellcheck disable=SC2046 # flags are words
"${cc[@]}" -std=c17 -Wall -Wextra -Werror "${extra[@]}" -o "$tmp/embed_sum_static" \
    "$srcdir/examples/embed_sum.c" $("${static_pc[@]}" --cflags sluice) -l:libsluice.a \
    -Wl,--as-needed $("${static_pc[@]}" --static --libs sluice) ||
    { echo "FAIL: static link with pkg-config --static"; exit 1; }
if command -v ldd >/dev/null && ldd "$tmp/embed_sum_static" | grep -q libsluice; then
    echo "FAIL: the statically linked program needs libsluice.so"; exit 1
fi
out=$("$tmp/embed_sum_static" 1000)
[[ $out == "count=1000 sum=499500" ]] || { echo "FAIL: static embed_sum: $out"; exit 1; }
# The other examples: a join through the API, Arrow arrays in and out, a plan file.
# Every examples/*.c is built and run here: a new one must be added to this list.
examples="embed_sum embed_join arrow_in_out run_plan use_plugin"
for f in "$srcdir"/examples/*.c; do
    f=${f##*/}
    [[ " $examples " == *" ${f%.c} "* ]] || { echo "FAIL: examples/$f is not run here"; exit 1; }
done
for ex in embed_join arrow_in_out run_plan use_plugin; do
    # shellcheck disable=SC2086 # flags are words
    "${cc[@]}" -std=c17 -Wall -Wextra -Werror "${extra[@]}" -o "$tmp/$ex" \
        "$srcdir/examples/$ex.c" $flags
done
out=$("$tmp/embed_join" 100000)
[[ $out == "count=100000" ]] || { echo "FAIL: embed_join: $out"; exit 1; }
out=$("$tmp/arrow_in_out")
[[ $out == "count=4 sum=10" ]] || { echo "FAIL: arrow_in_out: $out"; exit 1; }
out=$("$tmp/run_plan" "$srcdir/plans/files/sequence_sum.plan")
[[ $out == "result: 1 rows" ]] || { echo "FAIL: run_plan: $out"; exit 1; }
# A plugin built against the installed headers alone (it links no sluice symbol).
# shellcheck disable=SC2086 # flags are words
"${cc[@]}" -std=c17 -shared -fPIC -Wall -Wextra -Werror "${extra[@]}" -o "$tmp/topk.so" \
    "$srcdir/examples/plugin/topk.c" $(pkg-config --cflags sluice)
want="top5: 999999 999998 999997 999996 999995"
out=$("$tmp/use_plugin" "$tmp/topk.so")
[[ $out == "$want" ]] || { echo "FAIL: use_plugin: $out"; exit 1; }
if [[ -f $tmp/ex/plugin/topk.so ]]; then
    out=$("$tmp/use_plugin" "$tmp/ex/plugin/topk.so")
    [[ $out == "$want" ]] || { echo "FAIL: use_plugin with the Makefile's plugin: $out"; exit 1; }
fi
echo "ok: installed sluice $version builds and runs the examples through pkg-config"
