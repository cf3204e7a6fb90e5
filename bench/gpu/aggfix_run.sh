#!/usr/bin/env bash
# Device script of the aggfix helper: repeats the GPU aggregate cases that failed
# intermittently (test_gpu_aggregate op_many_batches and op_1000_groups, test_gpu_plans
# demo), one process per run, and prints pass/fail counts, for the fixed build
# (.carry/build-gpu/tests) and, when packed, the build before the fix (.carry/before: the
# GPU sink's local state was not cleared). First both run once with jemalloc's junk
# filling (MALLOC_CONF=junk:true: every new allocation is 0xa5 bytes), which turns the
# uninitialized state into a failure every time. Then the same cases once under
# AddressSanitizer and ThreadSanitizer builds (host memory errors and host data races),
# compute-sanitizer memcheck on op_1000_groups and racecheck on op_many_batches, each under
# a time limit. Logs of failed runs (and one passing run per case) go to $OUT as one tar.
#
#   (from the repository root, on the GPU machine)
#   rm -rf .carry; xz -dc .carry-aggfix/carry.txz | tar xf -; source scripts/on_gpu_env.sh
#   bash .carry-aggfix/aggfix_run.sh [RUNS] [SECONDS]
#
# RUNS: runs per case (default 15); SECONDS: when to stop starting new runs (default 150).
set -u
runs=${1:-15}
budget=${2:-150}
out=${OUT:-/tmp/aggfix_out}
logs=$out/logs
mkdir -p "$logs"
if [[ ! -d .carry ]]; then
    xz -dc .carry-aggfix/carry.txz | tar xf -
fi
source scripts/on_gpu_env.sh
rel=.carry/build-gpu/tests
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
date -u +"start %Y-%m-%dT%H:%M:%SZ"

# loop NAME BINARY CASE: RUNS runs, one process each, until the time is up.
loop() {
    local name=$1 bin=$2 case=$3 pass=0 fail=0 kept=0
    for ((i = 1; i <= runs; i++)); do
        (($(left) > 0)) || break
        local log=$logs/${name}_$i.log t0=$EPOCHREALTIME
        timeout 90 "$bin" "$case" > "$log" 2>&1
        local rc=$?
        local dt
        dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
        echo "rc=$rc seconds=$dt" >> "$log"
        if ((rc == 0)); then
            pass=$((pass + 1))
            if ((kept)); then rm -f "$log"; else kept=1; fi
        else
            fail=$((fail + 1))
            echo "FAIL $name run $i rc=$rc ($dt s):"
            grep -E "FAILED|ERROR|error|\*\*\*|signal|differ|MISMATCH|GPU query failed|returned|\[  " "$log" |
                grep -v "^\[ RUN\|OK \]" | head -12 | sed 's/^/    /'
        fi
    done
    echo "RESULT $name: $pass passed, $fail failed"
}

# Deterministic check of the cause: fresh allocations full of junk.
for b in before build-gpu/tests; do
    [[ -x .carry/$b/test_gpu_aggregate ]] || continue
    tag=${b%%/*}
    for c in op_1000_groups:test_gpu_aggregate demo:test_gpu_plans; do
        log=$logs/junk_${tag}_${c%%:*}.log
        MALLOC_CONF=junk:true timeout 90 .carry/$b/${c#*:} "${c%%:*}" > "$log" 2>&1
        rc=$?
        echo "JUNK $tag ${c%%:*}: rc=$rc"
        ((rc == 0)) || grep -E "failed|returned|\*\*\*|FAILED" "$log" | head -4 | sed 's/^/    /'
    done
done

# The three cases at once (three processes on the GPU at a time), and the build before
# the fix alongside (fewer runs), for the failure rate under the same load.
if [[ -x .carry/before/test_gpu_aggregate ]]; then
    before_runs=$((runs * 2 / 3))
    (runs=$before_runs; loop before_op_many_batches .carry/before/test_gpu_aggregate op_many_batches) > "$logs/loop_b_many.txt" 2>&1 &
    (runs=$before_runs; loop before_op_1000_groups .carry/before/test_gpu_aggregate op_1000_groups) > "$logs/loop_b_1000.txt" 2>&1 &
    (runs=$before_runs; loop before_demo .carry/before/test_gpu_plans demo) > "$logs/loop_b_demo.txt" 2>&1 &
fi
# Every case of test_gpu_aggregate once (the gpu_aggregate suite), fixed build.
(timeout 120 $rel/test_gpu_aggregate > "$logs/all_gpu_aggregate.log" 2>&1
 echo "SUITE test_gpu_aggregate (all cases, one process): rc=$?"
 grep -E "^\[  (FAILED|PASSED|  OK|ERROR)" "$logs/all_gpu_aggregate.log" | sort | uniq -c | sed 's/^/    /') > "$logs/suite.txt" 2>&1 &
loop op_many_batches $rel/test_gpu_aggregate op_many_batches > "$logs/loop_many.txt" 2>&1 &
p1=$!
loop op_1000_groups $rel/test_gpu_aggregate op_1000_groups > "$logs/loop_1000.txt" 2>&1 &
p2=$!
loop demo $rel/test_gpu_plans demo > "$logs/loop_demo.txt" 2>&1 &
p3=$!

# Sanitizers meanwhile, each bounded (they are slow: a run past its limit is reported as such).
san() {  # san NAME LIMIT ENV... -- COMMAND...
    local name=$1 lim=$2 envs=()
    shift 2
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    local log=$logs/san_$name.log
    env "${envs[@]}" timeout "$lim" "$@" > "$log" 2>&1
    local rc=$?
    echo "SANITIZER $name: rc=$rc $( ((rc == 124)) && echo '(time limit)')"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|SUMMARY:|FATAL|\*\*\*|FAILED|PASSED" "$log" |
        sort | uniq -c | head -12 | sed 's/^/    /'
}
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
asan_env=(ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0:abort_on_error=0)
tsan_env=(TSAN_OPTIONS=halt_on_error=0:report_signal_unsafe=0:history_size=4)
{
    if [[ -x .carry/build-asan/tests/test_gpu_aggregate ]]; then
        san asan_many 70 "${asan_env[@]}" -- .carry/build-asan/tests/test_gpu_aggregate op_many_batches
        san asan_1000 40 "${asan_env[@]}" -- .carry/build-asan/tests/test_gpu_aggregate op_1000_groups
        san asan_demo 40 "${asan_env[@]}" -- .carry/build-asan/tests/test_gpu_plans demo
    fi
} > "$logs/san_asan.txt" 2>&1 &
p4=$!
{
    if [[ -x .carry/build-tsan/tests/test_gpu_plans ]]; then
        san tsan_demo 80 "${tsan_env[@]}" -- .carry/build-tsan/tests/test_gpu_plans demo
        san tsan_many 70 "${tsan_env[@]}" -- .carry/build-tsan/tests/test_gpu_aggregate op_many_batches
    fi
} > "$logs/san_tsan.txt" 2>&1 &
p5=$!
{
    if [[ -n $cs ]]; then
        san memcheck_1000 120 -- "$cs" --tool memcheck --leak-check no $rel/test_gpu_aggregate op_1000_groups
        san racecheck_many 40 -- "$cs" --tool racecheck $rel/test_gpu_aggregate op_many_batches
    else
        echo "no compute-sanitizer"
    fi
} > "$logs/san_cs.txt" 2>&1 &
p6=$!
wait
cat "$logs"/loop_*.txt "$logs"/suite.txt "$logs"/san_*.txt
date -u +"end %Y-%m-%dT%H:%M:%SZ ($(($(date +%s) - start)) s)"
tar czf "$out/aggfix_logs.tar.gz" -C "$out" logs && rm -rf "$logs"
