#!/usr/bin/env bash
# Runs the tests and benchmarks of a packed CUDA build on a GPU machine; also packs that
# build small enough to carry there. One script for every device run (the per-run scripts
# of earlier sessions are in git history).
#
# Here, after scripts/pack_for_gpu.sh has filled .carry/:
#   bench/device_run.sh --pack DIR
#       keeps only what a device run needs (the GPU tests, the CLI, the bench programs, the
#       libraries and run_tests.sh), with the commit, xz-compressed into DIR/carry.txz.
# There, from the repository root with DIR carried:
#   bench/device_run.sh [--carry DIR] [--budget SECONDS] [--tests SUITE]...
#                       [--sanitize TOOL TEST CASE]... [--bench AREA|SPEC]... [--device gpu|cpu]
#   --tests SUITE        every test case of a meson suite (gpu, unit, ...; "all" for every one)
#   --sanitize T B C     compute-sanitizer --tool T (memcheck, racecheck, ...) on case C of
#                        tests/B, or on all of its cases with C = all
#   --bench X            the specs of area X, or spec X (bench/specs/), through bench/run.py
#   --device D           only specs for device D (default gpu)
#   --budget S           overall limit (default 540 s); steps are cut to what is left
# Output under $OUT (default ./device-out): logs/*.txt and results/run-*.json. Back here:
# copy results/*.json into bench/results/ and run `bench/run.py --report-only`.
# Example: bench/device_run.sh --carry .carry-x --tests gpu --bench join --bench sort.gpu.pairs
set -u
cd "$(dirname "$0")/.." || exit 1

pack() {
    local dir=$1
    [[ -d .carry/build-gpu ]] || { echo "device_run: no .carry/build-gpu (run scripts/pack_for_gpu.sh)" >&2; return 1; }
    git rev-parse --short HEAD > .carry/commit.txt 2>/dev/null || echo unknown > .carry/commit.txt
    git diff --quiet HEAD 2>/dev/null || sed -i 's/$/+changes/' .carry/commit.txt
    find .carry/build-gpu -type f ! -path '*/tests/test_gpu_*' ! -path '*/cli/sluice' \
        ! -path '*/bench/*' -delete
    rm -rf "$dir" && mkdir -p "$dir"
    # One stream with a dictionary larger than a test binary: every binary links the same
    # kernels, so the copies after the first cost almost nothing (1.2 GB -> 8 MB).
    tar cf - .carry | xz -T1 --lzma2=preset=2,dict=256MiB > "$dir/carry.txz"
    local st=("${PIPESTATUS[@]}")
    ((st[0] == 0 && st[1] == 0)) || { echo "device_run: packing failed (tar ${st[0]}, xz ${st[1]}: disk full?)" >&2; return 1; }
    [[ -f .carry/lib/libsluice.so.0 ]] || { echo "device_run: .carry/lib/libsluice.so.0 missing: run scripts/pack_for_gpu.sh again" >&2; return 1; }
    local size; size=$(stat -c %s "$dir/carry.txz")
    if ((size >= 60 * 1024 * 1024)); then
        echo "device_run: $dir/carry.txz is $((size >> 20)) MiB, over the 60 MiB budget (the carry limit is 64)" >&2
        return 1
    fi
    du -sh "$dir"
}

if [[ ${1:-} == --pack ]]; then
    pack "${2:?usage: bench/device_run.sh --pack DIR}"
    exit
fi

carry="" budget=540 device=gpu tests=() benches=() sanitize=()
while (($#)); do
    case $1 in
        --carry) carry=$2; shift 2 ;;
        --budget) budget=$2; shift 2 ;;
        --tests) tests+=("$2"); shift 2 ;;
        --bench) benches+=("$2"); shift 2 ;;
        --device) device=$2; shift 2 ;;
        --sanitize) sanitize+=("$2 $3 $4"); shift 4 ;;
        -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "device_run: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

OUT=${OUT:-./device-out}
L=$OUT/logs
mkdir -p "$L" "$OUT/results"
if [[ -n $carry && -f $carry/carry.txz ]]; then
    rm -rf .carry && xz -dc "$carry/carry.txz" | tar xf - || exit 1
fi
[[ -d .carry/build-gpu ]] || { echo "device_run: no packed build in .carry/" >&2; exit 1; }
# shellcheck source=scripts/on_gpu_env.sh
source scripts/on_gpu_env.sh
B=.carry/build-gpu
export SLUICE_TEST=1
END=$((SECONDS + budget))
{ date -u; nvidia-smi -L 2>&1 || echo "no nvidia-smi"
  echo "commit $(cat .carry/commit.txt 2>/dev/null)"; } > "$L/device.txt" 2>&1
cat "$L/device.txt"

# step LOG SECONDS COMMAND...: runs a command within what is left of the budget.
step() {
    local log=$1 limit=$2; shift 2
    local left=$((END - SECONDS))
    ((left < 5)) && { echo "=== skipped, no time left: $*" | tee -a "$L/$log"; return 124; }
    ((limit > left)) && limit=$left
    echo "=== $* (limit ${limit}s)" >> "$L/$log"
    local t0=$SECONDS rc
    timeout "$limit" "$@" >> "$L/$log" 2>&1
    rc=$?
    echo "=== exit $rc after $((SECONDS - t0))s" | tee -a "$L/$log"
    return $rc
}

status=0
for s in "${tests[@]}"; do
    suite=$s; [[ $s == all ]] && suite=""
    # shellcheck disable=SC2086 # an empty suite means every suite
    step "tests_$s.txt" "$budget" bash .carry/run_tests.sh $suite || status=1
    grep -E "^FAIL|passed" "$L/tests_$s.txt" | tail -20
done
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for s in "${sanitize[@]}"; do
    read -r tool bin case <<< "$s"
    [[ $case == all ]] && case=""
    # shellcheck disable=SC2086 # no case: every case of the binary
    step sanitize.txt 300 "$san" --tool "$tool" --error-exitcode 9 "$B/tests/$bin" $case || status=1
done
[[ ${#sanitize[@]} -gt 0 ]] && grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$L/sanitize.txt"
if ((${#benches[@]})); then
    args=()
    for b in "${benches[@]}"; do args+=(--match "$b"); done
    step bench.txt "$budget" python3 bench/run.py --build "$B" --device "$device" \
        --results "$OUT/results" --report "$OUT/RESULTS.md" \
        --commit "$(cat .carry/commit.txt 2>/dev/null || echo unknown)" "${args[@]}" || status=1
    grep -E "^(OK|FAIL) " "$L/bench.txt"
fi
exit $status
