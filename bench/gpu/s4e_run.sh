#!/usr/bin/env bash
# Session 4, fifth call: NPJ's direct table at low match ratios against PHJ (the
# non-matching probe keys fall outside the build's key range: no table access), and the
# host-resident aggregate under auto after the overlap change in placement.c.
#   there (carry .carry-f): bash bench/gpu/s4e_run.sh
set -u
BUDGET=240 source bench/gpu/final3_common.sh
for m in 0.25 0.1 1; do for a in nopart radix; do
  step match.txt 30 $S bench join --build-rows 2^27 --probe-rows 2^27 --payloads 2 --match-ratio $m \
      --placement gpu --resident device --algo $a --repeat 5 --json
done; done
for m in 0.1; do
  step match.txt 30 $S bench join --build-rows 2^27 --probe-rows 2^27 --payloads 1 --match-ratio $m \
      --placement gpu --resident device --algo nopart --repeat 5 --json
done
for p in auto gpu; do
  step agg.txt 40 $S bench aggregate --rows 2^27 --resident pinned --placement $p --repeat 5 --json
done
pack_logs
