#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# crash_explore.t — blackout explore and workloads from the outside: built-ins round-trip
# through the parser, parse errors name line and column, the same command twice gives
# identical JSON, 4 shards merged equal the unsharded run, a kept state rebuilds
# byte-identical and e2fsck judges it as the explorer did.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
B=$BLACKOUT
STACK='cache(size=64k,flush=honor) > disk > mem(size=8M)'

n=$("$B" workloads | wc -l)
[ "$n" -ge 12 ]
ok $? "blackout workloads lists at least 12 built-ins ($n)"

bad=0
for w in $("$B" workloads | awk '{print $1}'); do
	"$B" workloads show "$w" >"$SCRATCH/$w.wl" || bad=1
	"$B" workloads check "$SCRATCH/$w.wl" >"$SCRATCH/$w.again" || bad=1
	cmp -s "$SCRATCH/$w.wl" "$SCRATCH/$w.again" || bad=1
done
ok $bad "every built-in printed by 'workloads show' parses back to the same text"

printf 'run\ncreate /a\nwrite /a 0 zz\n' >"$SCRATCH/bad.wl"
msg=$("$B" workloads check "$SCRATCH/bad.wl" 2>&1)
echo "$msg" | grep -q "line 3, column 12: length: 'zz' is not a size"
ok $? "a parse error names line and column: $msg"

"$B" explore --stack "$STACK" --fs ext3 --workload append-fsync --quiet --json "$SCRATCH/a.json"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ]
ok $? "explore runs (exit $rc)"
"$B" explore --stack "$STACK" --fs ext3 --workload append-fsync --quiet --json "$SCRATCH/b.json"
cmp -s "$SCRATCH/a.json" "$SCRATCH/b.json"
ok $? "the same command twice gives identical JSON"

for i in 0 1 2 3; do
	"$B" explore --stack "$STACK" --fs ext3 --workload append-fsync --quiet \
		--shard $i/4 --json "$SCRATCH/s$i.json"
done
"$B" explore --merge "$SCRATCH/s0.json" "$SCRATCH/s1.json" "$SCRATCH/s2.json" \
	"$SCRATCH/s3.json" --quiet --json "$SCRATCH/m.json"
cmp -s "$SCRATCH/a.json" "$SCRATCH/m.json"
ok $? "4 shards merged equal the unsharded run"
"$B" explore --merge "$SCRATCH/s0.json" "$SCRATCH/s1.json" --quiet 2>"$SCRATCH/err"
grep -q "shards missing" "$SCRATCH/err"
ok $? "merging an incomplete set of shards is refused"

# ext2 on a write cache: a cut leaves inconsistencies that e2fsck finds; keep them
"$B" explore --stack "$STACK" --fs ext2 --workload tree --max-states 80 --e2fsck --quiet \
	--json "$SCRATCH/e2.json" --keep "$SCRATCH/keep"
grep -q '"consistent":[1-9]' "$SCRATCH/e2.json" && grep -q '"e2fsck_runs":[1-9]' "$SCRATCH/e2.json"
ok $? "ext2 after a cut: inconsistencies found, e2fsck run beside the own fsck"
grep -q '"e2fsck_disagree":0,' "$SCRATCH/e2.json"
ok $? "e2fsck agrees with the own fsck on every state it judged"
# a state fsck found inconsistent (its id from the JSON's failures)
id=$(jq -r '[.failures[] | select((.broken | index("consistent")) and .detected_by == "fsck")][0].id' \
	"$SCRATCH/e2.json")
[ -n "$id" ] && [ -s "$SCRATCH/keep/$id.cmd" ]
ok $? "--keep wrote a failing state ($id) and its rebuild command"
cmd=$(sed -e "s|--keep DIR|--keep $SCRATCH/rebuilt --quiet|" -e "s|^blackout |$B |" "$SCRATCH/keep/$id.cmd")
sh -c "$cmd" >/dev/null 2>&1
cmp -s "$SCRATCH/keep/$id.img" "$SCRATCH/rebuilt/$id.img"
ok $? "the rebuild command reproduces the kept state byte for byte"
e2fsck_clean "$SCRATCH/keep/$id.img" >/dev/null
[ $? -ne 0 ]
ok $? "e2fsck -fn on the kept image finds the problem too"

"$B" explore --stack "$STACK" --fs ext3 --workload nosuch 2>"$SCRATCH/err"
[ $? -eq 1 ] && grep -q "no built-in of that name" "$SCRATCH/err"
ok $? "an unknown workload is a clear error"
"$B" explore --stack "$STACK" --fs ext3 --workload wal --state p1-zz 2>"$SCRATCH/err"
grep -q "expected an id like" "$SCRATCH/err"
ok $? "a malformed --state is a clear error"
# --damage names the whole block range a multi-block damaged range covers, not its
# first block alone (4 KiB of a cheap flash page = blocks 1636-1639 of a 1 KiB-block fs)
FL='flash(ftl=cheap,eb=128k,page=4k,size=16M)'
"$B" explore --stack "$FL" --fs ext3 --workload overwrite-fsync --max-states 200 \
	--state p1w-s0 --damage >"$SCRATCH/dmg" 2>&1
grep -Eq '^  damaged  sectors 3272-3279 \(blocks 1636-1639\): the first, /data$' "$SCRATCH/dmg"
ok $? "--damage labels a range with every block it covers"
"$B" explore --help | grep -q -- "--shard I/N"
ok $? "explore --help documents the options"
done_testing
