#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_vm.t — `blackout matrix --vm` adds real-kernel columns (Linux ext4 barrier=1 and
# barrier=0, xfs, btrfs) on every row that can serve a guest. qemu is exercised by
# tests/vm (make check-vm); here a stand-in for the real-kernel run (BLACKOUT_VM_CELL, given the cell's options as
# `blackout vmtest` spells them) answers each run with a result
# in the explorer's format that depends on its arguments, so the test checks exactly what
# the matrix makes of them: which cells run with which stack and --fs, the counts, the
# cells that cannot run and why, the verdict comparing blackout's ext3 with Linux ext4,
# and a failed or malformed run reported in its cell (exit 1) without ending the matrix.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
need_tool jq

fake="$SCRATCH/src"
mkdir -p "$fake"
cat >"$fake/vmcell" <<'EOF'
#!/bin/bash
# a real-kernel cell's options, as `blackout vmtest` spells them
[ "$1" = --stack ] || exit 2
# stand-in: barrier=0 loses synced data in 2 of 3 states, cheap flash damages a
# bystander in 1; FAILFS=FS fails that filesystem; MALFORMED=1 writes a result
# without counts
while [ $# -gt 0 ]; do
	case "$1" in --stack) stack=$2 ;; --fs) fs=$2 ;; --json) json=$2 ;; --max-states) cuts=$2 ;; esac
	shift 2
done
echo "$stack|$fs|$cuts" >>"$CALLS"
if [ "$fs" = "$FAILFS" ]; then echo "vmtest: --fs: no such filesystem here: $fs" >&2; exit 2; fi
if [ -n "$MALFORMED" ]; then echo '{"blackout_explore":1,"ok":1}' >"$json"; exit 0; fi
lost=0 by=0
case "$fs" in *barrier=0*) lost=2 ;; esac
case "$stack" in flash*) by=1 ;; esac
bad=$(( lost > by ? lost : by ))
printf '{"blackout_explore":1,"stack":"%s","fs":"linux-%s","workload":"mixed","kernel":"6.1.0-57-cloud-amd64","seed":1,"max_states":%d,"shard":0,"nshards":1,"cuts":%d,"space":0,"space_log2":0,"exhaustive":false,"built":3,"coverage":0.5,"judged":3,"duplicates":0,"ok":%d,"silent":%d,"detected":0,"e2fsck_runs":3,"e2fsck_disagree":0,"violations":{"durable":%d,"stale":0,"bystander":%d,"consistent":0,"atomic":0},"allowed":{"durable":0,"stale":0,"bystander":0,"consistent":0,"atomic":0},"failures":[]}\n' \
	"$stack" "$fs" "$cuts" "$cuts" $((3 - bad)) $bad $lost $by >"$json"
EOF
chmod +x "$fake/vmcell"
export CALLS="$SCRATCH/calls"
ROWS=cache,cache-lying,flash-cheap-128k,write-errors
COLS=ext3-ordered-b0,ext3-ordered-b1,linux-ext4-b1,linux-ext4-b0,linux-xfs,linux-btrfs
run() { # OUT [ENV=...]: the small matrix with the stand-in
	out=$1
	shift
	env "$@" BLACKOUT_VM_CELL="$fake/vmcell" "$BLACKOUT" matrix --rows $ROWS --columns $COLS \
		--workloads append-fsync --max-states 10 --vm --vm-states 3 --vm-apps none \
		--out "$SCRATCH/$out" \
		>"$SCRATCH/$out.txt" 2>"$SCRATCH/$out.err"
}

run rep
ok $? "blackout matrix --vm ran with the stand-in vmtest"
J="$SCRATCH/rep/matrix.json"

[ "$(wc -l <"$CALLS")" -eq 12 ] && [ "$(grep -c '|3$' "$CALLS")" -eq 12 ] &&
	[ "$(grep -c '|ext4,barrier=1|' "$CALLS")" -eq 3 ] &&
	[ "$(grep -c '|ext4,barrier=0|' "$CALLS")" -eq 3 ] &&
	[ "$(grep -c '|xfs|' "$CALLS")" -eq 3 ] && [ "$(grep -c '|btrfs|' "$CALLS")" -eq 3 ]
ok $? "one vmtest run per real-kernel cell: 3 rows that can serve a guest x 4 filesystems"
sed 's/^/#   /' "$CALLS" | sort -u | head -4

grep -q '^cache(size=256k,flush=honor) > disk(tear=none) > mem(size=64M)|' "$CALLS" &&
	grep -q '^flash(ftl=cheap,eb=128k,size=64M)|' "$CALLS" && ! grep -q 'fault' "$CALLS"
ok $? "each row's own stack, its media grown to 64 MiB, is what Linux gets"

jq -e '[.columns[].id] == ["ext3-ordered-b0","ext3-ordered-b1","linux-ext4-b1","linux-ext4-b0","linux-xfs","linux-btrfs"]
  and (.cells|length) == ((.rows|length) * (.columns|length))' "$J" >/dev/null
ok $? "the real-kernel columns are in matrix.json, one cell per row"

jq -e '.cells[] | select(.row=="write-errors" and (.col|startswith("linux-"))) |
  (.ran|not) and (.note|test("fault rule"))' "$J" >/dev/null
ok $? "a row Linux cannot be given (a fault armed after set-up) says why in its cells"

jq -e '.cells[] | select(.row=="cache" and .col=="linux-ext4-b0") |
  .ran and .states == 3 and .ok == 1 and .violations.durable == 2 and .silent == 2' "$J" >/dev/null &&
	jq -e '.cells[] | select(.row=="flash-cheap-128k" and .col=="linux-xfs") |
  .states == 3 and .ok == 2 and .violations.bystander == 1 and .violations.durable == 0' "$J" >/dev/null
ok $? "cells carry vmtest's counts (cuts as states, lost synced data, bystanders, silent)"

jq -e 'all(.cells[] | select((.col|startswith("linux-")) and .ran); (.states - .ok) as $f |
  .silent + .detected == $f and all(.violations[]; . <= $f) and (.note|test("Linux")))' "$J" >/dev/null
ok $? "the real-kernel cells keep the schema's relations and say what ran"

jq -e '[.verdicts[] | select(.expectation=="REAL-KERNEL")] | length == 4' "$J" >/dev/null &&
	jq -r '[.verdicts[] | select(.expectation=="REAL-KERNEL")][0].text' "$J" |
	grep -q 'agree on 3 of 6 stack and barrier pairs .*; they differ on cache-lying barrier=1, flash-cheap-128k barrier=1, flash-cheap-128k barrier=0' &&
	jq -r '.verdicts[] | select(.expectation=="REAL-KERNEL") | .text' "$J" |
	grep -q '^On write cache, flush honoured: with barrier=1 they agree: .*; with barrier=0 they agree: .*barrier=0 sends no flush'
ok $? "REAL-KERNEL: where ext3 and Linux ext4 agree and differ, then a line per row with the reason"
jq -r '.verdicts[] | select(.expectation=="REAL-KERNEL") | .text' "$J" | sed 's/^/#   /'

python3 - "$SCRATCH/rep.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
bad = [l for l in lines if len(l) > 100]
sys.exit(1 if bad or sum(l.startswith("stack \\ filesystem") for l in lines) != 1 else 0)
PY
ok $? "six columns still make one block of at most 100 columns"

K=6.1.0-57-cloud-amd64
[ "$(jq -r '[.cells[] | select(.col | startswith("linux-")) | select(.ran) | .kernel] | unique | join(",")' "$J")" = $K ] &&
	[ "$(jq '[.cells[] | select(.col | startswith("ext3-")) | select(has("kernel"))] | length' "$J")" = 0 ]
ok $? "real-kernel cells that ran name the kernel their runs booted; the explorer's cells carry none"
[ "$(grep -c "^ *kernel $K\$" "$SCRATCH/rep.txt")" = 4 ] &&
	grep -q "| Linux ext4 b=1 ($K) |" "$SCRATCH/rep/matrix.md" &&
	grep -q "kernel $K</small></th>" "$SCRATCH/rep/report.html"
ok $? "the real-kernel columns' headers say which kernel: legend, Markdown, HTML"

: >"$CALLS"
run fail FAILFS=btrfs
rc=$?
[ $rc -eq 1 ] && grep -q 'real-kernel cells had a run fail' "$SCRATCH/fail.err" &&
	jq -e '[.cells[] | select(.col=="linux-btrfs" and .row!="write-errors")] |
  length == 3 and all(.[]; (.ran|not) and (.note|test("vmtest failed \\(exit 2\\): vmtest: --fs: no such")))' \
		"$SCRATCH/fail/matrix.json" >/dev/null &&
	jq -e '[.cells[] | select(.col=="linux-xfs" and .ran)] | length == 3' "$SCRATCH/fail/matrix.json" >/dev/null
ok $? "a failed real-kernel run is reported in its cell, the others run, exit 1 (rc $rc)"

run mal MALFORMED=1
rc=$?
[ $rc -eq 1 ] && jq -e '.cells[] | select(.row=="cache" and .col=="linux-ext4-b1") |
  (.ran|not) and (.note|test("vm/cache-linux-ext4-b1-append-fsync/explore.json: .*.stack."))' \
	"$SCRATCH/mal/matrix.json" >/dev/null
ok $? "a malformed vmtest result is refused in its cell, naming the file and the field (rc $rc)"
jq -r '.cells[] | select(.row=="cache" and .col=="linux-ext4-b1") | .note' "$SCRATCH/mal/matrix.json" | sed 's/^/#   /'

done_testing
