#!/usr/bin/env bash
# matrix_vm.t — `blackout matrix --vm` folds real-kernel runs into the table. qemu is
# exercised by tests/vm (make check-vm); here a stand-in scripts/vmtest answers each
# run with a result in the explorer's format that depends on its arguments, so the test checks exactly what
# the matrix makes of vmtest's results: which cells run with which --fs, the counts
# in the cells and the verdict, and that a malformed result is refused by name.
. "$BLACKOUT_SRC/tests/compat/lib.sh"

fake="$SCRATCH/src"
mkdir -p "$fake/scripts"
cat >"$fake/scripts/vmtest" <<'EOF'
#!/bin/bash
# stand-in: barrier=0 loses synced data in 2 of 3 cuts, cheap flash damages a
# bystander in 1; MALFORMED=1 writes a result without counts
while [ $# -gt 0 ]; do
	case "$1" in --stack) stack=$2 ;; --fs) fs=$2 ;; --explore-json) json=$2 ;; --cuts) cuts=$2 ;; esac
	shift 2
done
echo "$stack|$fs|$cuts" >>"$CALLS"
if [ -n "$MALFORMED" ]; then echo '{"blackout_explore":1,"ok":1}' >"$json"; exit 0; fi
lost=0 by=0
case "$fs" in *barrier=0*) lost=2 ;; esac
case "$stack" in flash*) by=1 ;; esac
bad=$(( lost > by ? lost : by ))
printf '{"blackout_explore":1,"stack":"%s","fs":"linux-%s","workload":"mixed","seed":1,"max_states":%d,"shard":0,"nshards":1,"cuts":%d,"space":0,"space_log2":0,"exhaustive":false,"built":3,"coverage":0,"judged":3,"duplicates":0,"ok":%d,"silent":%d,"detected":0,"e2fsck_runs":3,"e2fsck_disagree":0,"violations":{"durable":%d,"stale":0,"bystander":%d,"consistent":0,"atomic":0},"allowed":{"durable":0,"stale":0,"bystander":0,"consistent":0,"atomic":0},"failures":[]}\n' \
	"$stack" "$fs" "$cuts" "$cuts" $((3 - bad)) $bad $lost $by >"$json"
EOF
chmod +x "$fake/scripts/vmtest"
export CALLS="$SCRATCH/calls"

BLACKOUT_SRC="$fake" "$BLACKOUT" matrix --quick --max-states 10 --vm --vm-cuts 3 \
	--out "$SCRATCH/rep" >"$SCRATCH/table.txt" 2>"$SCRATCH/err.txt"
ok $? "blackout matrix --vm ran with the stand-in vmtest"
J="$SCRATCH/rep/matrix.json"

[ "$(wc -l <"$CALLS")" -eq 6 ] && [ "$(grep -c '|3$' "$CALLS")" -eq 6 ] &&
	[ "$(grep -c '|ext3,barrier=0|' "$CALLS")" -eq 3 ] &&
	[ "$(grep -c '|ext3,barrier=1|' "$CALLS")" -eq 3 ]
ok $? "one vmtest run per real-kernel cell: 3 rows x barrier=0/1, --cuts passed on"

jq -e '[.rows[].id] | contains(["vm-cache","vm-cache-lying","vm-flash-cheap"])' "$J" >/dev/null &&
	jq -e '(.cells|length) == ((.rows|length) * (.columns|length))' "$J" >/dev/null
ok $? "the real-kernel rows are in matrix.json, one cell per column"

jq -e 'all(.cells[] | select(.row|startswith("vm-")); .ran == (.col == "ext3-ordered-b0" or .col == "ext3-ordered-b1"))' "$J" >/dev/null
ok $? "only the barrier=0/1 ordered columns ran; the others are n/a with a note"

jq -e '.cells[] | select(.row=="vm-cache" and .col=="ext3-ordered-b0") |
  .states == 3 and .ok == 1 and .violations.durable == 2 and .silent == 2' "$J" >/dev/null &&
	jq -e '.cells[] | select(.row=="vm-flash-cheap" and .col=="ext3-ordered-b1") |
  .states == 3 and .ok == 2 and .violations.bystander == 1 and .violations.durable == 0' "$J" >/dev/null
ok $? "cells carry vmtest's counts (cuts as states, lost synced data, bystanders, silent)"

jq -e 'all(.cells[] | select((.row|startswith("vm-")) and .ran); (.states - .ok) as $f |
  .silent + .detected == $f and all(.violations[]; . <= $f))' "$J" >/dev/null
ok $? "the real-kernel cells keep the schema's relations"

jq -e '[.verdicts[] | select(.expectation=="REAL-KERNEL")] | length == 3' "$J" >/dev/null &&
	tr -s '\n ' '  ' <"$SCRATCH/table.txt" | grep -q 'REAL-KERNEL.*barrier=0 lost synced data in 2 of 3' # verdicts wrap at 100 columns
ok $? "a REAL-KERNEL verdict per row, computed from the cells"

MALFORMED=1 BLACKOUT_SRC="$fake" "$BLACKOUT" matrix --quick --max-states 10 --vm --vm-cuts 1 \
	--out "$SCRATCH/rep2" >/dev/null 2>"$SCRATCH/err2.txt"
rc=$?
[ $rc -ne 0 ] && grep -q "explore.json: .*'stack'" "$SCRATCH/err2.txt"
ok $? "a malformed vmtest result is refused, naming the file and the field (rc $rc)"
sed 's/^/#   /' "$SCRATCH/err2.txt"

done_testing
