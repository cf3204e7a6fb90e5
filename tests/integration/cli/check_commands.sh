#!/usr/bin/env bash
# Every sluice command and benchmark has --help (exit 0, usage on stdout, nothing on
# stderr); every error path exits with the code docs/CLI.md gives (2 for a mistake on
# the command line, 1 for a bad plan or a failed run; never a crash) with "sluice: ..."
# on stderr and nothing on stdout; `run` prints an aligned table by default, CSV and
# JSON with --format; `explain` prints a report with the plan's node names and each
# join's build side, JSON with --json or --format json, and says so clearly when a GPU
# is asked for and absent; `demo` runs demo.plan's sizes and ends with a summary of times
# and throughput, or prints only JSON with --json; `operators` gives each option exactly
# one of required, optional or its default; `gen` refuses a file extension it cannot
# write.
#
#   check_commands.sh SLUICE PLANS_DIR SCRATCH_DIR
# shellcheck source=cli_check_lib.sh
source "$(dirname "$0")/cli_check_lib.sh"

for cmd in demo run explain operators options gen trace-render devices bench version \
    tpch "bench tasks" "bench join" "bench sort" "bench partition" "bench aggregate" \
    "bench kmeans" "bench tpch"; do
    # shellcheck disable=SC2086 # "bench join" is two words
    run $cmd --help
    ((rc == 0)) || fail "sluice $cmd --help: exit $rc"
    grep -q '^usage: sluice' "$out" || fail "sluice $cmd --help: no usage on stdout"
    [[ ! -s $err ]] || fail "sluice $cmd --help: wrote to stderr: $(<"$err")"
done
run --help
((rc == 0)) && grep -q '^usage: sluice' "$out" || fail "sluice --help"
# Every command the main usage lists has been checked above.
for c in $(sed -n 's/^  \([a-z-]*\) .*/\1/p' "$out"); do
    case " demo run explain operators options gen trace-render devices bench version tpch " in
        *" $c "*) ;;
        *) fail "sluice --help lists '$c', which this test does not check" ;;
    esac
done

plan=$plans/sequence_sum.plan
# Each case: the exit code it must give, then the arguments.
while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    want=${line%% *} line=${line#* }
    eval "args=($line)"
    run "${args[@]}"
    if [[ $want == '*' ]]; then
        ((rc == 1 || rc == 2)) || fail "sluice $line: exit $rc (want 1 or 2)"
    else
        ((rc == want)) || fail "sluice $line: exit $rc (want $want)"
    fi
    grep -q '^sluice: ' "$err" || fail "sluice $line: no 'sluice: ...' message on stderr"
    [[ ! -s $out ]] || fail "sluice $line: wrote to stdout: $(head -c 200 "$out")"
    if grep -qE 'Sanitizer|runtime error:' "$err"; then fail "sluice $line: $(<"$err")"; fi
done <<EOF_CASES
2 frobnicate
2 demo --bogus
2 demo --rows many
2 demo --rows
2 run
2 run --bogus "$plan"
2 run "$plan" other.plan
1 run /nonexistent.plan
2 run "$plan" --format xml
2 tpch --bogus
2 tpch --query 23
2 tpch --residency disk
2 tpch --sf zero
2 bench tpch --repeat 0
1 tpch --data /nonexistent --query 6
2 run "$plan" --format
2 run "$plan" --limit
2 run "$plan" --limit lots
2 run "$plan" --threads
2 run "$plan" --threads abc
2 run "$plan" --placement tpu
1 run "$plans/demo.plan" --host-mem 1Mi --threads 2
2 run --plugin /nonexistent/x.so "$plan"
2 explain
2 explain --bogus "$plan"
2 explain "$plan" --format csv
1 explain /nonexistent.plan
2 explain "$plan" --gpu-mem lots
2 operators --bogus
2 gen
2 gen gen.keys rows=10
1 gen nope -o "$scratch/x.bin"
1 gen gen.keys rows=10 colour=red -o "$scratch/x.bin"
1 gen gen.keys rows=10 -o /nonexistent/dir/x.bin
2 trace-render
1 trace-render /nonexistent.json -o "$scratch/x.svg"
2 devices --bogus
2 devices --format csv
2 bench
2 bench nothing
# The bench commands are being rebuilt (issue 21): any error exit for now.
* bench join --bogus
2 bench tasks --tasks none
2 version --bogus
2 gen gen.keys rows=10 -o "$scratch/x.parquet"
2 gen gen.keys rows=10 -o "$scratch/x.dat" --format xml
2 gen gen.keys rows=10 -o
2 demo --json --rows 7
2 bench aggregate --key-type float --json
2 bench aggregate --value-type text --json
2 bench aggregate --key-type dict --groups 2^27 --json
EOF_CASES

# run: an aligned table by default, CSV and JSON with --format.
run run "$plan"
((rc == 0)) || fail "run: exit $rc: $(<"$err")"
[[ $(sed -n 2p "$out") == "  count           sum" ]] || fail "run: table header: $(<"$out")"
[[ $(sed -n 3p "$out") == "1048576  549755289600" ]] || fail "run: table row: $(<"$out")"
run run "$plan" --format csv
[[ $(<"$out") == $'count,sum\n1048576,549755289600' ]] || fail "run --format csv: $(<"$out")"
run run "$plan" --format json
[[ $(<"$out") == '{"output":"result","count":1048576,"sum":549755289600}' ]] ||
    fail "run --format json: $(<"$out")"
run run "$plans/sort.plan" --limit 2 --format csv
[[ $(wc -l <"$out") -eq 3 ]] || fail "run --limit 2 --format csv: $(<"$out")"

# explain: the report, and the same as JSON.
run explain "$plans/demo.plan"
((rc == 0)) || fail "explain: exit $rc: $(<"$err")"
for want in "plan $plans/demo.plan: 7 pipelines" \
    "pipeline 0: fact (gen.keys) -> j (join), its input 0 (left): the probe side (an inner join builds on the smaller input, the right one on a tie: 1048576 vs 1048576 rows estimated)" \
    "pipeline 1: dim (gen.keys) -> j (join), its input 1 (right): the build side" \
    "pipeline 4: j (join) -> output" "  device   cpu: " \
    "  tasks    9 of up to 122880 rows (1048576 rows estimated); cost/task " \
    "(gen.keys " ", join " "(gen.keys " ", aggregate " \
    "  memory   host " "moves nothing between host and GPU" "  host  estimated peak "; do
    grep -qF -- "$want" "$out" || fail "explain: no '$want' in: $(<"$out")"
done
grep -q WARNING "$out" && fail "explain: a warning without a reason: $(<"$out")"
# A task's estimated cost is the sum of its stages' (not a fixed number: the model may move).
python3 - "$out" <<'PY' || fail "explain: cost/task is not the sum of its stages: $(<"$out")"
import re, sys
unit = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
sec = lambda v, u: float(v) * unit[u]
n = 0
for m in re.finditer(r"cost/task ([0-9.]+) (s|ms|us|ns) \(([^)]*)\)", open(sys.argv[1]).read()):
    parts = [sec(v, u) for v, u in re.findall(r" ([0-9.]+) (s|ms|us|ns)", " " + m.group(3))]
    total = sec(m.group(1), m.group(2))
    n += 1
    if not parts or abs(sum(parts) - total) > 0.01 * total:
        sys.exit(f"{m.group(0)}: parts sum to {sum(parts)}")
sys.exit(0 if n else "no cost/task line")
PY
for fmt in --json "--format json"; do
    # shellcheck disable=SC2086 # "--format json" is two words
    run explain "$plans/demo.plan" $fmt
    for want in '"pipelines":[{"id":0,"source":"gen.keys"' '"tasks":9,' '"task_seconds":0.00' \
        '"bytes_h2d":0' '"host_peak":' '"host_budget":' '"why":"' \
        '"stages":[{"op":"gen.keys","node":1,"name":"fact","device":"cpu"'; do
        grep -qF -- "$want" "$out" || fail "explain $fmt: no '$want' in: $(<"$out")"
    done
    [[ $(wc -l <"$out") -eq 1 ]] || fail "explain $fmt: not one line"
done
run explain "$plan" --host-mem 1Mi
want='^WARNING: the estimated peak host memory .* exceeds the host budget (1.0 MiB, --host-mem)'
grep -q "$want" "$out" || fail "explain --host-mem 1Mi: no warning: $(<"$out")"
run explain "$plan" --host-mem 1Mi --json
grep -qF '"host_over_budget":true' "$out" || fail "explain --host-mem 1Mi --json: $(<"$out")"
if [[ ${SLUICE_EXPECT_NO_GPU:-} == 1 ]] || ! compgen -G '/dev/nvidia[0-9]*' >/dev/null; then
    run explain "$plan" --placement gpu
    grep -q '^NOTE: --placement gpu was asked for, but no usable GPU is present' "$out" ||
        fail "explain --placement gpu without a GPU: $(<"$out")"
    grep -q 'device   cpu: forced to the GPU .* no usable GPU is present: falls back to the CPU' \
        "$out" || fail "explain --placement gpu: no fallback reason: $(<"$out")"
fi
run explain "$plan" --gpus 0
grep -q 'device   cpu: no GPU in use' "$out" || fail "explain --gpus 0: $(<"$out")"
run explain --analyze "$plan"
grep -q '^  measured cpu, 9 tasks, 1048576 rows, ' "$out" || fail "explain --analyze: $(<"$out")"
grep -q '^measured: SL_OK in ' "$out" || fail "explain --analyze: no total: $(<"$out")"
grep -q 'measured peak ' "$out" || fail "explain --analyze: no measured peak: $(<"$out")"
run explain --analyze --json "$plan"
grep -qF '"measured":{"device":"cpu","gpu":-1,' "$out" ||
    fail "explain --analyze --json: $(<"$out")"
grep -qF '"profile":{"status":"SL_OK"' "$out" || fail "explain --analyze --json: no profile"

# demo: a summary of times and throughput at the end.
run demo --rows 100003
((rc == 0)) || fail "demo: exit $rc: $(<"$err")"
grep -qE '^  total .* ms wall .* G input rows/s' "$out" || fail "demo: no summary: $(<"$out")"
grep -q '^  results   checked' "$out" || fail "demo: results not checked: $(<"$out")"

# demo --json: one JSON object on stdout and nothing else, with the checked results.
run demo --rows 100003 --json
((rc == 0)) || fail "demo --json: exit $rc: $(<"$err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["checked"] is True \
    and d["rows"] == 100003 and d["join"]["matches"] == 100003 and "profile" in d, d' "$out" ||
    fail "demo --json: not one JSON object with checked results: $(head -c 300 "$out")"

# demo: by default the sizes of plans/files/demo.plan (its join's inputs' rows).
demo_rows=$(sed -n 's/^dim *= gen.keys rows=\([^ ]*\) .*/\1/p' "$plans/demo.plan")
[[ $demo_rows == "2^20" ]] || fail "demo.plan: dim rows '$demo_rows' (this test expects 2^20)"
if [[ ${SLUICE_EXPECT_NO_GPU:-} == 1 ]] || ! compgen -G '/dev/nvidia[0-9]*' >/dev/null; then
    run demo --json --threads 2
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["rows"] == 2**20, d["rows"]' \
        "$out" || fail "demo: default rows are not demo.plan's 2^20: $(head -c 300 "$out")"
fi

# operators: every option line ends with exactly one of (required), (optional) or
# (default X), never two.
run operators
((rc == 0)) || fail "operators: exit $rc"
while IFS= read -r l; do
    fail "operators: option line without a status: $l"
done < <(grep -E '^    ' "$out" | grep -vE ' \((required|optional|default .*)\)$')
grep -qF '(required) (default' "$out" && fail "operators: '(required) (default' in the list"
grep -qE '\(required\).*\(' "$out" && fail "operators: a required option with more: $(grep -E '\(required\).*\(' "$out")"

# gen: the format follows --format, else the extension; another extension is refused.
run gen gen.keys rows=10 -o "$scratch/g.dat" --format csv
((rc == 0)) && [[ $(head -1 "$scratch/g.dat") == k ]] || fail "gen --format csv: $(<"$err")"
run gen gen.keys rows=10 -o "$scratch/g.parquet"
[[ ! -e $scratch/g.parquet ]] || fail "gen -o g.parquet wrote a file"
grep -qF "cannot tell the format of" "$err" || fail "gen -o g.parquet: $(<"$err")"

# bench aggregate's string keys and decimal values: every row counted, the groups kept.
for kv in "utf8 int64" "dict decimal" "int32 decimal"; do
    read -r kt vt <<<"$kv"
    run bench aggregate --rows 5000 --groups 37 --key-type "$kt" --value-type "$vt" --repeat 1 --json
    ((rc == 0)) && grep -q "\"key_type\":\"$kt\",\"value_type\":\"$vt\"" "$out" &&
        grep -q '"output_rows":37' "$out" || fail "bench aggregate $kt $vt: $(<"$out") $(<"$err")"
done

if ((failures)); then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok: every command has --help, errors exit non-zero with a message, formats hold"
