#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_kv.t — Redis and LevelDB under blackout app (docs/apps.md) on the real kernel, each
# acknowledging a write only once the database said it was done (Redis: the server's
# reply over its socket). make check: one small run per database — Redis with
# appendfsync everysec loses acknowledged keys on an honest cache, LevelDB's sync=true
# Puts lose none — and a server that fails to start is reported as that, not as lost
# data. VM_FULL=1 (tests/long/vm_kv_full.t): the acceptance's scale, the durable setting
# of each over 100+ distinct states on ext4 barrier=1 with an honest cache loses nothing,
# the non-durable setting and a cache that ignores flushes lose some, counted.
. "$(dirname "$0")/vm_lib.sh"
need_tool redis-server redis-cli redis-check-aof
[ -x "$BUILD/apps/bo-leveldb" ] || bail "no $BUILD/apps/bo-leveldb (make builds it where libleveldb-dev is installed)"

HONEST='cache(size=1M,flush=honor) > mem(size=64M)'
LIAR='cache(size=1M,flush=ignore) > mem(size=64M)'
R=(--checker "$BLACKOUT_SRC/apps/redis/check.sh" --with "$(command -v redis-server)"
	--with "$(command -v redis-cli)" --with "$(command -v redis-check-aof)")
L=(--checker "$BLACKOUT_SRC/apps/leveldb/check.sh" --with "$BUILD/apps/bo-leveldb")
# app NAME ARGS...: one `blackout app` into $T/NAME (exit 0: every state ok, 3: some
# failed; anything else fails), its summary lines and wall time as comments
app() {
	local name=$1 t0=$SECONDS
	shift
	timeout "${VM_TIMEOUT:-1200}" "$BLACKOUT" app --out "$T/$name" \
		--json "$T/$name.json" "$@" >"$T/$name.log" 2>&1
	local rc=$?
	grep '^app:  \|^guests: ' "$T/$name.log" | sed 's/^/# /'
	echo "# $name: $((SECONDS - t0)) s wall"
	[ $rc -eq 0 ] || [ $rc -eq 3 ] ||
		{ echo "app $name failed (exit $rc):" && tail -n 20 "$T/$name.log"; } >&2
	[ $rc -eq 0 ] || [ $rc -eq 3 ]
}
j() { jq -r "$2" "$T/$1.json"; }
# failures NAME TEXT: failing states whose detail holds TEXT
failures() { jq --arg t "$2" '[.failures[] | select(.detail | contains($t))] | length' "$T/$1.json"; }
# quote NAME TEXT: the first failing state's detail holding TEXT
quote() { jq -r --arg t "$2" '[.failures[] | select(.detail | contains($t))][0] | "\(.id): \(.detail)"' "$T/$1.json"; }
# sound NAME: no state the checker found corrupt, crashed or hung on, none the
# filesystem's judge failed
sound() {
	[ "$(failures "$1" 'app: corruption')" = 0 ] && [ "$(failures "$1" 'app: the checker')" = 0 ] &&
		[ "$(j "$1" '.ok + ([.failures[] | select(.detail | startswith("app: lost"))] | length)')" = "$(j "$1" .judged)" ]
}

if [ -z "${VM_FULL:-}" ]; then
	app redis_es --stack "$HONEST" --fs ext4,barrier=1 --max-states 10 --seed 1 --jobs 1 "${R[@]}" \
		"$BLACKOUT_SRC/apps/redis/run.sh" everysec 5
	ok $? "Redis appendfsync everysec on ext4 barrier=1 over an honest cache"
	n=$(failures redis_es 'app: lost acknowledged work: acknowledged keys missing')
	[ "$n" -gt 0 ] && [ "$(j redis_es .violations.durable)" -gt 0 ]
	ok $? "it loses acknowledged keys: everysec replies before the fsync ($n of $(j redis_es .judged) states)"
	echo "#   $(quote redis_es 'app: lost')"
	sound redis_es
	ok $? "and nothing else: the AOF always loads, no checker crashed or hung, the filesystem is whole"

	# a server that does not start is the program's failure, before any state is judged
	timeout 600 "$BLACKOUT" app --out "$T/bad" --json "$T/bad.json" --stack "$HONEST" \
		--max-states 4 "${R[@]}" "$BLACKOUT_SRC/apps/redis/run.sh" sometimes 2 \
		>"$T/bad.log" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -q "redis-server did not start: .*appendfsync" "$T/bad.log" &&
		! grep -q '^app:  ' "$T/bad.log" && [ ! -s "$T/bad.json" ]
	ok $? "a Redis that refuses to start is reported as that, no state judged, no data loss (exit $rc): $(grep -o 'redis-server did not start.*' "$T/bad.log" | head -n 1 | cut -c1-100)" ||
		{ echo "the run that should have refused:" && grep -v '^/' "$T/bad.log" | tail -n 4; } >&2

	app ldb --stack "$HONEST" --fs ext4,barrier=1 --max-states 20 --seed 1 "${L[@]}" \
		"$BLACKOUT_SRC/apps/leveldb/run.sh" sync 8
	ok $? "LevelDB sync=true on ext4 barrier=1 over an honest cache"
	[ "$(j ldb .judged)" -ge 10 ] && [ "$(j ldb .ok)" = "$(j ldb .judged)" ] &&
		[ "$(j ldb .violations.durable)" = 0 ]
	ok $? "no state loses an acknowledged Put or fails to open ($(j ldb .judged) states)"
	done_testing
	exit
fi

# ---- the acceptance's scale (tests/long/vm_kv_full.t) ----------------------------
# durable NAME DESC ARGS...: 100+ distinct states, every one ok
durable() {
	local name=$1 desc=$2
	shift 2
	app "$name" --stack "$HONEST" --fs ext4,barrier=1 --max-states 130 --seed 1 "$@"
	ok $? "$desc on ext4 barrier=1 over an honest cache"
	[ "$(j "$name" .judged)" -ge 100 ] && [ "$(j "$name" .ok)" = "$(j "$name" .judged)" ] &&
		[ "$(j "$name" .violations.durable)" = 0 ]
	ok $? "$desc: no acknowledged write lost over $(j "$name" .judged) distinct states"
}
# lossy NAME DESC STACK ARGS...: some states lose acknowledged writes, counted
lossy() {
	local name=$1 desc=$2 stack=$3
	shift 3
	app "$name" --stack "$stack" --fs ext4,barrier=1 --max-states 60 --seed 1 "$@"
	ok $? "$desc"
	local n
	n=$(failures "$name" 'app: lost acknowledged work')
	[ "$n" -gt 0 ]
	ok $? "$desc: $n of $(j "$name" .judged) states lost acknowledged writes, $(failures "$name" 'app: corruption') corrupt, $(($(j "$name" .judged) - $(j "$name" .ok) - n)) otherwise failed"
	echo "#   $(quote "$name" 'app: lost')"
}
durable redis_always "Redis appendfsync always" "${R[@]}" "$BLACKOUT_SRC/apps/redis/run.sh" always 12
lossy redis_everysec "Redis appendfsync everysec, honest cache" "$HONEST" "${R[@]}" \
	"$BLACKOUT_SRC/apps/redis/run.sh" everysec 12
lossy redis_liar "Redis appendfsync always, a cache that ignores flushes" "$LIAR" "${R[@]}" \
	"$BLACKOUT_SRC/apps/redis/run.sh" always 12
durable leveldb_sync "LevelDB sync=true" "${L[@]}" "$BLACKOUT_SRC/apps/leveldb/run.sh" sync 16
lossy leveldb_liar "LevelDB sync=true, a cache that ignores flushes" "$LIAR" "${L[@]}" \
	"$BLACKOUT_SRC/apps/leveldb/run.sh" sync 16
# sync=false leaves each Put in the guest's page cache until writeback: counted, not
# required to lose (few cuts fall after an acknowledgement, as SQLite's synchronous=OFF)
app leveldb_nosync --stack "$HONEST" --fs ext4,barrier=1 --max-states 60 --seed 1 "${L[@]}" \
	"$BLACKOUT_SRC/apps/leveldb/run.sh" nosync 16
ok $? "LevelDB sync=false, honest cache: $(failures leveldb_nosync 'app: lost') of $(j leveldb_nosync .judged) states lost acknowledged Puts"
done_testing
