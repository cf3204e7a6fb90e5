#!/usr/bin/env bash
# Checks the dynamic symbol table of libsluice.so: every defined, exported symbol must
# be public API (sl_ followed by a lowercase letter or digit; sl__ is internal), so
# in particular the library never exports malloc, free or any of jemalloc's functions.
# The only other symbols allowed are the linker's data markers (_edata, _end,
# __bss_start) when they are not functions, and the library's own version nodes.
#
#   check_symbols.sh path/to/libsluice.so
set -euo pipefail
lib=$1
nm_out=$(nm -D --defined-only "$lib")
# Version nodes defined by the library (absolute symbols named like the node).
nodes=$(readelf -V --wide "$lib" | sed -n 's/.*Flags: none.*Name: \([^ ]*\).*/\1/p' | sort -u)

bad=0
n_api=0
while read -r _addr type name; do
    name=${name%%@*}  # nm may print sl_x@@VERSION
    if [[ $name =~ ^sl_[a-z0-9] ]]; then
        n_api=$((n_api + 1))
        continue
    fi
    case $name in
        _edata | _end | __bss_start)
            [[ $type != [TtWwi] ]] && continue ;;
    esac
    if [[ $type == A ]] && grep -qxF "$name" <<<"$nodes"; then
        continue
    fi
    case $name in
        malloc | free | calloc | realloc | reallocarray | posix_memalign | aligned_alloc | \
        memalign | valloc | pvalloc | malloc_usable_size | mallocx | rallocx | xallocx | \
        sallocx | dallocx | sdallocx | nallocx | mallctl* | je_* | _rjem_* | __libc_*)
            echo "FAIL: exports allocator symbol $name ($type)" ;;
        sl__*)
            echo "FAIL: exports internal symbol $name ($type)" ;;
        *)
            echo "FAIL: exports non-API symbol $name ($type)" ;;
    esac
    bad=$((bad + 1))
done <<<"$(awk 'NF == 3' <<<"$nm_out")"

for want in sl_version sl_strerror; do
    if ! awk '{ sub(/@.*/, "", $3); print $3 }' <<<"$nm_out" | grep -qxF "$want"; then
        echo "FAIL: $want is not exported (is this libsluice.so?)"
        bad=$((bad + 1))
    fi
done

echo "$n_api sl_ symbols exported, $bad bad"
((bad == 0))
