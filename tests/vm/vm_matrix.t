#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_matrix.t — `blackout matrix --vm` with the real harness: one honest write cache
# row, blackout's ext3 beside Linux ext4 (barrier=1), 10 crash states of one recorded
# run, run as 2 shards and merged. The Linux cell ran in qemu and judged its states,
# nothing lost synced data,
# the REAL-KERNEL line compares the two, and the merge equals the unsharded run. The
# unsharded run's application section has one real cell: the append-only log example
# under `blackout app` on the same honest cache (shards do not run the section). Then one
# Linux md cell: md RAID5 over the degraded RAID5 row's members, 6 states.
. "$(dirname "$0")/vm_lib.sh"

ARGS="--rows cache --columns ext3-ordered-b1,linux-ext4-b1 --workloads append-fsync
      --max-states 30 --vm --vm-states 10 --vm-workloads append-fsync --jobs 1
      --vm-apps append-log"
# shellcheck disable=SC2086
timeout 600 "$BLACKOUT" matrix $ARGS --out "$T/whole" >"$T/whole.txt" 2>"$T/whole.err"
ok $? "matrix --vm ran a real-kernel cell"
sed 's/^/# /' "$T/whole.txt" | head -12
J="$T/whole/matrix.json"
jq -e '.cells[] | select(.col=="linux-ext4-b1") | .ran and .states >= 1 and .states <= 10 and
  .violations.durable == 0 and (.note|test("Linux ext4,barrier=1 in qemu"))' "$J" >/dev/null
ok $? "the Linux cell judged its states in qemu and lost no synced data"
[ -s "$T/whole/vm/cache-linux-ext4-b1-append-fsync/explore.json" ]
ok $? "the run's logs and result stay under DIR/vm/<row>-<column>-<workload>"
jq -r '.verdicts[] | select(.expectation=="REAL-KERNEL") | .text' "$J" |
	grep -q "^On write cache, flush honoured: with barrier=1 they agree"
ok $? "REAL-KERNEL holds blackout's ext3 against Linux ext4 on the same stack"
jq -e '.apps.cells == [.apps.cells[0]] and (.apps.cells[0] | .row == "cache" and
  .col == "append-log" and .ran and .states >= 1 and .states <= 10 and .lost == 0 and
  .ok == .states)' "$J" >/dev/null &&
	[ -s "$T/whole/vm/apps/cache-applog/app.json" ]
ok $? "the application cell ran blackout app in qemu: the append log lost no acknowledged record"
jq -c '.apps.cells[0]' "$J" | sed 's/^/# /'
jq -r '.apps.verdicts[0].text' "$J" | sed 's/^/# /'

# Linux md over the degraded RAID5 row's own members (docs/matrix.md): one md cell
timeout 600 "$BLACKOUT" matrix --rows raid5-degraded --columns linux-md-ext4 --workloads append-fsync \
	--vm --vm-states 6 --vm-workloads append-fsync --jobs 1 --vm-apps none --out "$T/md" \
	>"$T/md.txt" 2>"$T/md.err"
ok $? "matrix --vm ran a Linux md cell"
MD="$T/md/vm/raid5-degraded-linux-md-ext4-append-fsync"
jq -e '.cells[] | select(.col=="linux-md-ext4") | .ran and .states >= 1 and .states <= 6' \
	"$T/md/matrix.json" >/dev/null &&
	grep -q 'stack:    concat > \[disk > mem(size=22M)\] x4' "$MD/vmtest.log" &&
	[ "$(grep -c '^m[0-9] ' "$MD/states/members")" -eq 4 ] &&
	grep -q 'level 5, 4k chunk, algorithm 2 \[4/3\]' "$MD/record/console"
ok $? "the md cell judged its states: md RAID5 over the row's 4 members, 4 KiB chunks, left-symmetric, one missing"
jq -c '.cells[] | select(.col=="linux-md-ext4")' "$T/md/matrix.json" | cut -c1-300 | sed 's/^/# /'

for i in 0 1; do
	# shellcheck disable=SC2086
	timeout 600 "$BLACKOUT" matrix $ARGS --shard $i/2 --out "$T/s$i" --json "$T/part-$i.json" \
		>/dev/null 2>"$T/s$i.err" || echo "shard $i failed" >&2
done
"$BLACKOUT" matrix --merge "$T/part-0.json" "$T/part-1.json" --out "$T/merged" >/dev/null 2>&1
# the guest's timing moves its writes a little between recordings (docs/vmtest.md), so
# the real-kernel cell is compared by where it is and that it ran, the rest byte for byte
jq -S 'del(.cells[] | select(.col=="linux-ext4-b1") | .violations, .ok, .silent, .detected, .states, .coverage, .exhaustive, .allowed, .example) | del(.verdicts) | del(.apps)' \
	"$J" >"$T/a.json" &&
	jq -S 'del(.cells[] | select(.col=="linux-ext4-b1") | .violations, .ok, .silent, .detected, .states, .coverage, .exhaustive, .allowed, .example) | del(.verdicts)' \
		"$T/merged/matrix.json" >"$T/b.json" && cmp "$T/a.json" "$T/b.json"
ok $? "two shards with a real-kernel cell merge into the unsharded matrix"
done_testing
