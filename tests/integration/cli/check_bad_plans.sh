#!/usr/bin/env bash
# Runs `sluice run` on every malformed plan in bad_plans/ and checks what bad_plans/EXPECT
# says: the exit code, a message on stderr with the fragment and, where a position
# applies, FILE:LINE:COL; nothing on stdout; no crash (exit >= 128) and no sanitizer
# report. Every *.plan there must be listed, and every listed file must exist.
#
#   check_bad_plans.sh SLUICE BAD_PLANS_DIR
set -uo pipefail
sluice=$(readlink -f "$1") dir=$2
cd "$dir" || exit 1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
failures=0 n=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }

declare -A listed
while IFS='|' read -r file want pos frag args; do
    file=$(trim "$file")
    [[ -z $file || $file == \#* ]] && continue
    want=$(trim "$want") pos=$(trim "$pos") frag=$(trim "$frag") args=$(trim "$args")
    listed[$file]=1
    n=$((n + 1))
    [[ -f $file ]] || { fail "$file: listed in EXPECT but missing"; continue; }
    # shellcheck disable=SC2086 # extra args are words
    out=$("$sluice" run $args "$file" 2>"$tmp")
    rc=$?
    err=$(<"$tmp")
    if ((rc >= 128)); then
        fail "$file: crashed (exit $rc): $err"
        continue
    fi
    ((rc == want)) || fail "$file: exit $rc, expected $want: $err"
    [[ -z $out ]] || fail "$file: wrote to stdout: $out"
    [[ $err == *"$frag"* ]] || fail "$file: message lacks '$frag': $err"
    [[ $err == "sluice: "* ]] || fail "$file: message does not start with 'sluice: ': $err"
    if [[ $pos != - ]]; then
        [[ $err == *"$file:$pos: "* ]] || fail "$file: message lacks '$file:$pos: ': $err"
    fi
    if grep -qE 'Sanitizer|runtime error:|LeakSanitizer|Segmentation|Aborted' <<<"$err"; then
        fail "$file: sanitizer or crash report: $err"
    fi
done <EXPECT

for f in *.plan; do
    [[ -n ${listed[$f]:-} ]] || fail "$f: not listed in EXPECT"
done
((n >= 30)) || fail "only $n cases (at least 30 wanted)"
if ((failures)); then
    echo "$failures failure(s) in $n malformed plans"
    exit 1
fi
echo "ok: $n malformed plans give the expected errors"
