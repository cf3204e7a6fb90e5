#!/usr/bin/env bash
# sluice bench join --sequence N on the CPU: the chained joins' checksum equals the one
# computed directly from the generators (no join; the bench exits 1 when they differ),
# every fact row survives every join, for N = 1, 3, 8, each algorithm and both outputs,
# dimensions of uneven sizes; bad --sequence values fail with a message.
set -uo pipefail
sluice=$1
fail=0
run() {
    local out
    out=$("$sluice" bench join --placement cpu --repeat 1 --json "$@" 2>&1)
    local rc=$? line
    line=$(grep '"bench":"join_sequence"' <<<"$out")
    local got exp rows
    got=$(grep -o '"checksum":[0-9]*' <<<"$line" | cut -d: -f2)
    exp=$(grep -o '"expected_checksum":[0-9]*' <<<"$line" | cut -d: -f2)
    rows=$(grep -o '"output_rows":[0-9]*' <<<"$line" | cut -d: -f2)
    if ((rc != 0)) || [[ -z $got || $got != "$exp" ]]; then
        echo "FAIL ($rc): $* -> $out"; fail=1; return
    fi
    echo "ok: $* rows=$rows checksum=$got"
    ROWS=$rows
}
for algo in auto radix nopart sortmerge; do
    run --sequence 3 --probe-rows 70001 --dim-rows 3001 --algo $algo
    [[ ${ROWS:-} == 70001 ]] || { echo "FAIL: $algo lost rows (${ROWS:-none})"; fail=1; }
done
run --sequence 8 --probe-rows 2^17 --dim-rows 2^12 --output aggregate
[[ ${ROWS:-} == 1 ]] || { echo "FAIL: aggregate gave ${ROWS:-none} rows"; fail=1; }
run --sequence 8 --probe-rows 2^17 --dim-rows 2^12
run --sequence 1 --probe-rows 1 --dim-rows 1
run --sequence 2 --probe-rows 5000 --dim-rows 3 --output aggregate --seed 7
for bad in "--sequence 0" "--sequence 17" "--sequence 4 --dim-rows 3" "--sequence 2 --output rows"; do
    if "$sluice" bench join --placement cpu --repeat 1 $bad > /dev/null 2>&1; then
        echo "FAIL: '$bad' was accepted"; fail=1
    fi
done
exit $fail
