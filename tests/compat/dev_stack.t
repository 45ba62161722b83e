#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dev_stack.t — `blackout stack` from the command line: describe, format, probe
# verdicts, models, a parse error with its caret, each action's --help and the
# exit statuses of usage errors. TAP.
. "$(dirname "$0")/../test-lib.sh"

out=$("$B" stack format 'cache(flush=ignore)>disk>mem(size=1048576)')
t "format prints the canonical spec" \
  '[ "$out" = "cache(size=1M,flush=ignore,fua=honor,order=fifo,seed=0,versions=4) > disk(sector=auto,tear=none,tear_unit=1,torn=mixed,garbage=false) > mem(size=1M,sector=512)" ]'
again=$("$B" stack format "$out")
t "the canonical spec is a fixed point" '[ "$again" = "$out" ]'
out=$("$B" stack describe 'cache(flush=ignore) > mem')
t "describe shows each parameter and its default" \
  'echo "$out" | grep -q "flush    = ignore       \[default honor\]"'
out=$("$B" stack probe 'cache(flush=ignore,fua=honor) > disk(tear=sector) > mem(size=64k)')
t "probe: volatile cache" 'echo "$out" | grep -q "volatile write cache: *yes"'
t "probe: flush ignored" 'echo "$out" | grep -q "honours flush: *no"'
t "probe: FUA honoured" 'echo "$out" | grep -q "honours FUA: *yes"'
t "probe: tears writes, not sectors" \
  'echo "$out" | grep -q "tears multi-sector writes: *yes" && echo "$out" | grep -q "tears sectors (bytes): *no"'
err=$("$B" stack describe 'cache(sise=3) > mem' 2>&1); rc=$?
t "a bad spec exits 2 (a malformed operand)" '[ $rc -eq 2 ]'
t "and points at the column" 'echo "$err" | grep -q "column 7: cache has no parameter .sise."'
t "with a caret line" 'echo "$err" | grep -q "^        ^$"'
out=$("$B" stack --help); rc=$?
t "--help exits 0" '[ $rc -eq 0 ]'
for a in describe format probe models; do
	t "--help names $a" 'echo "$out" | grep -q "^ *$a  "'
done
for a in describe format probe models; do
	for h in --help -h; do
		out=$("$B" stack $a $h 2>&1); rc=$?
		t "stack $a $h exits 0" '[ $rc -eq 0 ]'
		t "stack $a $h prints its usage" \
		  'echo "$out" | head -1 | grep -q "^usage: blackout stack $a"'
		t "stack $a $h describes $a only" \
		  '[ $(echo "$out" | grep -c "^usage:") -eq 1 ] && echo "$out" | grep -q "^  $a  "'
	done
done
out=$("$B" stack describe 'mem' --help); rc=$?
t "--help after a SPEC wins too" \
  '[ $rc -eq 0 ] && echo "$out" | grep -q "^usage: blackout stack describe SPEC"'
out=$("$B" stack models); rc=$?
t "models lists the models" '[ $rc -eq 0 ] && echo "$out" | grep -q "^flash — "'
usage() { # usage DESCRIPTION ARGS...: a usage error exits 2 with a pointer to --help
	d=$1; shift
	err=$("$B" stack "$@" 2>&1 >/dev/null); rc=$?
	t "$d exits 2" '[ $rc -eq 2 ] && echo "$err" | grep -q "Try .blackout stack[a-z ]* --help."'
}
usage "an unknown action" bogus x
usage "describe without a SPEC" describe
usage "format without a SPEC" format
usage "probe without a SPEC" probe
usage "two SPECs" format mem mem
usage "models with an argument" models mem
usage "an unknown option" probe --fast 'mem(size=64k)'
err=$("$B" stack 2>&1 >/dev/null); rc=$?
t "no action exits 2, the usage on stderr" \
  '[ $rc -eq 2 ] && echo "$err" | grep -q "^usage: blackout stack describe SPEC"'
done_testing
