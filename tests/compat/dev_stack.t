#!/bin/sh
# dev_stack.t — `blackout stack` from the command line: describe, format, probe
# verdicts, and a parse error with its caret. TAP.
B=${BLACKOUT:?set BLACKOUT to the blackout binary}
n=0; fail=0
t() { n=$((n+1)); if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fail=1; fi; }

out=$("$B" stack format 'cache(flush=ignore)>disk>mem(size=1048576)')
t "format prints the canonical spec" \
  '[ "$out" = "cache(size=1M,flush=ignore,fua=honor,order=fifo,seed=0) > disk(sector=auto,tear=none) > mem(size=1M,sector=512)" ]'
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
t "a bad spec exits 1" '[ $rc -eq 1 ]'
t "and points at the column" 'echo "$err" | grep -q "column 7: cache has no parameter .sise."'
t "with a caret line" 'echo "$err" | tail -1 | grep -q "^        ^$"'
"$B" stack --help | grep -q "usage: blackout stack describe SPEC"
t "--help" '[ $? -eq 0 ]'
"$B" stack bogus x >/dev/null 2>&1; rc=$?
t "an unknown action is a usage error (2)" '[ $rc -eq 2 ]'
echo "1..$n"
exit $fail
