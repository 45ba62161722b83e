#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_md.t — `blackout matrix --vm`'s linux-md-ext4 column: Linux md over each RAID
# row's own members (docs/matrix.md), and the REAL-MD verdicts comparing it with Linux
# ext4 on blackout's RAID model; then the linux-dmint-ext4 column (dm-integrity under
# Linux ext4 on the cheap flash and torn-sector rows) and its REAL-INTEGRITY verdicts. qemu is exercised by tests/vm; here a stand-in for
# `blackout vmtest` (BLACKOUT_VM_CELL) records the arguments each run gets and answers
# with a result that depends on them, so the test checks what the matrix asks md for
# (the members, --md, --md-chunk), the rows md has no counterpart for and why, and what
# the verdicts say when the model and md agree and when they differ.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
need_tool jq

fake="$SCRATCH/src"
mkdir -p "$fake"
cat >"$fake/vmcell" <<'EOF'
#!/bin/bash
[ "$1" = --stack ] || exit 2
md=none chunk=none integ=0
while [ $# -gt 0 ]; do
	[ "$1" = --integrity ] && integ=1 && shift && continue
	case "$1" in --stack) stack=$2 ;; --fs) fs=$2 ;; --json) json=$2 ;; --md) md=$2 ;; --md-chunk) chunk=$2 ;; esac
	shift 2
done
echo "$stack|$fs|$md|$chunk|$integ" >>"$CALLS"
# flash and torn sectors damage a bystander in 2 states: silent on the plain disk, a
# read error (detected) over dm-integrity
by=0 det=0
case "$stack" in flash* | *tear=byte*) by=2 ;; esac
[ $integ = 1 ] && det=$by
# a hole (fsck damage in 2 of 3 states) where a member is missing and no journal;
# MODEL_NOHOLE=1: the model's degraded array shows none; a lying cache loses synced data
hole=0 lost=0
case "$md" in none) case "$stack" in *missing=1\)*) [ -n "$MODEL_NOHOLE" ] || hole=2 ;; esac ;;
*:-*) ;; *:j) ;; *) hole=2 ;; esac
case "$stack" in *flush=ignore*) lost=1 ;; esac
bad=$(( hole > lost ? hole : lost ))
bad=$(( by > bad ? by : bad ))
printf '{"blackout_explore":1,"stack":"%s","fs":"linux-%s","workload":"append-fsync","seed":1,"max_states":3,"shard":0,"nshards":1,"cuts":3,"space":0,"space_log2":0,"exhaustive":false,"built":3,"coverage":0.5,"judged":3,"duplicates":0,"ok":%d,"silent":%d,"detected":%d,"e2fsck_runs":3,"e2fsck_disagree":0,"violations":{"durable":%d,"stale":0,"bystander":%d,"consistent":%d,"atomic":0},"allowed":{"durable":0,"stale":0,"bystander":0,"consistent":0,"atomic":0},"failures":[]}\n' \
	"$stack" "$fs" $((3 - bad)) $((bad - det)) $det $lost $by $hole >"$json"
EOF
chmod +x "$fake/vmcell"
export CALLS="$SCRATCH/calls"
ROWS=cache,raid5,raid5-degraded,raid5-degraded-journal,raid6-2missing,raid5-cache-lying,raid5-nobarrier
run() { # OUT [ENV=...]
	out=$1
	shift
	env "$@" BLACKOUT_VM_CELL="$fake/vmcell" "$BLACKOUT" matrix --rows $ROWS \
		--columns linux-ext4-b1,linux-md-ext4 --workloads append-fsync --vm --vm-states 3 \
		--vm-apps none --out "$SCRATCH/$out" >"$SCRATCH/$out.txt" 2>"$SCRATCH/$out.err"
}

run rep
ok $? "blackout matrix --vm with the md column ran with the stand-in vmtest"
J="$SCRATCH/rep/matrix.json"
sed 's/^/#   /' "$CALLS"

D='disk > mem(size=22M)'
grep -qxF "concat > [$D] x4|ext4,barrier=1|5:4:1|4|0" "$CALLS" &&
	grep -qxF "concat > [$D] x4|ext4,barrier=1|5:4:-|4|0" "$CALLS" &&
	grep -qxF "concat > [$D ; $D ; $D ; $D ; mem(size=4M)]|ext4,barrier=1|5:4:1:j|4|0" "$CALLS" &&
	grep -qxF "concat > [cache(size=64k,flush=ignore) > $D] x4|ext4,barrier=1|5:4:-|4|0" "$CALLS"
ok $? "md gets each RAID row's own members under a concat, its level, member count, missing member, journal and chunk"

[ "$(grep -c '|none|none|0$' "$CALLS")" -eq 7 ] && [ "$(grep -vc '|none|none|0$' "$CALLS")" -eq 4 ] &&
	grep -qF 'raid5(chunk=4k,missing=1) > [disk > mem(size=22M)] x4|ext4,barrier=1|none|none|0' "$CALLS"
ok $? "Linux ext4 on the model runs on every row that serves a guest, md on the 4 it has a counterpart for"

na() { jq -r --arg r "$1" '.cells[] | select(.row==$r and .col=="linux-md-ext4") | select(.ran|not) | .note' "$J"; }
na cache | grep -q 'not a RAID row' &&
	na raid6-2missing | grep -q 'missing=1:2: .*one member' &&
	na raid5-nobarrier | grep -q 'passes flushes'
ok $? "a row md has no counterpart for says why in its md cell"

jq -r '.verdicts[] | select(.expectation=="REAL-MD") | .text' "$J" | sed 's/^/#   /'
jq -r '[.verdicts[] | select(.expectation=="REAL-MD")][0].text' "$J" |
	grep -q 'on 4 of 4 RAID rows they agree whether the write hole appears, on 4 whether synced data is lost\.$' &&
	jq -r '.verdicts[] | select(.expectation=="REAL-MD") | .text' "$J" |
	grep -q '^On RAID5, one missing, .*: the write hole (.*): the model in at least 2 of 3 states, md in at least 2 of 3: they agree; synced data lost: the model in 0 of 3 states, md in 0 of 3: they agree\.' &&
	jq -r '.verdicts[] | select(.expectation=="REAL-MD") | .text' "$J" |
	grep -q '^On RAID5 over lying caches, .*: the model in 0 of 3 states, md in 0 of 3: they agree; synced data lost: the model in 1 of 3 states, md in 1 of 3: they agree\.'
ok $? "REAL-MD: the model and md agree row by row, on the hole and on synced data a lying cache loses"

: >"$CALLS"
run differ MODEL_NOHOLE=1
J="$SCRATCH/differ/matrix.json"
jq -r '[.verdicts[] | select(.expectation=="REAL-MD")][0].text' "$J" |
	grep -q 'on 3 of 4 RAID rows they agree whether the write hole appears, on 4 whether synced data is lost; they differ on raid5-degraded (the hole)' &&
	jq -r '.verdicts[] | select(.expectation=="REAL-MD") | .text' "$J" |
	grep -q '^On RAID5, one missing, .*: the write hole (.*): the model in 0 of 3 states, md in at least 2 of 3: they differ — no rule explains it: compare the two cells. examples; synced data lost: .* they agree\.'
ok $? "REAL-MD: a disagreement is named in the summary and its row says what the rules know"


# ---- dm-integrity under Linux ext4 (linux-dmint-ext4) ----
: >"$CALLS"
BLACKOUT_VM_CELL="$fake/vmcell" "$BLACKOUT" matrix --rows cache,flash-cheap-128k,torn --columns ext3-csum,linux-ext4-b1,linux-dmint-ext4 \
	--workloads append-fsync --max-states 20 --vm --vm-states 3 --vm-apps none \
	--out "$SCRATCH/dmint" >"$SCRATCH/dmint.txt" 2>"$SCRATCH/dmint.err" </dev/null
ok $? "blackout matrix --vm with the dm-integrity column ran"
J="$SCRATCH/dmint/matrix.json"
sed 's/^/#   /' "$CALLS"
[ "$(grep -c '|1$' "$CALLS")" -eq 2 ] &&
	grep -qxF 'flash(ftl=cheap,eb=128k,size=64M)|ext4,barrier=1|none|none|1' "$CALLS" &&
	grep -qxF 'disk(tear=byte) > mem(size=64M)|ext4,barrier=1|none|none|1' "$CALLS" &&
	jq -r '.cells[] | select(.row=="cache" and .col=="linux-dmint-ext4") | .note' "$J" |
	grep -q 'cheap flash and torn-sector rows'
ok $? "dm-integrity runs (vmtest --integrity) on the row's own device on the cheap flash and torn rows; elsewhere says why not"
jq -r '.verdicts[] | select(.expectation=="REAL-INTEGRITY") | .text' "$J" | sed 's/^/#   /'
jq -r '.verdicts[] | select(.expectation=="REAL-INTEGRITY") | .text' "$J" |
	grep -Eq '^On cheap flash \(128 KiB erase blocks\), Linux ext4 barrier=1: without checksums 2 of 2 failing states were silent \(bystanders damaged in 2\); over dm-integrity.s data checksums 0 of 2 \(bystanders damaged in 2\): every damaged sector read back as an error; blackout.s ext3 with metadata checksums \(metadata_csum\)(: [0-9]+ of [0-9]+| broke no invariant in [0-9]+ states)\.' &&
	jq -r '.verdicts[] | select(.expectation=="REAL-INTEGRITY") | .text' "$J" | grep -q '^On torn sectors, '
ok $? "REAL-INTEGRITY: silent damage without checksums, read errors with dm-integrity, beside metadata checksums"

done_testing
