#!/usr/bin/env bash
# Every sluice command and benchmark has --help (exit 0, usage on stdout, nothing on
# stderr); every error path exits non-zero (not a crash) with "sluice: ..." on stderr
# and nothing on stdout; `run` prints an aligned table by default, CSV and JSON with
# --format; `explain` prints a report, JSON with --json or --format json, and says so
# clearly when a GPU is asked for and absent; `demo` ends with a summary of times and
# throughput.
#
#   check_commands.sh SLUICE PLANS_DIR SCRATCH_DIR
# shellcheck source=cli_check_lib.sh
source "$(dirname "$0")/cli_check_lib.sh"

for cmd in demo run explain operators options gen trace-render devices bench version \
    "bench tasks" "bench join" "bench sort" "bench partition" "bench aggregate" \
    "bench kmeans"; do
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
    case " demo run explain operators options gen trace-render devices bench version " in
        *" $c "*) ;;
        *) fail "sluice --help lists '$c', which this test does not check" ;;
    esac
done

plan=$plans/sequence_sum.plan
while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    eval "args=($line)"
    run "${args[@]}"
    if ((rc == 0 || rc >= 128)); then
        fail "sluice $line: exit $rc (want an error exit below 128)"
    fi
    grep -q '^sluice: ' "$err" || fail "sluice $line: no 'sluice: ...' message on stderr"
    [[ ! -s $out ]] || fail "sluice $line: wrote to stdout: $(head -c 200 "$out")"
    if grep -qE 'Sanitizer|runtime error:' "$err"; then fail "sluice $line: $(<"$err")"; fi
done <<EOF_CASES
frobnicate
demo --bogus
demo --rows many
demo --rows
run
run --bogus "$plan"
run "$plan" other.plan
run /nonexistent.plan
run "$plan" --format xml
run "$plan" --format
run "$plan" --limit
run "$plan" --limit lots
run "$plan" --threads
run "$plan" --threads abc
run "$plan" --placement tpu
run "$plans/demo.plan" --host-mem 1Mi --threads 2
run --plugin /nonexistent/x.so "$plan"
explain
explain --bogus "$plan"
explain "$plan" --format csv
explain /nonexistent.plan
explain "$plan" --gpu-mem lots
operators --bogus
gen
gen gen.keys rows=10
gen nope -o "$scratch/x.bin"
gen gen.keys rows=10 colour=red -o "$scratch/x.bin"
gen gen.keys rows=10 -o /nonexistent/dir/x.bin
trace-render
trace-render /nonexistent.json -o "$scratch/x.svg"
devices --bogus
devices --format csv
bench
bench nothing
bench join --bogus
bench tasks --tasks none
version --bogus
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
    "pipeline 0: gen.keys[1] -> join[2], its input 0" "  device   cpu: " \
    "  tasks    9 of up to 122880 rows (1048576 rows estimated); cost/task 2.95 ms (" \
    "(gen.keys 491.5 us, join 2.46 ms)" "(gen.keys 491.5 us, aggregate " \
    "  memory   host " "moves nothing between host and GPU" "  host  estimated peak "; do
    grep -qF -- "$want" "$out" || fail "explain: no '$want' in: $(<"$out")"
done
grep -q WARNING "$out" && fail "explain: a warning without a reason: $(<"$out")"
for fmt in --json "--format json"; do
    # shellcheck disable=SC2086 # "--format json" is two words
    run explain "$plans/demo.plan" $fmt
    for want in '"pipelines":[{"id":0,"source":"gen.keys"' '"tasks":9,' '"task_seconds":0.00' \
        '"bytes_h2d":0' '"host_peak":' '"host_budget":' '"why":"'; do
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

if ((failures)); then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok: every command has --help, errors exit non-zero with a message, formats hold"
