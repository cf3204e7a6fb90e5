#!/usr/bin/env bash
# Installs what sluice needs to build and test, from Debian packages (and, for the
# tests that compare with pyarrow/duckdb, from PyPI). Idempotent: when everything is
# present it only checks and returns in about a second. Runs as root (CI) or through
# sudo. Prints what it did.
set -euo pipefail

packages=(meson ninja-build pkg-config gcc g++ libck-dev libjemalloc-dev libnuma-dev
          libcmocka-dev python3 python3-pip clang libclang-rt-dev
          libopenmpi-dev openmpi-bin)  # MPI: the exchange between ranks (docs/DISTRIBUTED.md)
python_modules=(pyarrow duckdb)
python_tools=(tpchgen-cli)   # TPC-H data for tests and benchmarks (a program, not a module)

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
    sudo=()
    if [[ $(id -u) != 0 ]]; then
        if command -v sudo >/dev/null; then
            sudo=(sudo)
        else
            echo "setup: missing packages: ${missing[*]}; run as root or install them" >&2
            exit 1
        fi
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "setup: installed ${missing[*]}"
else
    echo "setup: Debian packages present (${packages[*]})"
fi

# Python modules are used only by tests that compare with other Arrow producers; those
# tests skip when the modules are missing, so a failed install is a warning, not an error.
py_missing=()
for m in "${python_modules[@]}"; do
    python3 -c "import $m" 2>/dev/null || py_missing+=("$m")
done
for t in "${python_tools[@]}"; do
    command -v "$t" >/dev/null || py_missing+=("$t")
done
if ((${#py_missing[@]})); then
    echo "setup: pip installing ${py_missing[*]} (for tests only)"
    pip=(python3 -m pip install --quiet --disable-pip-version-check)
    if "${pip[@]}" "${py_missing[@]}" 2>/dev/null ||
       "${pip[@]}" --break-system-packages "${py_missing[@]}"; then
        echo "setup: pip installed ${py_missing[*]}"
    else
        echo "setup: warning: could not install ${py_missing[*]};" \
             "the tests that need them will skip" >&2
    fi
else
    echo "setup: python modules present (${python_modules[*]} ${python_tools[*]})"
fi
