#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_states.t — the plugin's states=DIR mode (docs/realkernel.md section 2), no VM:
# export s<N> reads as base.img + s<N>.delta; writes go to a private overlay per
# connection, dropped on disconnect, never to DIR; bad names and malformed deltas are
# refused with a message naming the file and the problem.
. "$(dirname "$0")/../test-lib.sh"
need_tool nbdkit qemu-io nbdinfo
PLUGIN="$BUILD/blackout-nbdkit.so"
[ -f "$PLUGIN" ] || bail "$PLUGIN not built (make all with nbdkit-plugin-dev)"
SOCK=$T/nbd.sock
NBD_PID=
stop() { [ -n "$NBD_PID" ] && kill "$NBD_PID" 2>/dev/null && wait "$NBD_PID" 2>/dev/null; NBD_PID=; }
at_exit stop
start() { # start ARGS...: nbdkit with the plugin; 0 once it listens
	stop
	rm -f "$T/pid" "$SOCK"
	timeout 120 nbdkit -f --exit-with-parent -U "$SOCK" -P "$T/pid" "$PLUGIN" "$@" \
		2>"$T/nbdkit.log" &
	NBD_PID=$!
	for _ in $(seq 1 200); do
		[ -s "$T/pid" ] && return 0
		kill -0 "$NBD_PID" 2>/dev/null || { NBD_PID=; return 1; }
		sleep 0.05
	done
	return 1
}
# qio EXPORT CMD...: one qemu-io connection to EXPORT running each CMD
qio() {
	local e=$1 a=()
	shift
	for c in "$@"; do a+=(-c "$c"); done
	timeout 60 qemu-io -t writeback -f raw "${a[@]}" "nbd+unix:///$e?socket=$SOCK" </dev/null
}

S=$T/store
mkdir -p "$S"
# base: 1 MiB of 0x11; s0: no change; s1: block 2 is 0x22, block 255 (the last) is 0x33
truncate -s 1M "$S/base.img"
qemu-io -f raw -c "write -P 0x11 0 1M" "$S/base.img" >/dev/null </dev/null
cp "$S/base.img" "$T/s1.img"
qemu-io -f raw -c "write -P 0x22 8192 4096" -c "write -P 0x33 1044480 4096" "$T/s1.img" \
	>/dev/null </dev/null
"$BLACKOUT" vmobserve delta "$S/base.img" "$S/base.img" "$S/s0.delta"
ok $? "vmobserve delta writes an empty delta"
"$BLACKOUT" vmobserve delta "$S/base.img" "$T/s1.img" "$S/s1.delta"
ok $? "vmobserve delta writes a two-block delta"
is "$(stat -c %s "$S/s1.delta")" $((16 + 2 * 4104)) "the delta holds exactly the two changed blocks"
sum0=$(md5sum <"$S/base.img")

start states="$S"
ok $? "nbdkit serves states=DIR"
is "$(timeout 20 nbdinfo --size "nbd+unix:///s1?socket=$SOCK" </dev/null)" 1048576 \
	"export s1 has base.img's size"
qio s0 "read -P 0x11 0 1M" >/dev/null
ok $? "s0 reads as base.img"
qio s1 "read -P 0x11 0 8192" "read -P 0x22 8192 4096" "read -P 0x11 12288 1032192" \
	"read -P 0x33 1044480 4096" >/dev/null
ok $? "s1 reads as base.img with its delta's blocks over it"
qio s1 "read -P 0x11 8000 192" "read -P 0x22 8192 100" >/dev/null
ok $? "an unaligned read across the delta's edge gets base then delta bytes"

qio s1 "write -P 0x44 8192 100" "write -P 0x55 4000 200" "read -P 0x44 8192 100" \
	"read -P 0x22 8292 3996" "read -P 0x11 3900 100" "read -P 0x55 4000 200" \
	"write -z 1044480 4096" "read -P 0 1044480 4096" >/dev/null
ok $? "a connection reads its own writes and write-zeroes (partial blocks kept)"
qio s1 "read -P 0x22 8192 4096" "read -P 0x11 4000 200" "read -P 0x33 1044480 4096" >/dev/null
ok $? "the next connection sees the state as built (the overlay was dropped)"
is "$(md5sum <"$S/base.img")" "$sum0" "base.img was never written"
is "$(stat -c %s "$S/s1.delta")" $((16 + 2 * 4104)) "the delta was never written"

refused() { # refused EXPORT PATTERN DESC: the export is refused, nbdkit says why
	: >"$T/nbdkit.log.mark"
	if timeout 20 nbdinfo --size "nbd+unix:///$1?socket=$SOCK" </dev/null >/dev/null 2>&1; then
		ok 1 "$3 (it was served)"
		return
	fi
	grep -q -- "$2" "$T/nbdkit.log"
	ok $? "$3"
	grep -q -- "$2" "$T/nbdkit.log" || sed 's/^/# nbdkit: /' "$T/nbdkit.log" | tail -n 5
}
refused "" "export '': not a state" "the default export is refused"
refused s01 "export 's01': not a state" "a name with a leading zero is refused"
refused x1 "export 'x1': not a state" "a name not s<N> is refused"
refused s1000000000 "not a state" "N of 10 digits is refused"
refused s7 "s7.delta: No such file" "a missing delta is refused naming the file"
cp "$S/s1.delta" "$S/s2.delta" && printf 'XOSTATE1' | dd of="$S/s2.delta" conv=notrunc status=none
refused s2 "s2.delta: wrong magic" "a delta with the wrong magic is refused"
head -c 4000 "$S/s1.delta" >"$S/s3.delta"
refused s3 "s3.delta: size 4000 bytes does not match" "a truncated delta is refused"
cp "$S/s1.delta" "$S/s4.delta" && printf '\x00\x10\x00\x00\x00\x00\x00\x00' |
	dd of="$S/s4.delta" bs=1 seek=16 conv=notrunc status=none
refused s4 "s4.delta: record 0: block 4096 outside the device" "a block past the device is refused"
cp "$S/s1.delta" "$S/s5.delta" && printf '\xff\x00\x00\x00\x00\x00\x00\x00' |
	dd of="$S/s5.delta" bs=1 seek=16 conv=notrunc status=none
refused s5 "s5.delta: record 1: block 255 not after block 255" "blocks out of order are refused"
cp "$S/s1.delta" "$S/s6.delta" && printf '\x00\x02\x00\x00' |
	dd of="$S/s6.delta" bs=1 seek=8 conv=notrunc status=none
refused s6 "s6.delta: block size 512, expected 4096" "a block size not 4096 is refused"
mkfifo "$S/s8.delta"
refused s8 "s8.delta: not a regular file" "a delta that is not a regular file is refused (no hang)"
qio s1 "read -P 0x22 8192 4096" >/dev/null
ok $? "after every refusal the server still serves"
stop

truncate -s 1000 "$T/bad.img"
mkdir -p "$T/bad" && mv "$T/bad.img" "$T/bad/base.img"
start states="$T/bad"
ok $((!$?)) "a base.img not a multiple of 4096 is refused at start"
grep -q "base.img is 1000 bytes, not a non-zero multiple of 4096" "$T/nbdkit.log"
ok $? "... saying so"
start states="$T/nowhere"
ok $((!$?)) "a missing store is refused at start"
start states="$S" stack='mem(size=1M)'
ok $((!$?)) "states= and stack= together are refused"
done_testing
