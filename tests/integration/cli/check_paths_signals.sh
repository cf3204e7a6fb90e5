#!/usr/bin/env bash
# What the sluice command does with hostile paths and signals (docs/RELIABILITY.md):
# a FIFO or device as a plan or trace is refused at once (it used to block or spin
# forever), an oversized count is refused instead of wrapping to the default, output
# to a symlink, a 0600 file or a device keeps the link, the mode and the node, and
# SIGINT/SIGTERM cancel the running query: exit 130/143 with a message and no file left.
set -euo pipefail
sluice=$1 plan=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkfifo "$dir/fifo"
for cmd in "explain $dir/fifo" "run $dir/fifo" "trace-render $dir/fifo -o $dir/x.svg" \
           "trace-render /dev/zero -o $dir/x.svg"; do
    rc=0
    timeout 10 "$sluice" $cmd 2> "$dir/err" || rc=$?
    [[ $rc == 1 ]] || fail "sluice $cmd: exit $rc, expected 1 at once"
    grep -q 'not a regular file' "$dir/err" || fail "sluice $cmd: $(cat "$dir/err")"
done

# A scan of a FIFO: explain says so too (scan.csv at bind, scan.bin reading its header).
printf 'c = scan.csv path="%s" columns="x int64"\noutput c as c\n' "$dir/fifo" > "$dir/csv.plan"
printf 'c = scan.bin path="%s"\noutput c as c\n' "$dir/fifo" > "$dir/bin.plan"
for cmd in "explain $dir/csv.plan" "run $dir/csv.plan" "explain $dir/bin.plan" "run $dir/bin.plan"; do
    rc=0
    timeout 10 "$sluice" $cmd > /dev/null 2> "$dir/err" || rc=$?
    [[ $rc == 1 ]] || fail "sluice $cmd: exit $rc, expected 1 at once"
    grep -q 'not a regular file (a FIFO)' "$dir/err" || fail "sluice $cmd: $(cat "$dir/err")"
done

for opt in "--threads 2^40" "--threads 5000" "--gpus 2^33" "--threads 1.5" "--host-mem nan"; do
    rc=0
    "$sluice" run $opt "$plan" > /dev/null 2> "$dir/err" || rc=$?
    [[ $rc == 2 ]] || fail "run $opt: exit $rc, expected 2"
    grep -q -e 'out of range' -e 'is not a count' "$dir/err" || fail "run $opt: $(cat "$dir/err")"
done

echo old > "$dir/target.csv"
ln -s target.csv "$dir/link.csv"
"$sluice" gen gen.sequence rows=10 -o "$dir/link.csv" > /dev/null
[[ -L $dir/link.csv ]] || fail "the symlink was replaced"
[[ $(wc -l < "$dir/target.csv") -ge 10 ]] || fail "the symlink's target did not get the data"
echo old > "$dir/secret.csv"
chmod 600 "$dir/secret.csv"
"$sluice" gen gen.sequence rows=10 -o "$dir/secret.csv" > /dev/null
[[ $(stat -c %a "$dir/secret.csv") == 600 ]] || fail "mode $(stat -c %a "$dir/secret.csv")"
if mknod "$dir/null.csv" c 1 3 2> /dev/null; then  # root: a private /dev/null
    "$sluice" gen gen.sequence rows=10 -o "$dir/null.csv" > /dev/null
    [[ -c $dir/null.csv ]] || fail "the device node was replaced"
    rm "$dir/null.csv"
fi

# Signals: the query is cancelled, its writer removes the temporary file, and the
# command says so and exits 128 + signal (a process killed by the signal says nothing).
for sig in INT TERM; do
    for delay in 0.3 1; do
        rm -f "$dir"/big.csv*
        "$sluice" gen gen.sequence rows=2^26 -o "$dir/big.csv" 2> "$dir/err" & pid=$!
        sleep $delay
        kill -$sig $pid
        rc=0
        wait $pid || rc=$?
        want=$([[ $sig == INT ]] && echo 130 || echo 143)
        [[ $rc == "$want" ]] || fail "SIG$sig after ${delay}s: exit $rc, expected $want"
        grep -q 'cancelled' "$dir/err" || fail "SIG$sig: no message: $(cat "$dir/err")"
        left=$(ls "$dir" | grep '^big' || true)
        [[ -z $left ]] || fail "SIG$sig after ${delay}s left: $left"
    done
done
echo ok
