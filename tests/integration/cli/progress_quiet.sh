#!/usr/bin/env bash
# The progress bar is for terminals only: with stderr not a terminal, a successful run
# writes nothing to stderr. (On a terminal it draws "[###---]  50%  n/m tasks  t s".)
set -euo pipefail
sluice=$1 plan=$2
err=$("$sluice" run "$plan" 2>&1 >/dev/null)
[[ -z $err ]] || { echo "FAIL: stderr is not a terminal, yet got: $err"; exit 1; }
err=$("$sluice" demo --rows 100003 2>&1 >/dev/null)
[[ -z $err ]] || { echo "FAIL: demo wrote to stderr: $err"; exit 1; }
echo ok
