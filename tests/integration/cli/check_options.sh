#!/usr/bin/env bash
# Engine options from the command line: `sluice options` lists every option with the
# value the command line and environment give it; --set NAME=VALUE (repeatable) and the
# flags set options, --set last; SLUICE_<NAME> in the environment gives defaults; plan
# files' `set` lines apply to their queries over the engine's values; mistakes exit 2
# with a message naming the option.
#
#   check_options.sh SLUICE PLANS_DIR SCRATCH_DIR
# shellcheck source=cli_check_lib.sh
source "$(dirname "$0")/cli_check_lib.sh"
# Variables a test configuration may have exported must not change what is checked.
for v in $(env | sed -n 's/^\(SLUICE_[A-Z_]*\)=.*/\1/p'); do
    [[ $v == SLUICE_TEST || $v == SLUICE_EXPECT_NO_GPU ]] || unset "$v"
done
plan=$plans/sequence_sum.plan   # 2^20 rows

run options
((rc == 0)) || fail "options: exit $rc: $(<"$err")"
for name in threads placement morsel_rows gpu_mem debug_join_phase_times; do
    grep -q "^$name " "$out" || fail "options: no $name in: $(<"$out")"
done
run options --json
[[ $(wc -l <"$out") -eq 1 ]] || fail "options --json: not one line"
grep -qF '{"name":"morsel_rows","type":"int","query":true,"debug":false,"default":"0","value":"0"' \
    "$out" || fail "options --json: $(<"$out")"

# --set and the flags set options; the last --set wins, --set wins over a flag.
run options --json --set morsel_rows=2^10 --threads 3 --set threads=2 --set morsel_rows=4Ki
grep -qF '"name":"morsel_rows","type":"int","query":true,"debug":false,"default":"0","value":"4096"' \
    "$out" || fail "options --set morsel_rows: $(<"$out")"
grep -qF '"name":"threads","type":"int","query":false,"debug":false,"default":"0","value":"2"' \
    "$out" || fail "options --set threads after --threads: $(<"$out")"
run explain "$plan" --set morsel_rows=2^16 --set threads=2 --json
grep -qF '"morsel_rows":65536,"tasks":16,' "$out" || fail "explain --set morsel_rows: $(<"$out")"
grep -qF '"threads":2,' "$out" || fail "explain --set threads: $(<"$out")"
run run "$plan" --set placement=cpu --set morsel_rows=1000 --format csv
[[ $(<"$out") == $'count,sum\n1048576,549755289600' ]] || fail "run --set: $(<"$out") $(<"$err")"

# The environment gives defaults; flags and --set win over it.
SLUICE_MORSEL_ROWS=2^17 run explain "$plan" --json
grep -qF '"morsel_rows":131072,"tasks":8,' "$out" || fail "SLUICE_MORSEL_ROWS: $(<"$out")"
SLUICE_MORSEL_ROWS=2^17 run explain "$plan" --json --set morsel_rows=2^18
grep -qF '"morsel_rows":262144,"tasks":4,' "$out" || fail "--set over SLUICE_MORSEL_ROWS: $(<"$out")"
SLUICE_THREADS=3 run options --threads 2
grep -q '^threads .*= 2 ' "$out" || fail "--threads over SLUICE_THREADS: $(<"$out")"
SLUICE_MORSEL_ROWS=lots run run "$plan"
((rc != 0 && rc < 128)) || fail "SLUICE_MORSEL_ROWS=lots: exit $rc"
grep -qF 'sluice: environment variable SLUICE_MORSEL_ROWS: option morsel_rows=lots: not an integer' \
    "$err" || fail "SLUICE_MORSEL_ROWS=lots: $(<"$err")"

# A plan's set line applies to its queries, over the engine's value.
{ echo "set morsel_rows = 2^16"; cat "$plan"; } >"$scratch/set.plan"
run explain "$scratch/set.plan" --json --set morsel_rows=2^18
grep -qF '"morsel_rows":65536,"tasks":16,' "$out" || fail "plan set line: $(<"$out")"

# Mistakes: exit 2, a message, nothing on stdout.
while IFS='|' read -r args want; do
    eval "a=($args)"
    run "${a[@]}"
    ((rc == 2)) || fail "sluice $args: exit $rc (want 2)"
    grep -qF -- "$want" "$err" || fail "sluice $args: no '$want' in: $(<"$err")"
    [[ ! -s $out ]] || fail "sluice $args: wrote to stdout"
done <<EOF_CASES
options --set placment=cpu|--set: no option named 'placment' (hint: did you mean 'placement'?
options --set threads=lots|--set: option threads=lots: not an integer
options --set threads=5000|--set: option threads=5000: out of range [0, 4096]
options --set pin_threads=maybe|--set: option pin_threads=maybe: not a boolean
options --set placement=tpu|--set: option placement=tpu: not one of auto,cpu,gpu,coprocess
options --set host_gbps=-1|--set: option host_gbps=-1: below the minimum 0
options --set threads|--set: 'threads' is not NAME=VALUE
options --set|--set needs a value
run $plan --set =3|--set: '=3' is not NAME=VALUE
options --bogus|options: unknown argument '--bogus'
EOF_CASES

# docs/OPTIONS.md holds the table `sluice options --markdown` prints.
doc=$plans/../../docs/OPTIONS.md
run options --markdown
sed -n '/^<!-- options table: begin -->$/,/^<!-- options table: end -->$/p' "$doc" |
    sed '1d;$d' >"$scratch/doc_table"
diff -u "$scratch/doc_table" "$out" >"$scratch/doc_diff" ||
    fail "docs/OPTIONS.md differs from sluice options --markdown (regenerate it): $(<"$scratch/doc_diff")"

if ((failures)); then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok: options listed, set by --set, flags, environment and plan files; mistakes exit 2"
