#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check.sh DIR ACKS — the Redis example's checker (docs/apps.md): runs redis-check-aof,
# then starts redis-server on the recovered AOF as Redis itself would after the crash;
# exit 2 when the server refuses the AOF (the corruption redis-check-aof names; a torn
# last command the server drops is allowed), 1 when a key acknowledged in ACKS
# ("set key:I", one a line) is missing, else 0.
dir=$1
n=$(wc -l <"$2")
man=$dir/appendonlydir/appendonly.aof.manifest
if [ ! -d "$dir/appendonlydir" ]; then
	[ "$n" = 0 ] && exit 0
	echo "no appendonlydir, though $n writes were acknowledged"
	exit 1
fi
aof="manifest missing"
if [ -f "$man" ]; then
	redis-check-aof "$man" >/tmp/bo-aof.out 2>&1 && aof=valid ||
		aof=$(grep 'Expected\|not valid\|Bad\|rror\|corrupt' /tmp/bo-aof.out | head -n 1)
fi
sock=/tmp/bo-redis-check.sock
rm -f "$sock"
redis-server --port 0 --unixsocket "$sock" --dir "$dir" --appendonly yes --save '' \
	--daemonize no --logfile /tmp/bo-redis-check.log &
pid=$!
t=0
until [ "$(redis-cli -s "$sock" PING 2>/dev/null)" = PONG ]; do
	if ! kill -0 "$pid" 2>/dev/null || [ "$t" -ge 150 ]; then
		kill -9 "$pid" 2>/dev/null
		echo "the server refuses the AOF: $(grep -i 'bad\|error\|corrupt\|invalid\|#' \
			/tmp/bo-redis-check.log | tail -n 1 | sed 's/^[0-9]*:[A-Z] [^#]*# //' | cut -c1-120); redis-check-aof: $aof"
		exit 2
	fi
	usleep 100000
	t=$((t + 1))
done
lost=
if [ "$n" != 0 ]; then
	# one client for every key: "EXISTS key:I" answers 1 or 0, in order
	keys=$(sed 's/^set //' "$2")
	got=$(for k in $keys; do echo "EXISTS $k"; done | redis-cli -s "$sock")
	set -- $got
	for k in $keys; do
		[ "${1:-0}" = 1 ] || lost="$lost ${k#key:}"
		[ $# -gt 0 ] && shift
	done
fi
redis-cli -s "$sock" SHUTDOWN NOSAVE >/dev/null 2>&1
wait "$pid"
[ -z "$lost" ] && exit 0
echo "acknowledged keys missing:$lost (redis-check-aof: $aof)"
exit 1
