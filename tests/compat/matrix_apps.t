#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_apps.t — `blackout matrix --vm`'s application section: the built-in examples of
# docs/apps.md (columns) on the run's stacks among nocache, cache, cache-lying and
# flash-cheap-128k (rows), each cell one `blackout app` run. No guest: a stand-in for
# the real-kernel runs (BLACKOUT_VM_CELL) answers each app run with a
# result whose failing states depend on the stack and the example, so the test checks
# exactly what the matrix makes of them: which runs with which arguments, the counts per
# column (the rename run split into its two files), the verdict per example, a broken
# result refused in its cells (exit 1), the database examples only when --vm-apps names
# them, and nothing of it without --vm.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
need_tool jq

fake="$SCRATCH/src"
mkdir -p "$fake"
cat >"$fake/cell" <<'EOF'
#!/bin/bash
# stand-in: vmtest answers every run ok; app answers by stack and example:
#   SQLite: the lying cache loses 2 of 4 states' commits;
#   rename: config-nofsync empty in 1 state everywhere; on the lying cache config lost in 1
#   append log: lying cache 1 lost + 1 that did not mount; flash: checker crash 1, hang 1
# BROKEN=count: the cache row's WAL result lists a failure its counts do not have;
# BROKEN=workload: that result is of another workload
# the options as `blackout vmtest` and `blackout app` spell them: an app run's first
cmd=vmtest
[ "$1" = --checker ] && cmd=app
with=-
while [ $# -gt 0 ]; do
	case "$1" in
	--stack) stack=$2 ;; --fs) fs=$2 ;; --json) json=$2 ;; --max-states) n=$2 ;;
	--checker) checker=$2 ;; --with) with=$2 ;; --seed) seed=$2 ;; --out | --jobs | --workload) ;;
	--timeout) to=$2 ;; --check-timeout) to="$to $2" ;; --state-timeout) to="$to $2" ;;
	*) break ;;
	esac
	shift 2
done
if [ "$cmd" = vmtest ]; then
	printf '{"blackout_explore":1,"stack":"s","fs":"f","workload":"append-fsync","seed":1,"max_states":%d,"shard":0,"nshards":1,"cuts":3,"space":0,"space_log2":0,"exhaustive":false,"built":3,"coverage":0.5,"judged":3,"duplicates":0,"ok":3,"silent":0,"detected":0,"e2fsck_runs":3,"e2fsck_disagree":0,"violations":{"durable":0,"stale":0,"bystander":0,"consistent":0,"atomic":0},"allowed":{"durable":0,"stale":0,"bystander":0,"consistent":0,"atomic":0},"failures":[]}\n' "$n" >"$json"
	exit 0
fi
[ "$cmd" = app ] || exit 2
echo "app|$stack|$fs|$n|$seed|${checker#$BLACKOUT_SRC/}|${with##*/}|${*#$BLACKOUT_SRC/}" >>"$CALLS"
echo "${1##*/apps/}|$to" >>"$CALLS.timeouts"
F=() # failures: "broken detected detected_by detail"
# PostgreSQL: full_page_writes=off on the 4 KiB tearing drive has a damaged table in one
# state; synchronous_commit=off loses the last commit where the cache is honest; the
# durable setting only on the lying cache
case "$1|$2$3|$stack" in
*postgres*\|onoff\|*sector=4096,tear=sector*)
	F+=("consistent true app app: corruption detected: corrupt: damaged u: 54 rows, 54 keys") ;;
*postgres*\|offon\|*flush=honor*)
	F+=("durable false - app: lost acknowledged work: acknowledged commits missing: 1") ;;
*postgres*\|onon\|*flush=ignore*)
	F+=("durable false - app: lost acknowledged work: acknowledged commits missing: 2") ;;
esac
case "$1|$stack" in
*sqlite*flush=ignore*)
	F+=("durable false - app: lost acknowledged work: commit 4 missing")
	F+=("durable false - app: lost acknowledged work: commit 3 missing") ;;
*rename*flush=ignore*)
	F+=("durable false - app: lost acknowledged work: config: lost: version 1, but 2 was acknowledged")
	F+=("consistent true app app: corruption detected: config-nofsync: empty") ;;
*rename*)
	F+=("consistent true app app: corruption detected: config-nofsync: empty") ;;
*applog*flush=ignore*)
	F+=("durable false - app: lost acknowledged work: record 3 missing")
	F+=("consistent true mount consistent: mount failed") ;;
*applog*flash*)
	F+=("consistent true checker-crash app: the checker crashed (signal 11): ")
	F+=("consistent true checker-hang app: the checker hung (killed at its timeout)") ;;
esac
wl=app
case "$BROKEN|$1|$2|$stack" in
count*sqlite*wal*flush=honor*) F+=("durable false - app: lost acknowledged work: commit 1 missing") ;;
workload*sqlite*wal*flush=honor*) wl=mixed ;;
esac
fails="" silent=0 det=0 dur=0 con=0 i=0
for f in "${F[@]}"; do
	read -r br d by detail <<<"$f"
	i=$((i + 1))
	[ "$d" = true ] && det=$((det + 1)) || silent=$((silent + 1))
	[ "$br" = durable ] && dur=$((dur + 1)) || con=$((con + 1))
	[ "$by" = - ] && by=""
	fails="$fails${fails:+,}{\"id\":\"p$i-0\",\"pos\":$i,\"inflight\":false,\"completed\":1,\"broken\":[\"$br\"],\"allowed\":[],\"detected\":$d,\"detected_by\":\"$by\",\"e2fsck_agrees\":-1,\"detail\":\"$detail\"}"
done
nf=${#F[@]}
[ "$BROKEN" = count ] && case "$1|$2|$stack" in *sqlite*wal*flush=honor*) nf=0 silent=0 dur=0 ;; esac
printf '{"blackout_explore":1,"stack":"%s","fs":"linux-%s","workload":"%s","seed":1,"max_states":%d,"shard":0,"nshards":1,"cuts":9,"space":0,"space_log2":0,"exhaustive":false,"built":4,"coverage":0.5,"judged":4,"duplicates":0,"ok":%d,"silent":%d,"detected":%d,"e2fsck_runs":4,"e2fsck_disagree":0,"violations":{"durable":%d,"stale":0,"bystander":0,"consistent":%d,"atomic":0},"allowed":{"durable":0,"stale":0,"bystander":0,"consistent":0,"atomic":0},"failures":[%s]}\n' \
	"$stack" "$fs" "$wl" "$n" $((4 - nf)) $silent $det $dur $con "$fails" >"$json"
[ "$nf" -gt 0 ] && exit 3
exit 0
EOF
chmod +x "$fake/cell"
export CALLS="$SCRATCH/calls"
ROWS=cache,cache-lying,flash-cheap-128k,write-errors
run() { # OUT [ENV=...] [-- MATRIX ARGS]: the small matrix with the stand-in
	out=$1
	shift
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	env "${envs[@]}" BLACKOUT_VM_CELL="$fake/cell" "$BLACKOUT" matrix --rows $ROWS \
		--columns ext3-ordered-b1,linux-ext4-b1 --workloads append-fsync --max-states 10 \
		--jobs 2 --vm --vm-states 4 --out "$SCRATCH/$out" "$@" >"$SCRATCH/$out.txt" \
		2>"$SCRATCH/$out.err"
}

run rep
ok $? "blackout matrix --vm ran with the stand-in app"
J="$SCRATCH/rep/matrix.json"

[ "$(grep -c '^app|' "$CALLS")" -eq 12 ] &&
	[ "$(grep -c '^app|[^|]*|ext4,barrier=1|4|1|apps/sqlite/check.sh|sqlite3|apps/sqlite/run.sh wal full 6$' "$CALLS")" -eq 3 ] &&
	[ "$(grep -c '|apps/sqlite/check.sh|sqlite3|apps/sqlite/run.sh truncate full 6$' "$CALLS")" -eq 3 ] &&
	[ "$(grep -c '|apps/rename/check.sh|-|apps/rename/run.sh 4$' "$CALLS")" -eq 3 ] &&
	[ "$(grep -c '|apps/applog/check.sh|-|apps/applog/run.sh 8$' "$CALLS")" -eq 3 ] &&
	grep -q '^app|cache(size=256k,flush=ignore) > disk(tear=none) > mem(size=64M)|' "$CALLS" &&
	grep -q '^app|flash(ftl=cheap,eb=128k,size=64M)|' "$CALLS" && ! grep -q 'fault' "$CALLS"
ok $? "one app run per stack and example run (the two config updates share one): 3 rows x 4, with each row's Linux stack, ext4 barrier=1, the state budget, the seed, sqlite3 carried"
grep '^app|' "$CALLS" | head -4 | sed 's/^/#   /'

jq -e '(.apps.rows | map(.id)) == ["cache","cache-lying","flash-cheap-128k"] and
  (.apps.rows | map(.class)) == ["flushes honoured","flushes ignored","other"] and
  (.apps.columns | map(.id)) == ["sqlite-wal-full","sqlite-rollback-full","config-rename-fsync","config-rename-nofsync","append-log"] and
  (.apps.cells | length) == 15 and .apps.fs == "ext4,barrier=1"' "$J" >/dev/null
ok $? "matrix.json's apps section: rows = the app stacks of the run (not write-errors), columns = the five examples"

cell() { jq -c --arg r "$1" --arg c "$2" '.apps.cells[] | select(.row==$r and .col==$c) |
  [.states,.ok,.lost,.detected,.checker_crash,.checker_hang,.other]' "$J"; }
[ "$(cell cache sqlite-wal-full)" = "[4,4,0,0,0,0,0]" ] &&
	[ "$(cell cache-lying sqlite-wal-full)" = "[4,2,2,0,0,0,0]" ] &&
	[ "$(cell cache-lying sqlite-rollback-full)" = "[4,2,2,0,0,0,0]" ] &&
	[ "$(cell cache-lying append-log)" = "[4,2,1,1,0,0,0]" ] &&
	[ "$(cell flash-cheap-128k append-log)" = "[4,2,0,0,1,1,0]" ]
ok $? "counts parsed from the app runs' results: lost, detected, checker crash and hang"

[ "$(cell cache config-rename-fsync)" = "[4,4,0,0,0,0,0]" ] &&
	[ "$(cell cache config-rename-nofsync)" = "[4,3,0,1,0,0,0]" ] &&
	[ "$(cell cache-lying config-rename-fsync)" = "[4,3,1,0,0,0,0]" ] &&
	[ "$(cell cache-lying config-rename-nofsync)" = "[3,2,0,1,0,0,0]" ]
ok $? "the rename run split by file: config-nofsync's finding leaves config ok; config's leaves config-nofsync unjudged in that state"

V() { jq -r --arg e "$1" '.apps.verdicts[] | select(.example==$e) | .text' "$J"; }
V sqlite-wal-full | grep -q '^SQLite WAL, synchronous=FULL on Linux ext4,barrier=1: flushes honoured (cache): 0 of 4 states (sampled) lost acknowledged work, 0 were damaged or did not mount; flushes ignored (cache-lying): 2 of 4 states (sampled) lost acknowledged work, 0 were .* — its promises hold only where the device honours flushes; elsewhere cheap flash (flash-cheap-128k): 0 of 4' &&
	V config-rename-nofsync | grep -q 'flushes honoured (cache): 0 of 4 states (sampled) lost acknowledged work, 1 were damaged .* — it fails even where flushes are honoured' &&
	V append-log | grep -q 'cheap flash (flash-cheap-128k): 0 of 4 states (sampled) lost acknowledged work, 0 were damaged or did not mount, 2 the checker crashed or hung on$' &&
	[ "$(jq '.apps.verdicts | length' "$J")" -eq 5 ]
ok $? "one verdict per example: honest against lying stacks, sampled said, flash elsewhere"
V sqlite-wal-full | sed 's/^/#   /'

grep -q '^application section: blackout app on Linux ext4,barrier=1' "$SCRATCH/rep.txt" &&
	grep -q '^cache-lying  *L2 D0 C0/4~  *L2 D0 C0/4~  *L1 D0 C0/4~  *L0 D1 C0/3~  *L1 D1 C0/4~ *$' "$SCRATCH/rep.txt" &&
	[ "$(grep -c '^  \[APP\] ' "$SCRATCH/rep.txt")" -eq 5 ] &&
	grep -q '^## Applications (blackout app on Linux ext4,barrier=1)' "$SCRATCH/rep/matrix.md" &&
	[ "$(grep -c '^- \*\*APP ' "$SCRATCH/rep/matrix.md")" -eq 5 ] &&
	grep -q 'id="apps-table"' "$SCRATCH/rep/report.html" &&
	[ "$(grep -o '<span class="tag">APP</span>' "$SCRATCH/rep/report.html" | wc -l)" -eq 5 ]
ok $? "the section and its verdicts in the table, matrix.md and report.html"
python3 - "$SCRATCH/rep.txt" <<'PY'
import sys
sys.exit(1 if any(len(l) > 100 for l in open(sys.argv[1], encoding="utf-8").read().split("\n")) else 0)
PY
ok $? "the table with the section stays within 100 columns"

: >"$CALLS"
run brk BROKEN=count
rc=$?
[ $rc -eq 1 ] && grep -q 'had a run fail' "$SCRATCH/brk.err" &&
	jq -e '.apps.cells[] | select(.row=="cache" and .col=="sqlite-wal-full") | (.ran|not) and
  (.note|test("^apps/cache-sqlite-wal/app.json: 1 failing states listed, but 0 of 4 states failed"))' \
		"$SCRATCH/brk/matrix.json" >/dev/null &&
	jq -e '[.apps.cells[] | select(.ran)] | length == 14' "$SCRATCH/brk/matrix.json" >/dev/null
ok $? "an app result whose failures do not match its counts is refused in its cell, the others run, exit 1 (rc $rc)"
run brk2 BROKEN=workload
rc=$?
[ $rc -eq 1 ] && jq -e '.apps.cells[] | select(.row=="cache" and .col=="sqlite-wal-full") |
  (.ran|not) and (.note|test("workload .mixed., not an app run"))' "$SCRATCH/brk2/matrix.json" >/dev/null
ok $? "a result of another workload is refused too (rc $rc)"

: >"$CALLS"
run some -- --vm-apps append-log,config-rename-nofsync
[ $? -eq 0 ] && jq -e '(.apps.columns | map(.id)) == ["config-rename-nofsync","append-log"]' \
	"$SCRATCH/some/matrix.json" >/dev/null && [ "$(grep -c '^app|' "$CALLS")" -eq 6 ]
ok $? "--vm-apps picks examples (6 runs for 2 examples on 3 rows)"
: >"$CALLS"
run kv -- --vm-apps redis-always,leveldb-nosync
[ $? -eq 0 ] && jq -e '(.apps.columns | map(.id)) == ["redis-always","leveldb-nosync"] and
  (.apps.cells | length) == 6 and all(.apps.cells[]; .ran)' "$SCRATCH/kv/matrix.json" >/dev/null &&
	[ "$(grep -c '^app|' "$CALLS")" -eq 6 ] &&
	[ "$(grep -c '^app|[^|]*|ext4,barrier=1|4|1|apps/redis/check.sh|redis-check-aof|apps/redis/run.sh always 6$' "$CALLS")" -eq 3 ] &&
	[ "$(grep -c '^app|[^|]*|ext4,barrier=1|4|1|apps/leveldb/check.sh|bo-leveldb|apps/leveldb/run.sh nosync 8$' "$CALLS")" -eq 3 ]
ok $? "the database examples are opt-in columns: --vm-apps redis-always,leveldb-nosync runs them with their executables carried (redis-check-aof last, bo-leveldb from build/apps)"
: >"$CALLS"
run none -- --vm-apps none
[ $? -eq 0 ] && jq -e 'has("apps")|not' "$SCRATCH/none/matrix.json" >/dev/null &&
	! grep -q '^app|' "$CALLS" && ! grep -q 'application section' "$SCRATCH/none.txt"
ok $? "--vm-apps none: no app run, no section"

: >"$CALLS"
mkdir -p "$SCRATCH/tree/scripts"
run inst BLACKOUT_SRC="$SCRATCH/tree"
rc=$?
[ $rc -eq 0 ] && ! grep -q '^app|' "$CALLS" && jq -e '(.apps.cells | length) == 15 and
  all(.apps.cells[]; (.ran|not) and (.note|test("^the example apps/[a-z]*/run.sh is not here")))' \
	"$SCRATCH/inst/matrix.json" >/dev/null
ok $? "a tree without the examples: every application cell not applicable, saying why, exit 0 (rc $rc)"

"$BLACKOUT" matrix --vm --vm-apps sqlite-wall >/dev/null 2>"$SCRATCH/u1.err"
rc1=$?
"$BLACKOUT" matrix --vm-apps append-log >/dev/null 2>"$SCRATCH/u2.err"
rc2=$?
[ $rc1 -eq 2 ] && grep -q "no example 'sqlite-wall'" "$SCRATCH/u1.err" && [ $rc2 -eq 2 ] &&
	grep -q -- '--vm-apps needs --vm' "$SCRATCH/u2.err"
ok $? "an unknown example or --vm-apps without --vm is bad usage (rc $rc1, $rc2)"

# PostgreSQL: the durable setting on every row and the torn-page row, synchronous_commit=off
# on the matrix's rows, full_page_writes=off on the torn-page row only; one cluster made
# on the host by the real template.sh and carried to every run
: >"$CALLS"
: >"$CALLS.timeouts"
run pg -- --vm-apps pg-durable,pg-async,pg-fpw-off
rc=$?
J="$SCRATCH/pg/matrix.json"
tpl=$(grep -o '[^ ]*/pg-template/cluster.tar' "$CALLS" | sort -u)
[ $rc -eq 0 ] && [ "$(grep -c '^app|' "$CALLS")" -eq 8 ] &&
	[ "$(grep -c '|ext4,barrier=1|4|1|apps/postgres/check.sh|pg-template|apps/postgres/run.sh on on 4 /[^ ]*/pg-template/cluster.tar$' "$CALLS")" -eq 4 ] &&
	[ "$(grep -c '|apps/postgres/check.sh|pg-template|apps/postgres/run.sh off on 4 /' "$CALLS")" -eq 3 ] &&
	[ "$(grep -c '^app|disk(sector=4096,tear=sector) > mem(size=128M,sector=4096)|ext4,barrier=1|4|1|apps/postgres/check.sh|pg-template|apps/postgres/run.sh on off 4 /' "$CALLS")" -eq 1 ] &&
	[ "$(grep -c '^postgres/run.sh|300 60 120$' "$CALLS.timeouts")" -eq 8 ] &&
	[ "$(grep -c '^sqlite\|^rename\|^applog' "$CALLS.timeouts")" -eq 0 ] &&
	[ "$(echo "$tpl" | wc -l)" -eq 1 ] && tar -tf "$tpl" | grep -q '^pg/PG_VERSION$'
ok $? "PostgreSQL columns: 8 runs (durable on 3 rows and torn-4k, async on 3, full_page_writes=off on torn-4k), one host-made cluster carried, 300/60/120 s bounds (rc $rc)"
grep '^app|.*postgres' "$CALLS" | tail -n 1 | sed "s|$SCRATCH|SCRATCH|g; s/^/#   /"
cell() { jq -c --arg r "$1" --arg c "$2" '.apps.cells[] | select(.row==$r and .col==$c) |
  [.ran,.states,.ok,.lost,.detected]' "$J"; }
jq -e '(.apps.rows | map(.id)) == ["cache","cache-lying","flash-cheap-128k","torn-4k"] and
  .apps.rows[3].class == "torn pages" and
  .apps.rows[3].stack == "disk(sector=4096,tear=sector) > mem(size=128M,sector=4096)" and
  (.apps.columns | map(.id)) == ["pg-durable","pg-async","pg-fpw-off"]' "$J" >/dev/null &&
	[ "$(cell torn-4k pg-fpw-off)" = "[true,4,3,0,1]" ] &&
	[ "$(cell torn-4k pg-durable)" = "[true,4,4,0,0]" ] && [ "$(cell cache pg-async)" = "[true,4,3,1,0]" ] && [ "$(cell cache-lying pg-durable)" = "[true,4,3,1,0]" ] &&
	[ "$(cell cache pg-fpw-off)" = "[false,null,null,null,null]" ] &&
	[ "$(cell torn-4k pg-async)" = "[false,null,null,null,null]" ] &&
	jq -e '.apps.cells[] | select(.row=="cache" and .col=="pg-fpw-off") | .note == "runs on torn-4k only"' "$J" >/dev/null
ok $? "the torn-page row, its cells, and the cells a column does not run on"
grep -q '^torn-4k  *ok 4~  *-  *L0 D1 C0/4~ *$' "$SCRATCH/pg.txt" &&
	grep -q '^  torn-4k: disk(sector=4096,tear=sector) > mem(size=128M,sector=4096), Linux ext4,barrier=1$' "$SCRATCH/pg.txt"
ok $? "the terminal table: - where a column does not run, the torn-page row's stack below"
TV="PostgreSQL's 8 KiB pages on a drive whose atomic unit is 4 KiB (torn-4k, Linux ext4,barrier=1, 4 commits): full_page_writes=off: 1 of 4 states (sampled) broke (0 lost acknowledged commits, 1 damaged); full_page_writes=on: 0 of 4 states (sampled) broke (0 lost acknowledged commits, 0 damaged) — the full-page images in the WAL are what repairs a page the drive tore."
jq -e --arg t "$TV" '.verdicts[] | select(.text | startswith("PostgreSQL")) | .expectation == "ATOMIC-SECTORS" and
  .text == $t and .result == "broken" and .property == "any" and .states == 8 and .count == 1 and
  (.results | map([.row, .col, .result, .count])) == [["torn-4k","pg-fpw-off","broken",1],["torn-4k","pg-durable","holds",0]]' "$J" >/dev/null
ok $? "the torn-page verdict: an ATOMIC-SECTORS line of matrix.json, broken, resting on the two torn-4k cells"
jq -r '.verdicts[] | select(.text | startswith("PostgreSQL")) | .text' "$J" | sed 's/^/#   /'
awk '/^What the measurements say:/ { on = 1; next } on && /^  \[/ { print }' "$SCRATCH/pg.txt" >"$SCRATCH/pg.v"
n=$(grep -n "^  \[ATOMIC-SECTORS\] PostgreSQL's 8 KiB pages" "$SCRATCH/pg.v" | cut -d: -f1)
[ -n "$n" ] && sed -n "$((n - 1))p" "$SCRATCH/pg.v" | grep -q '^  \[ATOMIC-SECTORS\]' &&
	! sed -n "$((n + 1))p" "$SCRATCH/pg.v" | grep -q '^  \[ATOMIC-SECTORS\]' &&
	grep -q "ATOMIC-SECTORS.*PostgreSQL's 8 KiB pages" "$SCRATCH/pg/matrix.md" &&
	grep -q "PostgreSQL&#39;s 8 KiB pages\|PostgreSQL's 8 KiB pages" "$SCRATCH/pg/report.html"
ok $? "in the terminal, matrix.md and report.html, after the seed's ATOMIC-SECTORS lines"
jq -r '.apps.verdicts[] | select(.example=="pg-fpw-off") | .text' "$J" |
	grep -qx 'PostgreSQL, full_page_writes=off on Linux ext4,barrier=1: 8 KiB pages on 4 KiB atomic sectors (torn-4k): 0 of 4 states (sampled) lost acknowledged work, 1 were damaged or did not mount'
ok $? "the APP verdict of a column that runs only on the torn-page row"

# a host whose template fails: the PostgreSQL cells say so, the rest run
mkdir -p "$SCRATCH/tree2/scripts"
cp -r "$BLACKOUT_SRC/apps" "$SCRATCH/tree2/"
printf '#!/bin/sh\necho "template.sh: no /usr/lib/postgresql/15/bin/initdb" >&2\nexit 1\n' \
	>"$SCRATCH/tree2/apps/postgres/template.sh"
: >"$CALLS"
run pgbad BLACKOUT_SRC="$SCRATCH/tree2" -- --vm-apps pg-durable,append-log
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^app|' "$CALLS")" -eq 3 ] && ! grep -q postgres "$CALLS" &&
	jq -e '[.apps.cells[] | select(.col=="pg-durable")] | length == 4 and
  all(.[]; (.ran|not) and .note == "the cluster template failed (apps/postgres/template.sh): template.sh: no /usr/lib/postgresql/15/bin/initdb")' \
		"$SCRATCH/pgbad/matrix.json" >/dev/null &&
	! jq -e '.verdicts[] | select(.text | startswith("PostgreSQL"))' "$SCRATCH/pgbad/matrix.json" >/dev/null
ok $? "a cluster template that fails: every PostgreSQL cell says why, no torn-page verdict, the other example runs (rc $rc)"

"$BLACKOUT" matrix --rows cache --columns ext3-ordered-b1 --workloads append-fsync \
	--max-states 10 --json "$SCRATCH/novm.json" --out "$SCRATCH/novm" >/dev/null 2>&1 &&
	jq -e 'has("apps")|not' "$SCRATCH/novm.json" >/dev/null &&
	! grep -q 'Applications' "$SCRATCH/novm/matrix.md"
ok $? "without --vm nothing of the section is written"

done_testing
