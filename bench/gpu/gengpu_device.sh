#!/usr/bin/env bash
# Device run for the GPU generators (kernels/gen, operators/gen/gen_cuda.c). Run from the
# repository root with the small pack (scripts/pack_for_gpu.sh, bench/gpu/pack_small.sh)
# and this script in .carry-gengpu/:   bash .carry-gengpu/gengpu_device.sh
#  1. tests/gpu/test_gpu_gen, each case in its own process (GPU vs CPU, row by row);
#  2. `sluice gen` files made on the CPU and on the GPU compared byte for byte;
#  3. the GPU plan tests (gpu_plans.*), which run the generators inside GPU pipelines;
#  4. `sluice demo` on the GPU with a trace (rendered to SVG) and on the CPU;
#  5. compute-sanitizer memcheck on small inputs, racecheck on a tiny one;
#  6. what time is left: the rest of the gpu suite.
# Logs go to $OUT/logs.tgz, the trace and its picture to $OUT/demo.{json,svg}.
set -u
t0=$(date +%s)
xz -dc .carry-gengpu/carry.txz | tar xf -
source scripts/on_gpu_env.sh
L=$(mktemp -d)
B=.carry/build-gpu
S=$L/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > "$L/device.txt" 2>&1
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

for c in keys_unique keys_fk keys_m2m_and_nulls keys_zipf_stay_on_the_cpu uniform_every_type \
         sequence blobs launchers_reject_bad_arguments; do
    s=$(date +%s%N); timeout 120 $B/tests/test_gpu_gen "$c" > "$L/gen_$c.log" 2>&1; rc=$?
    echo "gpu_gen.$c rc=$rc $(ms "$s") ms" >> "$S"
done

G="--placement gpu"
i=0
while read -r args; do
    i=$((i + 1))
    $B/cli/sluice gen $args --placement cpu -o "$L/c$i.bin" > /dev/null 2>> "$L/cmp.log"
    SLUICE_GPU_MORSEL_ROWS=100003 $B/cli/sluice gen $args $G -o "$L/g$i.bin" > /dev/null 2>> "$L/cmp.log"
    cmp "$L/c$i.bin" "$L/g$i.bin" >> "$L/cmp.log" 2>&1 && r=same || r=DIFF
    echo "cmp $r: $args" >> "$S"
    rm -f "$L/c$i.bin" "$L/g$i.bin"
done <<'CASES'
gen.keys rows=3000017 kind=fk pk_rows=1000 match=0.7 null_rate=0.1 payloads=3 payload_type=float64
gen.keys rows=2000003 kind=unique type=int64 payloads=1 payload_type=float32 seed=11
gen.uniform rows=2000003 type=float32 min=-3 max=7.5 null_rate=0.2
gen.uniform rows=2000003 type=int64 min=-1000 max=1000000000000
gen.sequence rows=2000003 start=-9 step=7
CASES

{ sed -n '1,/^SUITES=/p' .carry/run_tests.sh; grep -E '^t gpu gpu_plans\.' .carry/run_tests.sh
  tail -n 3 .carry/run_tests.sh; } > .carry/run_plans.sh
s=$(date +%s%N); bash .carry/run_plans.sh > "$L/gpu_plans.log" 2>&1
echo "gpu_plans rc=$? $(ms "$s") ms: $(tail -n 1 "$L/gpu_plans.log")" >> "$S"

for k in 1 2; do
    s=$(date +%s%N); $B/cli/sluice demo --trace "$OUT/demo.json" > "$L/demo_gpu_$k.txt" 2>&1
    echo "demo gpu run $k rc=$? $(ms "$s") ms" >> "$S"
done
$B/cli/sluice trace-render "$OUT/demo.json" -o "$OUT/demo.svg" >> "$S" 2>&1
for k in 1 2; do
    s=$(date +%s%N); $B/cli/sluice demo --placement cpu > "$L/demo_cpu_$k.txt" 2>&1
    echo "demo cpu run $k rc=$? $(ms "$s") ms" >> "$S"
done

CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export SLUICE_GPU_MORSEL_ROWS=30000
for args in "gen.keys rows=100003 kind=fk pk_rows=1000 match=0.7 null_rate=0.1 payloads=2 payload_type=float32" \
            "gen.uniform rows=100003 type=float64 null_rate=0.3" \
            "gen.blobs points=70001 dims=20 k=5 label=true"; do
    timeout 100 "$CS" --tool memcheck --error-exitcode 9 $B/cli/sluice gen $args $G -o "$L/m.bin" \
        >> "$L/memcheck.log" 2>&1
    echo "memcheck rc=$? $args" >> "$S"
done
timeout 60 "$CS" --tool racecheck --error-exitcode 9 $B/cli/sluice gen gen.keys rows=1000 \
    kind=m2m distinct=10 null_rate=0.5 $G -o "$L/m.bin" >> "$L/racecheck.log" 2>&1
echo "racecheck rc=$?" >> "$S"
unset SLUICE_GPU_MORSEL_ROWS
rm -f "$L/m.bin"

left=$((285 - ($(date +%s) - t0)))
if ((left > 20)); then
    { sed -n '1,/^SUITES=/p' .carry/run_tests.sh
      grep -E '^t gpu ' .carry/run_tests.sh | grep -vE '^t gpu gpu_(plans|gen)\.'
      tail -n 3 .carry/run_tests.sh; } > .carry/run_rest.sh
    timeout "$left" bash .carry/run_rest.sh > "$L/gpu_rest.log" 2>&1
    echo "rest of the gpu suite rc=$? (within ${left} s): $(tail -n 1 "$L/gpu_rest.log")" >> "$S"
fi
tar czf "$OUT/logs.tgz" -C "$L" .
cat "$S"
