#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh FSYNC KEYS — the Redis example of blackout app (docs/apps.md): starts
# redis-server in the guest with appendonly yes and appendfsync FSYNC (always, everysec,
# no) on the program's directory, then KEYS times a client sets key:I and, once the
# server's reply "OK" came back over its socket, acknowledges "set key:I" (bo_ack): the
# promise is the server's reply, not the client's write. Needs --with for redis-server
# and redis-cli.
set -u
fsync=${1:-always} n=${2:-20}
sock=/tmp/bo-redis.sock
# a Unix socket: the guest has no network configured, and the reply is the same
redis-server --port 0 --unixsocket "$sock" --dir "$PWD" --appendonly yes \
	--appendfsync "$fsync" --save '' --daemonize no --logfile /tmp/bo-redis.log \
	>/tmp/bo-redis.err 2>&1 &
pid=$!
up() { [ "$(redis-cli -s "$sock" PING 2>/dev/null)" = PONG ]; }
t=0
until up; do
	if ! kill -0 "$pid" 2>/dev/null || [ "$t" -ge 300 ]; then
		# a refused setting goes to stderr, anything later to the log
		why=$(tail -n 2 /tmp/bo-redis.err | tr '\n' ' ')
		[ -n "$why" ] || why=$(grep ' # ' /tmp/bo-redis.log | tail -n 1)
		echo "redis-server did not start: $why"
		kill -9 "$pid" 2>/dev/null
		exit 1
	fi
	usleep 100000
	t=$((t + 1))
done
pad=$(printf '%0600d' 0)
i=1
while [ "$i" -le "$n" ]; do
	r=$(redis-cli -s "$sock" SET "key:$i" "value $i $pad") || r="(no reply)"
	[ "$r" = OK ] || {
		echo "SET key:$i: the server replied '$r'"
		exit 1
	}
	bo_ack "set key:$i" || exit 1
	i=$((i + 1))
done
# a clean stop, so that the directory is not busy when the guest unmounts it
redis-cli -s "$sock" SHUTDOWN >/dev/null 2>&1
wait "$pid"
exit 0
