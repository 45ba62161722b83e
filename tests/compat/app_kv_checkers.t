#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# app_kv_checkers.t — the Redis and LevelDB examples' programs and checkers
# (apps/redis, apps/leveldb, docs/apps.md) run on the host, without a guest, against
# databases damaged by hand: each verdict the checker owes — ok, a missing acknowledged
# key (exit 1), an AOF or database the server refuses (exit 2), a torn last AOF command
# Redis drops (ok), an acknowledgement list it cannot read (exit 4) — and a server that
# will not start making the program fail, not acknowledge.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
need_tool redis-server redis-cli redis-check-aof
[ -x "$BUILD/apps/bo-leveldb" ] || bail "no $BUILD/apps/bo-leveldb (make builds it where libleveldb-dev is installed)"

# the guest's commands the examples use: bo_ack appends to a file, busybox's usleep
shim=$SCRATCH/shim
mkdir -p "$shim"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"$ACKS"\n' >"$shim/bo_ack"
printf '#!/bin/sh\nsleep 0.1\n' >"$shim/usleep"
cp "$BUILD/apps/bo-leveldb" "$shim/"
chmod +x "$shim"/*
export PATH="$shim:$PATH"
R=$BLACKOUT_SRC/apps/redis L=$BLACKOUT_SRC/apps/leveldb
# chk CHECKER DIR ACKS: the checker's exit status, its first line in $out
chk() {
	"$1" "$2" "$3" >"$SCRATCH/chk.out" 2>&1
	local rc=$?
	out=$(head -n 1 "$SCRATCH/chk.out")
	return $rc
}

d=$SCRATCH/redis
mkdir -p "$d"
(cd "$d" && ACKS=$SCRATCH/redis.acks "$R/run.sh" always 5 >"$SCRATCH/redis.out" 2>&1)
[ $? -eq 0 ] && [ "$(cat "$SCRATCH/redis.acks")" = "$(printf 'set key:%s\n' 1 2 3 4 5)" ]
ok $? "Redis run.sh: five keys set and acknowledged after the server's OK"
chk "$R/check.sh" "$d" "$SCRATCH/redis.acks"
ok $? "check.sh: every acknowledged key is in the AOF the server loads"
cp "$SCRATCH/redis.acks" "$SCRATCH/more.acks" && echo "set key:9" >>"$SCRATCH/more.acks"
chk "$R/check.sh" "$d" "$SCRATCH/more.acks"
[ $? -eq 1 ] && [ "$out" = "acknowledged keys missing: 9 (redis-check-aof: valid)" ]
ok $? "a key acknowledged but not in the AOF is lost (exit 1): $out"
incr=$(ls "$d"/appendonlydir/*.incr.aof)
cp "$incr" "$SCRATCH/incr.keep"
truncate -s -5 "$incr"
chk "$R/check.sh" "$d" "$SCRATCH/redis.acks"
[ $? -eq 1 ] && [[ "$out" == "acknowledged keys missing: 5 (redis-check-aof: "*"Expected"* ]]
ok $? "a torn last command: the server drops it, so key 5 is lost, redis-check-aof says why: $out"
head -n 4 "$SCRATCH/redis.acks" >"$SCRATCH/four.acks"
cp "$SCRATCH/incr.keep" "$incr" && truncate -s -5 "$incr"
chk "$R/check.sh" "$d" "$SCRATCH/four.acks"
ok $? "the same torn tail after the acknowledged prefix is allowed (exit 0)"
cp "$SCRATCH/incr.keep" "$incr" && printf 'X' | dd of="$incr" bs=1 seek=0 conv=notrunc 2>/dev/null
chk "$R/check.sh" "$d" "$SCRATCH/redis.acks"
[ $? -eq 2 ] && [[ "$out" == "the server refuses the AOF: Bad file format"*"redis-check-aof:"* ]]
ok $? "an AOF the server refuses is corruption (exit 2): ${out:0:90}"
chk "$R/check.sh" "$SCRATCH/nothing" /dev/null
ok $? "no AOF and nothing acknowledged is ok"
chk "$R/check.sh" "$SCRATCH/nothing" "$SCRATCH/redis.acks"
[ $? -eq 1 ] && [ "$out" = "no appendonlydir, though 5 writes were acknowledged" ]
ok $? "no AOF after acknowledged writes is lost (exit 1)"
mkdir -p "$SCRATCH/bad"
(cd "$SCRATCH/bad" && ACKS=$SCRATCH/bad.acks "$R/run.sh" sometimes 2 >"$SCRATCH/bad.out" 2>&1)
[ $? -eq 1 ] && [ ! -e "$SCRATCH/bad.acks" ] &&
	grep -q "^redis-server did not start: .*appendfsync" "$SCRATCH/bad.out"
ok $? "a server that will not start: run.sh exits 1 saying why, nothing acknowledged"

d=$SCRATCH/ldb
mkdir -p "$d"
(cd "$d" && ACKS=$SCRATCH/ldb.acks "$L/run.sh" sync 6 >"$SCRATCH/ldb.out" 2>&1)
[ $? -eq 0 ] && [ "$(wc -l <"$SCRATCH/ldb.acks")" -eq 6 ] && [ -f "$d/db/CURRENT" ]
ok $? "LevelDB run.sh: six Puts with sync=true, each acknowledged"
chk "$L/check.sh" "$d" "$SCRATCH/ldb.acks"
ok $? "check.sh: every acknowledged key is there"
cp "$SCRATCH/ldb.acks" "$SCRATCH/ldb9.acks" && echo "put key:9" >>"$SCRATCH/ldb9.acks"
chk "$L/check.sh" "$d" "$SCRATCH/ldb9.acks"
[ $? -eq 1 ] && [ "$out" = "acknowledged keys missing (1 of 7): 9" ]
ok $? "a key acknowledged but not in the database is lost (exit 1): $out"
printf 'put key:1\nset key:2\n' >"$SCRATCH/junk.acks"
chk "$L/check.sh" "$d" "$SCRATCH/junk.acks"
[ $? -eq 4 ] && [[ "$out" == *"line 2 is not \"put key:N\"" ]]
ok $? "an acknowledgement list it cannot read is the checker's own failure (exit 4): $out"
chk "$L/check.sh" "$SCRATCH/nothing" "$SCRATCH/ldb.acks"
[ $? -eq 1 ] && [ "$out" = "no database (no CURRENT), though 6 puts were acknowledged" ]
ok $? "no database after acknowledged Puts is lost (exit 1)"
printf 'garbage' >"$(ls "$d"/db/MANIFEST-*)"
chk "$L/check.sh" "$d" "$SCRATCH/ldb.acks"
[ $? -eq 2 ] && [[ "$out" == "LevelDB refuses to open the database: Corruption:"* ]]
ok $? "a database LevelDB refuses, without repair, is corruption (exit 2): $out"
done_testing
