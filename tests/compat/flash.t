#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# flash.t — flash stacks from the command line: describe lists the model's parameters,
# format round-trips, and probe infers the erase block of the cheap FTL from
# collateral damage and finds none under the careful one. TAP.
. "$(dirname "$0")/../test-lib.sh"

out=$("$B" stack format 'flash(ftl=cheap,eb=128k,page=4k,size=256M)')
t "format spells every parameter" \
  '[ "$out" = "flash(ftl=cheap,size=256M,eb=128k,page=4k,sector=512,op=7,endurance=0,cache=0,flush=honor,garbage=false,partial_erase=true,seed=0)" ]'
t "the canonical spec is a fixed point" '[ "$("$B" stack format "$out")" = "$out" ]'
out=$("$B" stack describe 'flash(ftl=cheap) > mem(size=80M)')
t "describe names the FTL choice and its default" \
  'echo "$out" | grep -Eq "^  ftl +  = cheap +\[default careful\]"'
t "describe lists the endurance parameter" 'echo "$out" | grep -Eq "^  endurance +  = 0 "'
# partial_erase, the layer's longest name, sets where every "=" of the layer stands
t "describe keeps the layer's '=' in one column" \
  '[ "$(echo "$out" | grep "^  [a-z_]* *= " | awk "{ print index(\$0, \" = \") }" | sort -u | wc -l)" = 1 ]'
out=$("$B" stack probe 'flash(ftl=cheap,eb=64k,page=4k,size=4M)')
t "probe: cheap flash shows collateral damage of one 64k erase block" \
  'echo "$out" | grep -q "collateral damage: *yes: erase block 64k"'
t "probe: no volatile cache" 'echo "$out" | grep -q "volatile write cache: *no"'
t "probe: a cheap-FTL cut leaves written sectors erased (torn) and tears at pages" \
  'echo "$out" | grep -q "tears sectors (bytes): *yes" && echo "$out" | grep -q "tears multi-sector writes: *yes"'
out=$("$B" stack probe 'flash(ftl=careful,eb=64k,size=4M) > mem(size=5M)')
t "probe: careful flash shows no collateral damage" 'echo "$out" | grep -q "collateral damage: *no"'
out=$("$B" stack probe 'flash(ftl=cheap,eb=64k,size=4M,cache=16k,flush=ignore)')
t "probe: a lying cache in front" 'echo "$out" | grep -q "honours flush: *no"'
err=$("$B" stack probe 'flash(eb=64k,size=4M) > mem(size=4M)' 2>&1); rc=$?
t "a too-small medium fails (exit 1)" '[ $rc -eq 1 ]'
t "saying how much it needs" 'echo "$err" | grep -q "needs"'
done_testing
