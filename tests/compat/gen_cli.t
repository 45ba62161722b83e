#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# gen_cli.t — `blackout gen`: seq-1's counts line, one workload file per valid sequence
# with deterministic names, each one the workload parser accepts; the same seed writes
# the same files; the explorer runs a generated workload blackout's ext3 supports and
# refuses one it does not, naming the step. TAP.
. "$(dirname "$0")/../test-lib.sh"

out=$("$B" gen --len 1); rc=$?
t "seq-1 counts: 175 workloads, 237 rejected by reason" '[ $rc -eq 0 ] && echo "$out" | grep -q "^seq-1: 175 workloads, 237 rejected (missing 148, exists 52, kind 13, into-self 4, not-empty 12, no-xattr 8); 412 step choices"'
"$B" gen --len 1 --out "$T/s1" >/dev/null; rc=$?
t "--out writes 175 files" '[ $rc -eq 0 ] && [ "$(ls "$T/s1" | wc -l)" = 175 ]'
t "names are seq1-000001 .. seq1-000175" '[ -f "$T/s1/seq1-000001.wl" ] && [ -f "$T/s1/seq1-000175.wl" ]'
bad=0
for f in "$T"/s1/*.wl; do "$B" workloads check "$f" >/dev/null 2>&1 || bad=$((bad + 1)); done
t "every file passes blackout workloads check" '[ $bad -eq 0 ]'
t "mv /A /A/C is never written" '! grep -l "^rename /A /A/C$" "$T"/s1/*.wl'
n=$("$B" gen --len 1 --list 2>/dev/null | wc -l)
t "--list prints one line per workload" '[ "$n" = 175 ]'
"$B" gen --random 20 --seed 7 --length 6 --out "$T/r1" >/dev/null
"$B" gen --random 20 --seed 7 --length 6 --out "$T/r2" >/dev/null
bad=0
for f in "$T"/r1/*.wl; do "$B" workloads check "$f" >/dev/null 2>&1 || bad=$((bad + 1)); done
t "every random workload passes blackout workloads check" '[ $bad -eq 0 ] && [ -f "$T/r1/rand7-000020.wl" ]'
t "the same seed writes the same files" 'diff -r "$T/r1" "$T/r2" >/dev/null && [ "$(ls "$T/r1" | wc -l)" = 20 ]'
err=$("$B" gen --len 4 2>&1); rc=$?
t "--len 4 is a usage error naming the range" '[ $rc -eq 2 ] && echo "$err" | grep -q "len"'
err=$("$B" gen 2>&1); rc=$?
t "neither --len nor --random: usage error" '[ $rc -eq 2 ] && echo "$err" | grep -q "one of --len N or --random COUNT"'
w=$(grep -l "^rename /foo /bar$" "$T"/s1/*.wl | head -n 1)
out=$("$B" explore --stack 'disk > mem(size=16M)' --fs ext3 --workload "$w" --max-states 30 2>&1); rc=$?
t "the explorer runs a generated rename workload" '[ $rc -eq 0 ] && [ -n "$out" ]'
w=$(grep -l "^falloc /foo keep-size" "$T"/s1/*.wl | head -n 1)
err=$("$B" explore --stack 'disk > mem(size=16M)' --fs ext3 --workload "$w" --max-states 30 2>&1); rc=$?
t "and refuses a falloc one: not supported by the model" '[ $rc -ne 0 ] && echo "$err" | grep -q "line 12: falloc: not supported by the model (blackout'"'"'s ext3)"'
done_testing
