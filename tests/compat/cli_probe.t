#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_probe.t — `blackout probe write`'s log and length (docs/probe.md): the log is
# refused when it is the device probed (by path, link or symlink: the same inode), and
# without --ops the stream ends by itself (10000 operations) instead of running until
# a pull that may never come; the guest's bo-probe runs the same driver and refuses
# the same. The device and log sit on tmpfs when there is one: the default stream's
# 10000 synced writes take a second there and a minute or two on a disk.
. "$(dirname "$0")/../test-lib.sh"
need_tool timeout

D=$T
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	D=$(mktemp -d /dev/shm/cli_probe.XXXXXX) && at_exit "rm -rf '$D'"
fi
truncate -s 8M "$D/dev.img"
head -c 4096 /dev/urandom >"$D/head"
dd if="$D/head" of="$D/dev.img" conv=notrunc 2>/dev/null
for how in same link symlink; do
	case $how in
	same) log=$D/dev.img ;;
	link) log=$D/hard.img && ln -f "$D/dev.img" "$log" ;;
	symlink) log=$D/sym.img && ln -sf "$D/dev.img" "$log" ;;
	esac
	out=$(timeout 30 "$B" probe write "$D/dev.img" --log "$log" --settle 0 --ops 50 2>&1)
	rc=$?
	t "--log the device itself ($how): refused, exit 1" '[ $rc -eq 1 ]'
	printf '%s\n' "$out" | grep -q 'is the device probed itself: the log must be on another device'
	ok $? "... saying why: $out"
	cmp -s -n 4096 "$D/head" "$D/dev.img" && [ "$(stat -c %s "$D/dev.img")" -eq 8388608 ]
	ok $? "... and the device is untouched (not truncated by the log's open)"
done

out=$(timeout 30 "$B" probe write "$D/dev.img" --log "$D/w.log" --settle 0 --ops 40 2>&1)
ok $? "a log on another file is taken"

# no --ops: the stream ends by itself (before: it ran until the device failed)
timeout 600 "$B" probe write "$D/dev.img" --log "$D/def.log" --settle 0 >"$D/out" 2>&1
rc=$?
t "no --ops: the stream ends by itself, exit 0 (exit $rc)" '[ $rc -eq 0 ]'
grep -q "the stream's --ops are done (no pull came)" "$D/out"
ok $? "... saying no pull came: $(head -n 1 "$D/out")"
n=$(grep -c '^[WF] ' "$D/def.log")
is "$n" 10000 "... after 10000 completed operations (writes and flushes in the log)"
"$B" probe verify "$D/dev.img" --log "$D/def.log" >/dev/null
ok $? "... and its log verifies"

# the guest's static bo-probe: the same driver, the same refusal, the same run
P=$BUILD/guest/bo-probe
if [ -x "$P" ]; then
	out=$(timeout 30 "$P" write "$D/dev.img" --log "$D/dev.img" --settle 0 --ops 5 2>&1)
	rc=$?
	t "bo-probe: --log the device itself refused, exit 1" '[ $rc -eq 1 ]'
	printf '%s\n' "$out" | grep -q 'is the device probed itself'
	ok $? "... saying why: $out"
	timeout 60 "$P" write "$D/dev.img" --log "$D/g.log" --settle 0 --ops 200 >/dev/null 2>&1 &&
		"$P" verify "$D/dev.img" --log "$D/g.log" >/dev/null &&
		"$B" probe verify "$D/dev.img" --log "$D/g.log" >/dev/null
	ok $? "bo-probe writes and verifies; blackout probe verifies its log"
else
	skip "bo-probe" "$P not built"
fi
done_testing
