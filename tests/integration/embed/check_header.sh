#!/usr/bin/env bash
# Compiles one public header alone, included twice (to exercise its guard), as C or C++
# with warnings as errors.
#
#   check_header.sh c|c++ INCLUDE_DIR HEADER COMPILER [ARGS...]
#
# Exit 77 (skipped) when no compiler for the language was found.
set -euo pipefail
lang=$1 incdir=$2 header=$3
shift 3
if (($# == 0)) || ! command -v "$1" >/dev/null; then
    echo "no $lang compiler"
    exit 77
fi
case $lang in
    c) flags=(-x c -std=c17 -Wstrict-prototypes -Wmissing-prototypes) ;;
    c++) flags=(-x c++ -std=c++17) ;;
    *) echo "unknown language $lang" >&2; exit 2 ;;
esac
src=$(printf '#include <sluice/%s>\n#include <sluice/%s>\n' "$header" "$header")
echo "$src" | "$@" "${flags[@]}" -Wall -Wextra -Wpedantic -Werror -fsyntax-only \
    -I "$incdir" -
echo "ok: sluice/$header compiles alone as $lang"
