#!/usr/bin/env bash
# Runs the GPU tests of a sluice build on a machine with a GPU, then compute-sanitizer
# memcheck on the gpu_runtime test binary. Logs go under $OUT (default ./gpu-check-out).
#
#   bench/gpu_check.sh [BUILD_DIR]        (default: build-cuda)
#
# The build is carried to the GPU machine as it is; the caller sets LD_LIBRARY_PATH for
# the libraries it needs there (cmocka, ck, jemalloc, numa). meson is not needed: each
# case of each tests/test_gpu_* binary runs in its own process, as meson would run it
# (exit 0 = pass, 77 = skipped). Exit status: 0 when nothing failed.
#
# Environment: OUT (log folder), CASE_TIMEOUT (seconds per case, default 300),
# SANITIZER_TOOLS (default "memcheck"; e.g. "memcheck racecheck synccheck"),
# COMPUTE_SANITIZER (path, if not on PATH or under /usr/local/cuda).
set -u
BUILD=${1:-build-cuda}
OUT=${OUT:-./gpu-check-out}
CASE_TIMEOUT=${CASE_TIMEOUT:-300}
SANITIZER_TOOLS=${SANITIZER_TOOLS:-memcheck}
mkdir -p "$OUT/cases" "$OUT/sanitizer"
export SLUICE_TEST=1

log() { echo "gpu_check: $*" | tee -a "$OUT/summary.txt"; }

: > "$OUT/summary.txt"
log "build $BUILD on $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
    nvidia-smi -L 2>&1 | tee -a "$OUT/summary.txt"
else
    log "nvidia-smi not found"
fi

shopt -s nullglob
bins=("$BUILD"/tests/test_gpu_*)
if [ ${#bins[@]} -eq 0 ]; then
    log "no test binaries under $BUILD/tests (test_gpu_*): was it built with CUDA?"
    exit 2
fi

pass=0 fail=0 skip=0
for bin in "${bins[@]}"; do
    [ -f "$bin" ] && [ -x "$bin" ] || continue
    name=$(basename "$bin")
    if ! cases=$("$bin" --list 2> "$OUT/cases/$name.list.err"); then
        log "FAIL $name --list (see cases/$name.list.err)"
        fail=$((fail + 1))
        continue
    fi
    for c in $cases; do
        logf="$OUT/cases/$name.$c.log"
        timeout "$CASE_TIMEOUT" "$bin" "$c" > "$logf" 2>&1
        rc=$?
        case $rc in
        0) pass=$((pass + 1)); log "ok   $name $c" ;;
        77) skip=$((skip + 1)); log "skip $name $c: $(grep -m1 '^SKIP' "$logf")" ;;
        *) fail=$((fail + 1)); log "FAIL $name $c (exit $rc, see cases/$name.$c.log)" ;;
        esac
    done
done
log "tests: $pass passed, $fail failed, $skip skipped"

san=${COMPUTE_SANITIZER:-}
if [ -z "$san" ]; then
    san=$(command -v compute-sanitizer || true)
fi
for cand in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    if [ -z "$san" ] && [ -x "$cand" ]; then
        san=$cand
    fi
done
target="$BUILD/tests/test_gpu_runtime"
if [ -z "$san" ]; then
    log "compute-sanitizer not found: sanitizer runs skipped"
elif [ ! -x "$target" ]; then
    log "no $target: sanitizer runs skipped"
else
    for tool in $SANITIZER_TOOLS; do
        extra=()
        [ "$tool" = memcheck ] && extra=(--leak-check full)
        # All cases in one process (the binary's no-argument mode).
        timeout $((CASE_TIMEOUT * 4)) "$san" --tool "$tool" "${extra[@]}" --error-exitcode 99 \
            --log-file "$OUT/sanitizer/$tool.log" "$target" > "$OUT/sanitizer/$tool.out" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
            log "ok   compute-sanitizer $tool"
        else
            fail=$((fail + 1))
            log "FAIL compute-sanitizer $tool (exit $rc, see sanitizer/$tool.log and .out)"
        fi
        tail -n 3 "$OUT/sanitizer/$tool.log" >> "$OUT/summary.txt" 2>/dev/null
    done
fi

log "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
