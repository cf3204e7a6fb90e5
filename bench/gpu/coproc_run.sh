#!/usr/bin/env bash
# Device script of the co-processing helper (issue 8): on the GPU machine, checks and
# measures CPU+GPU co-processing of one pipeline.
#
#   1. test_gpu_coproc: every case (co-processed results equal the CPU-only run exactly;
#      both devices ran morsels of the pipeline on the large inputs);
#   2. sluice bench aggregate over host-resident input (2^27 rows, int32 key, int64
#      value, count + sum, 1,000 groups; pageable and pinned), placement cpu, gpu,
#      coprocess and auto; coprocess also with other CPU worker counts and morsel sizes;
#      Zipf(1.5) keys; 2^20 groups;
#   3. the GPU tests of the operators it touches (aggregate, exec, gen, plans);
#   4. compute-sanitizer memcheck and racecheck on a small co-processed case,
#      while time is left.
# Logs go to $OUT as one tar, a summary to stdout.
#
#   (from the repository root, on the GPU machine)
#   bash .carry-coproc/coproc_run.sh    (unpacks .carry-coproc/carry.txz into .carry/)
set -u
if [[ ! -x .carry/build-gpu/tests/test_gpu_coproc ]]; then
    rm -rf .carry
    xz -dc .carry-coproc/carry.txz | tar xf -
fi
export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${OUT:-/tmp/coproc_out}
logs=$out/logs
mkdir -p "$logs"
budget=${1:-225}
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
tests=.carry/build-gpu/tests
sluice=.carry/build-gpu/cli/sluice
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
nproc
date -u +"start %Y-%m-%dT%H:%M:%SZ"

# 1. correctness
timeout 100 "$tests/test_gpu_coproc" > "$logs/test_gpu_coproc.log" 2>&1
echo "test_gpu_coproc rc=$?"
grep -E "split|FAILED|ERROR|failed|PASSED|OK \]" "$logs/test_gpu_coproc.log" | head -40

# 2. benchmark
rows=2^27
bench() { # LABEL ARGS...
    local label=$1
    shift
    (($(left) > 20)) || { echo "SKIP bench $label (time)"; return; }
    local line
    line=$(timeout 60 "$sluice" bench aggregate --rows $rows "$@" 2>&1 | tail -1)
    echo "BENCH $label: $line"
    echo "$label $*: $line" >> "$logs/bench.txt"
}
for res in pinned host; do
    for pl in cpu gpu coprocess auto; do
        bench "$res/$pl" --resident $res --placement $pl
    done
done
SLUICE_COPROC_CPU_WORKERS=16 bench "pinned/coprocess/cpu16" --resident pinned --placement coprocess
SLUICE_COPROC_CPU_WORKERS=12 bench "pinned/coprocess/cpu12" --resident pinned --placement coprocess
SLUICE_COPROC_CPU_WORKERS=12 bench "host/coprocess/cpu12" --resident host --placement coprocess
SLUICE_COPROC_MORSEL_ROWS=1048576 bench "pinned/coprocess/morsel1M" --resident pinned --placement coprocess
for pl in cpu gpu coprocess auto; do
    bench "pinned/$pl/zipf1.5" --resident pinned --placement $pl --zipf 1.5
done
for pl in gpu coprocess auto; do
    bench "pinned/$pl/groups2^20" --resident pinned --placement $pl --groups 2^20
done
# what explain says for the plan (estimates, the split)
cat > "$logs/agg.plan" <<'EOF'
rows = gen.keys rows=2^26 kind=m2m distinct=1000 seed=3 payloads=1 column=k
agg  = aggregate(rows) keys=k aggs="count(*), sum(p1), min(p1), max(p1)"
output agg as groupby
EOF
timeout 30 "$sluice" explain "$logs/agg.plan" --analyze --placement coprocess > "$logs/explain.txt" 2>&1
echo "explain rc=$?"; head -20 "$logs/explain.txt"

# 3. regressions
for t in test_gpu_aggregate test_gpu_exec test_gpu_gen test_gpu_plans; do
    (($(left) > 40)) || { echo "SKIP $t (time)"; continue; }
    timeout $(($(left) - 35)) "$tests/$t" > "$logs/$t.log" 2>&1
    echo "$t rc=$? $(grep -cE '^\[       OK \]' "$logs/$t.log") ok, $(grep -cE '^\[  FAILED  \] [a-z]' "$logs/$t.log") failed"
    grep -E "^\[  FAILED  \] [a-z]|ERROR" "$logs/$t.log" | head -5
done

# 4. sanitizers on a small co-processed case
if command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck; do
        (($(left) > 25)) || { echo "SKIP $tool (time)"; continue; }
        timeout $(($(left) - 10)) compute-sanitizer --tool $tool --error-exitcode 9 \
            "$tests/test_gpu_coproc" agg_empty_and_one_row > "$logs/$tool.log" 2>&1
        echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/$tool.log" | head -2)"
    done
fi
date -u +"end %Y-%m-%dT%H:%M:%SZ"
tar czf "$out/coproc_logs.tgz" -C "$out" logs && rm -rf "$logs"
