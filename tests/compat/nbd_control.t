#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_control.t — the plugin's control-socket protocol (docs/nbd.md): every command's
# reply, and hostile input (garbage, binary, over-long lines, floods) answered with an
# error line while nbdkit keeps serving.
. "$(dirname "$0")/nbd_lib.sh"

start_nbd "mem(size=1M)"
ok $? "nbdkit with control socket"

is "$(ctl_last ping)" "ok pong" "ping"
out=$(ctl help)
is "$(echo "$out" | tail -n 1)" "ok help" "help ends with ok"
for c in cut cut-at replug settle stats fail arm disarm ping help quit; do
	echo "$out" | grep -q "^$c "
	ok $? "help lists $c"
done
out=$(ctl stats)
is "$(echo "$out" | tail -n 1)" "ok stats" "stats ends with ok"
for k in reads writes fua_writes flushes trims zeros; do
	echo "$out" | grep -q "^nbd\.$k [0-9][0-9]*$"
	ok $? "stats has nbd.$k"
done
echo "$out" | grep -q '^dev\.0\.mem\.powered_off 0$'
ok $? "stats walks the stack (dev.0 is the mem medium)"

# One connection, several commands: one reply each, in order.
out=$(ctl ping ping "cut 5" stats replug | grep -c '^ok')
is "$out" 5 "five commands on one connection, five ok lines"

expect_error() { # expect_error LINE WHAT
	got=$(ctl "$1" | tail -n 1)
	case "$got" in
	"error: "*) ok 0 "$2: ${got#error: }" ;;
	*) ok 1 "$2 (got '$got')" ;;
	esac
}
expect_error "" "empty line"
expect_error "frobnicate" "unknown command"
expect_error "cut seed:" "seed without a number"
expect_error "cut seed:12x" "seed with junk"
expect_error "cut 99999999999999999999999" "seed overflowing 64 bits"
expect_error "cut list:1,,2" "empty decision"
expect_error "cut list:1,-2" "negative decision"
expect_error "cut 1 2" "cut with two outcomes"
expect_error "cut-at" "cut-at without a count"
expect_error "cut-at 0" "cut-at 0"
expect_error "cut-at x" "cut-at with a word"
got=$(ctl_last "cut-at 99999999999999999999999")
is "$got" "error: column 8: write count larger than 2^64-1 (18446744073709551615)" \
	"cut-at with a count past 64 bits says so (not 'at least 1')"
expect_error "replug now" "replug with an argument"
expect_error "stats please" "stats with an argument"
expect_error "fail" "fail without a member"
expect_error "fail 1000" "fail with a member out of range"
expect_error "a b c d e f g h" "too many words"
expect_error "replug" "replug while the power is on"
is "$(ctl_last 'cut zero')" "ok cut given=zero inflight=0 decisions=0 outcome=list:" "cut zero"
expect_error "cut" "cut while the power is off"
expect_error "cut-at 1" "cut-at while the power is off"
is "$(ctl_last replug)" "ok replug" "replug"
# This stack has no RAID or fault device: a clear refusal (nbd_models.t has them).
expect_error "fail 1" "fail on a stack without RAID"
expect_error "arm read-error lba=0" "arm on a stack without a fault device"
expect_error "disarm" "disarm on a stack without a fault device"
expect_error "disarm x" "disarm with a bad id"
expect_error "arm" "arm without a rule"
expect_error "arm $(head -c 300 /dev/zero | tr '\0' 'r')" "arm with a rule longer than 256 bytes"

# Decision lists up to the limit parse; one more is refused.
list=$(seq -s, 1 4096 | sed 's/[0-9][0-9]*/0/g')
is "$(ctl_last "cut list:$list")" "ok cut given=list(4096) inflight=0 decisions=0 outcome=list:" \
	"cut with a 4096-decision list"
ctl_last replug >/dev/null
expect_error "cut list:$list,0" "a 4097-decision list"

# Binary and control bytes.
got=$(printf 'pi\001ng\nping\n' | timeout 10 socat -t 5 - "UNIX-CONNECT:$CTL_SOCK")
is "$(echo "$got" | head -n 1 | cut -c1-7)" "error: " "a control byte gives an error line"
is "$(echo "$got" | tail -n 1)" "ok pong" "the same connection still works after it"
got=$(head -c 4096 /dev/urandom | tr -d '\n' | { cat; printf '\nping\n'; } |
	timeout 10 socat -t 5 - "UNIX-CONNECT:$CTL_SOCK" | tail -n 1)
is "$got" "ok pong" "4 KiB of random bytes, then ping: still answered"
got=$(printf 'ping\r\n' | timeout 10 socat -t 5 - "UNIX-CONNECT:$CTL_SOCK")
is "$got" "ok pong" "CRLF line endings accepted"

# A line longer than the 64 KiB limit is refused as a whole, not split into commands.
got=$({ head -c 70000 /dev/zero | tr '\0' 'a'; printf '\nping\n'; } |
	timeout 10 socat -t 5 - "UNIX-CONNECT:$CTL_SOCK")
is "$(echo "$got" | wc -l)" 2 "over-long line: exactly one reply for it, one for ping"
is "$(echo "$got" | head -n 1)" "error: line longer than 65536 bytes" "over-long line refused"
is "$(echo "$got" | tail -n 1)" "ok pong" "then ping answered"

# quit closes only that connection.
got=$(printf 'quit\nping\n' | timeout 10 socat -t 5 - "UNIX-CONNECT:$CTL_SOCK")
is "$got" "ok bye" "quit: the connection closes, later lines ignored"

# A connection flood: at most 8 at a time, the rest told so; afterwards all is well.
pids=
for i in 1 2 3 4 5 6 7 8 9 10; do
	timeout 5 socat -u "UNIX-CONNECT:$CTL_SOCK" "OPEN:$T/flood.$i,creat" &
	pids="$pids $!"
done
# (polled: on a loaded machine the ten clients take a while to connect)
flooded=1
for _ in $(seq 1 100); do
	grep -l 'too many control connections' "$T"/flood.* >/dev/null 2>&1 && flooded=0 && break
	sleep 0.1
done
ok $flooded "beyond 8 idle connections, newcomers get an error"
kill $pids 2>/dev/null
wait $pids 2>/dev/null
# the server notices the closed connections as it gets to them
for _ in $(seq 1 50); do
	[ "$(ctl_last ping)" = "ok pong" ] && break
	sleep 0.1
done
is "$(ctl_last ping)" "ok pong" "control works again after the flood"

# A client that connects and vanishes mid-line.
printf 'sta' | timeout 5 socat -t 1 - "UNIX-CONNECT:$CTL_SOCK" >/dev/null
is "$(ctl_last ping)" "ok pong" "a half line from a vanished client is dropped"

qio "write -P 0x5a 0 4096" "read -P 0x5a 0 4096" >/dev/null
ok $? "NBD service unaffected by all of the above"
nbd_alive
ok $? "nbdkit still running"
stop_nbd

# A stack spec with control bytes: nbdkit refuses it, and its message shows them
# escaped instead of writing them to the terminal.
start_nbd "$(printf 'm\033[2Jem(size=1M)')" 2>/dev/null
ok $((!$?)) "a stack spec with an escape byte is refused"
grep -q 'm\\x1b\[2Jem' "$T/nbdkit.log"
ok $? "the error shows it as \\x1b"
tr -d '\n' <"$T/nbdkit.log" | grep -q "$(printf '\033')"
ok $((!$?)) "and holds no raw escape byte"

done_testing
