#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# probe_log.t — the probe's listener log: `probe listen` receives a writer's lines over
# TCP and the log it keeps verifies; malformed logs (bytes from a network or a pulled
# disk) are refused by `probe verify` with the line named, never a crash; a log for a
# region larger than the device is refused (docs/probe.md).
. "$(dirname "$0")/../test-lib.sh"
need_tool timeout

truncate -s 8M "$T/dev.img"
port=$((20000 + $$ % 20000))
timeout 60 "$B" probe listen --port $port --out "$T/net.log" 2>"$T/listen.err" &
lp=$!
at_exit "kill $lp 2>/dev/null"
i=0
while ! grep -q listening "$T/listen.err" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
timeout 60 "$B" probe write "$T/dev.img" --listener 127.0.0.1:$port --settle 0 --ops 100 \
	>/dev/null 2>&1
ok $? "write reports to a listener over TCP"
wait $lp
ok $? "the listener ends when the writer closes"
is "$(grep -c '^W ' "$T/net.log")" "$(grep -c '^I ' "$T/net.log")" \
	"every announced write completed (no pull)"
"$B" probe verify "$T/dev.img" --log "$T/net.log" >/dev/null
ok $? "the listener's log verifies"

"$B" probe write "$T/dev.img" --listener 127.0.0.1:1 --settle 0 --ops 5 >"$T/o" 2>&1
rc=$?
t "no listener: exit 1" '[ $rc -eq 1 ]'
grep -q "start 'blackout probe listen' there first" "$T/o"
ok $? "saying to start the listener: $(cat "$T/o")"

hdr='blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64'
bad() { # NAME TEXT WANT
	printf '%b' "$2" >"$T/bad.log"
	out=$(timeout 10 "$B" probe verify "$T/dev.img" --log "$T/bad.log" 2>&1)
	rc=$?
	t "$1: refused (exit 1)" '[ $rc -eq 1 ]'
	printf '%s\n' "$out" | grep -q "$3"
	ok $? "... $out"
}
bad "an empty log" "" "empty: did the writer reach its listener"
bad "not a probe log" "hello\n" "line 1: not a 'blackout-probe 1"
bad "no pattern line" "$hdr\n" "the pattern was never reported laid"
bad "a write outside the region" "$hdr\nB 1\nI 2 60 8 0\nW 2\n" "line 3: a write outside the region"
bad "generations going back" "$hdr\nB 1\nF 5\nF 4\n" "line 4: generation 4 does not follow 5"
bad "a W without its I" "$hdr\nB 1\nW 2\n" "line 3: a 'W' line without its 'I' line"
bad "binary junk" "$hdr\nB 1\n\001\377\n" "line 3: not 'I GEN"
bad "a number past 2^64" "$hdr\nB 1\nF 99999999999999999999999\n" "line 3"
printf '%s\nB 1\n' 'blackout-probe 1 run=00000000000000ab unit=512 first=0 units=1048576' \
	>"$T/big.log"
out=$("$B" probe verify "$T/dev.img" --log "$T/big.log" 2>&1)
rc=$?
t "a region larger than the device: refused (exit 1)" '[ $rc -eq 1 ]'
printf '%s\n' "$out" | grep -q "does not fit this device"
ok $? "... naming the mismatch: $out"
# the tail torn by the pull is ignored
printf '%s\nB 1\nI 2 0 8 0\nW 2\nF 3\nI 4 8 8' "$hdr" >"$T/torn.log"
truncate -s 32K "$T/small.img"
"$B" probe verify "$T/small.img" --log "$T/torn.log" >/dev/null 2>&1
rc=$?
t "a log whose last line was cut short by the pull is read (exit 0 or 3)" \
	'[ $rc -eq 0 ] || [ $rc -eq 3 ]'
done_testing
