# Shared by bench/gpu/final3_tests.sh and final3_bench.sh (sourced): unpacks the carry,
# sets B (build), S (sluice), L (logs), and step FILE SECONDS COMMAND... which runs a
# command with a limit inside the call's overall deadline (BUDGET seconds).
OUT=${OUT:-./gpu-out}
L=$OUT/logs
mkdir -p "$L"
C=${C:-.carry-f}
if [[ -f $C/carry.txz ]]; then rm -rf .carry; xz -dc "$C/carry.txz" | tar xf -; fi
source scripts/on_gpu_env.sh
B=.carry/build-gpu
S=$B/cli/sluice
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export SLUICE_TEST=1
END=$(($(date +%s) + ${BUDGET:-540}))
{ date -u; nvidia-smi -L; git log -1 --format='%h %s' 2>/dev/null; } > "$L/devices.txt" 2>&1
step() {
    local f=$1 t=$2; shift 2
    local left=$((END - $(date +%s)))
    ((left < 5)) && { echo "=== skipped (no time left): $*" | tee -a "$L/$f"; return; }
    ((t > left)) && t=$left
    echo "=== $* (limit ${t}s)" >> "$L/$f"
    local t0=$SECONDS
    timeout "$t" "$@" >> "$L/$f" 2>&1
    local rc=$?
    echo "=== exit $rc after $((SECONDS - t0))s" >> "$L/$f"
    return $rc
}
pack_logs() { (cd "$OUT" && tar czf logs.tgz logs && rm -rf logs); }
