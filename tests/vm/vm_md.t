#!/bin/bash
# vm_md.t — Linux md on modelled members (docs/md.md), the recording half: one guest
# boot creates a degraded md RAID5 (4 members, member 3 missing) over the plugin's member
# exports (members=yes), ext4 barrier=1 on /dev/md0, and runs append-fsync; the one log
# holds every member's requests in one order: the missing member gets none, each
# present member is written, and md sends every fsync's flush to each present member
# (the reason a member's flush must reach that member alone). Judging md states in
# guests is not done yet (the pool refuses a store of members; docs/md.md).
. "$(dirname "$0")/../test-lib.sh"
need_tool jq
SRC=${BLACKOUT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
MEMBERS='concat > [cache(size=1M,flush=honor) > mem(size=32M)] x4'

timeout 600 "$SRC/scripts/vmrecord" --stack "$MEMBERS" --md 5:4:3 --fs ext4,barrier=1 \
	--workload append-fsync --out "$T/r" >"$T/rec.log" 2>&1
rc=$?
sed 's/^/# /' "$T/rec.log"
ok $rc "degraded md RAID5 over 3 of 4 member exports: ext4 barrier=1 and append-fsync recorded"
grep -q ' 0 failed)' "$T/rec.log"
ok $? "every step returned in the guest"

"$BLACKOUT" log dump --json "$T/r/io.log" >"$T/log.json"
is "$(jq -c .devices "$T/log.json")" "[65536,65536,65536,65536]" "one log of the 4 members"
# the run: operations after the `step 0` mark
jq '.ops as $o | ($o | map(.name == "step 0") | index(true)) as $s | $o[$s:] |
	map(select(.op != "mark"))' "$T/log.json" >"$T/run.json"
is "$(jq '[.ops[] | select(.op != "mark" and .dev == 3)] | length' "$T/log.json")" 0 \
	"the missing member was sent nothing"
is "$(jq -c '[range(3) as $d | [.[] | select(.dev == $d and .op == "write")] | length > 0]' \
	"$T/run.json")" "[true,true,true]" "each present member was written during the run"
flushes=$(jq -c '[range(3) as $d | [.[] | select(.dev == $d and .op == "flush")] | length]' \
	"$T/run.json")
jq -e 'length == 3 and .[0] > 0 and .[0] == .[1] and .[1] == .[2]' <<<"$flushes" >/dev/null
ok $? "md sent each flush to every present member ($flushes flushes to members 0-2)"

timeout 60 "$SRC/scripts/vmrecord" --stack "$MEMBERS" --md 5:4 --fs ext4 --workload append-fsync \
	--out "$T/bad" >"$T/bad.log" 2>&1
is $? 1 "--md without MISSING is refused"
grep -q -- "--md: LEVEL:N:MISSING" "$T/bad.log"
ok $? "... saying what it takes"

done_testing
