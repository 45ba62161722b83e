#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_prune.t — pruning on the real kernel (docs/explore.md, "Pruning"): ext4 on a cache
# that ignores flushes (states that fail, silently or not, beside ok ones) recorded in
# one boot, its states enumerated, those whose images agree after blackout's replay of
# the journal pruned, and every pruned state judged by Linux anyway: each must get its
# representative's outcome, and the result says how many were pruned.
. "$(dirname "$0")/vm_lib.sh"

LYING='cache(size=1M,flush=ignore) > mem(size=64M)'
timeout "${VM_TIMEOUT:-1200}" "$BLACKOUT" vmtest --stack "$LYING" --fs ext4 \
	--workload append-fsync --max-states 60 --seed 1 --jobs 2 --prune --prune-check 1 \
	--out "$T/p" --json "$T/p.json" >"$T/p.log" 2>&1
rc=$?
grep -v '^vmtest: enumerated\|^vmtest: judged' "$T/p.log" | head -n 24 | sed 's/^/# /'
[ $rc -eq 0 ] || [ $rc -eq 3 ]
ok $? "ext4 on a lying cache: recorded, enumerated with --prune, judged in guests (exit $rc)"
j() { jq -r "$1" "$T/p.json"; }
[ "$(j .pruned.rule)" = journal-replay ] && [ "$(j .pruned.off)" = null ] &&
	[ "$(j .pruned.states)" -gt 0 ]
ok $? "the rule applied to Linux's ext4 journal and pruned $(j .pruned.states) of $(($(j .judged) + $(j .pruned.states))) distinct states"
[ "$(j .pruned.checked)" = "$(j .pruned.states)" ] &&
	grep -q "^guests: .* $(($(j .judged) + $(j .pruned.states))) states observed" "$T/p.log"
ok $? "every pruned state was judged by Linux anyway ($(j .pruned.checked))"
[ "$(j .pruned.mismatched)" = 0 ]
ok $? "each got its representative's outcome ($(j .pruned.mismatched) differ; $(j .ok) ok, $(j .silent) silent, $(j .detected) detected among the judged)"
[ "$(j .silent)" -gt 0 ] && [ "$(j .ok)" -gt 0 ]
ok $? "the judged states hold ok and silently failing ones, so the check compared both"
grep -q "^pruned:   $(j .pruned.states) states equal to a judged one after journal replay" "$T/p.log"
ok $? "the summary says how many were pruned"
done_testing
