#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_control_stall.t — a control client that sends commands and never reads its
# replies must not slow NBD I/O or the other control clients (docs/nbd.md): the same
# qemu-io workload is timed undisturbed and beside such a client, and compared.
. "$(dirname "$0")/nbd_lib.sh"

start_nbd "mem(size=16M)"
ok $? "nbdkit with control socket"

# 512 writes and 512 reads of 64 KiB, checked, on one connection.
cmds=()
for i in $(seq 0 511); do
	off=$(((i % 256) * 65536))
	cmds+=("write -P 0x5a $off 64k" "read -P 0x5a $off 64k")
done
now() { date +%s.%N; }
timed_io() { # prints the seconds the workload took; fails if it failed
	local t0 t1
	t0=$(now)
	qio "${cmds[@]}" >"$T/qio.out" 2>&1 || return 1
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

base=$(timed_io)
ok $? "undisturbed workload runs (${base}s)"

# The stuck client: 20000 'stats' (about 12 MB of replies), never reading any of it,
# and holding the connection open (the FIFO's writer, fd 7, stays open). socat -u only
# copies the FIFO to the socket.
mkfifo "$T/stuck.fifo"
timeout 120 socat -u "OPEN:$T/stuck.fifo" "UNIX-CONNECT:$CTL_SOCK" </dev/null >/dev/null 2>&1 &
stuck=$!
exec 7>"$T/stuck.fifo"
# in the background: once the server stops reading, the writer blocks too
yes stats | head -n 20000 >&7 &
flood=$!
sleep 1 # let the server take in what it will of the flood

t0=$(now)
got=$(printf 'ping\n' | timeout 10 socat -t 5 - "UNIX-CONNECT:$CTL_SOCK")
t1=$(now)
is "$got" "ok pong" "another control client is answered beside the stuck one"
fast=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a < 2) ? 0 : 1 }')
ok "$fast" "and at once ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')s)"

stalled=$(timed_io)
ok $? "workload beside the stuck client runs (${stalled}s)"
# Generous slack for a shared machine: three times the undisturbed time plus 2 s. A
# lock held across a blocked send costs seconds per reply line, far beyond this.
fair=$(awk -v b="${base:-0}" -v s="${stalled:-999}" 'BEGIN { print (s <= 3 * b + 2) ? 0 : 1 }')
ok "$fair" "I/O time beside the stuck client ${stalled}s vs ${base}s undisturbed (<= 3x + 2s)"
is "$(grep -c '^wrote 65536/65536' "$T/qio.out") $(grep -c '^read 65536/65536' "$T/qio.out")" \
	"512 512" "every write and read of it succeeded (reads verified by -P)"

kill "$flood" "$stuck" 2>/dev/null
exec 7>&-
wait "$flood" "$stuck" 2>/dev/null
is "$(ctl_last ping)" "ok pong" "control works after the stuck client leaves"
nbd_alive
ok $? "nbdkit still running"
stop_nbd

done_testing
