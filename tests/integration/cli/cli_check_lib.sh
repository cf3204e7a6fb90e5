# Sourced by the cli check scripts, called as `SCRIPT SLUICE PLANS_DIR SCRATCH_DIR`:
# sets sluice, plans, scratch, failures; fail MESSAGE counts a failure.
set -uo pipefail
sluice=$1 plans=$2 scratch=$3
mkdir -p "$scratch"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
out=$scratch/out err=$scratch/err

# run ARGS...: runs sluice, leaving stdout in $out, stderr in $err, the exit code in rc.
run() { "$sluice" "$@" >"$out" 2>"$err"; rc=$?; }
