#!/usr/bin/env bash
# The out-of-core sort's faster merges (issue 8, branch oocsort2) on the device: first
# `sluice bench sort` of 2^28 int32 (key, value) pairs from pinned host memory with the
# GPU budget at 1/2, 1/4 and 1/16 of the data (2 GiB), phases and the link floor of the
# same run, by default and with each merge forced; then the tests: both merges forced,
# the merge unit test, the out-of-core sort GPU tests and the SMJ ones (the SMJ shares
# the range sort), compute-sanitizer memcheck on a small case and racecheck on a tiny
# one; then the SMJ 2^26 x 2^26 at 1/4 and the CPU sort if time is left.
#   here: bench/gpu/oocsort_pack.sh && rm -rf /work/main/.carry-oocsort2 &&
#         cp -r .carry /work/main/.carry-oocsort2
#   (and cp bench/gpu/oocsort2_run.sh /work/main/.carry-oocsort2/: the device gets main's tree)
#   there (carry .carry-oocsort2): mv .carry-oocsort2 .carry && bash .carry/oocsort2_run.sh
set -u
END=$((SECONDS + ${OOCSORT_SECONDS:-222}))   # leave time to pack the logs
left() { ((SECONDS + ${1:-20} < END)); }   # priorities first: later steps drop when short
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
[[ -f .carry/carry.tar.xz ]] && (cd .carry && tar xJf carry.tar.xz && rm carry.tar.xz)
source scripts/on_gpu_env.sh
B=.carry/build-gpu
{ date -u; nvidia-smi -L; nproc; lscpu | grep -i "model name\|L2\|L3"; $B/cli/sluice devices; } > "$L/devices.txt" 2>&1
head -6 "$L/devices.txt"
cases() { # cases BINARY TIMEOUT CASE...
    local bin=$1 tmo=$2 c; shift 2
    for c in "$@"; do
        left 15 || { echo "skipped (time): $c"; continue; }
        local t0=$SECONDS
        timeout "$tmo" "$B/tests/$bin" "$c" >> "$L/$bin.txt" 2>&1
        echo "$bin $c: exit $? ($((SECONDS - t0)) s)"
    done
}
S="$B/cli/sluice bench sort --json --rows 2^28 --key-bytes 4 --payloads 1"
bench() { # bench LOGNAME ARGS...
    local name=$1; shift
    left 30 || { echo "== skipped (time): $*"; return; }
    echo "== $*"
    timeout $((END - SECONDS > 60 ? 60 : END - SECONDS - 5)) "$@" > "$L/$name.txt" 2>&1
    tail -n 1 "$L/$name.txt" | python3 -c 'import json,sys
for l in sys.stdin:
    try: j=json.loads(l)
    except Exception: print(l.strip()[:300]); continue
    print({k: j.get(k) for k in ("time_ms","min_ms","max_ms","output_rows","peak_device_bytes","link_floor_ms","x_link_floor","ooc_floor_ms","threads","phases")})'
}
D=$((2 * 1024 * 1024 * 1024))   # 2^28 x 8 bytes
# The numbers first: the default (GPU merge up to 64 runs, else the CPU merge), then
# each merge forced (SLUICE_OOC_SORT_MERGE), then the tests.
for f in 2 4 16; do bench sort_gpu_ooc_$f $S --placement gpu --repeat 5 --gpu-mem $((D / f)); done
for f in 2 4 16; do
    m=$([[ $f == 16 ]] && echo gpu || echo cpu)
    bench sort_gpu_ooc_${f}_$m env SLUICE_OOC_SORT_MERGE=$m $S --placement gpu --repeat 3 --gpu-mem $((D / f))
done
cases test_gpu_sort_ooc 90 ooc_gpu_and_cpu_merge
grep -h "^sort " "$L/test_gpu_sort_ooc.txt" | cut -c1-200 | head -12
cases test_ooc_merge 30 ooc_merge_random_runs ooc_merge_edges
cases test_gpu_sort_ooc 60 ooc_int32_random_budgets ooc_int64_payloads ooc_duplicates_and_skew \
    ooc_sorted_reversed_extremes ooc_empty_and_one_row ooc_budget_too_small_falls_back_to_cpu \
    ooc_racecheck_tiny ooc_sanitize_small
cases test_gpu_sort_op 60 small_budget_goes_to_cpu duplicates_all_equal_stable
cases test_gpu_join_smj_ooc 60 smj_ooc_uniform_pk_fk smj_ooc_skew smj_ooc_duplicates_both_sides \
    smj_ooc_8_byte_keys_two_payloads smj_ooc_no_matches_and_empty_side smj_ooc_fallbacks
grep -h -B2 -A6 "ERROR\|FAILED\|error:" "$L"/test_*.txt | head -40
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() { # san TOOL BINARY CASE
    left 40 || { echo "skipped (time): $1 $3"; return; }
    local t0=$SECONDS
    timeout 40 "$SAN" --tool "$1" --error-exitcode 9 "$B/tests/$2" "$3" > "$L/$1_$3.txt" 2>&1
    echo "$1 $3: exit $? ($(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/$1_$3.txt")) $((SECONDS - t0)) s"
}
san memcheck test_gpu_sort_ooc ooc_sanitize_small
san racecheck test_gpu_sort_ooc ooc_racecheck_tiny
J="$B/cli/sluice bench join --json --build-rows 2^26 --probe-rows 2^26 --algo sortmerge"
Q=$((1024 * 1024 * 1024))
bench smj_gpu_ooc_4 $J --placement gpu --repeat 3 --gpu-mem $((Q / 4))
bench sort_cpu $S --placement cpu --repeat 3
(cd "$OUT" && tar czf logs.tgz logs && rm -rf logs)
