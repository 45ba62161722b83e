#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# probe_safety.t — `blackout probe write` never destroys what it should not: a mounted
# loop device is refused even with --destroy-contents, a signature libblkid knows (a
# filesystem, a partition table, an md RAID member, a firmware RAID member, a swap
# area) is refused unless --destroy-contents is given, a region past the end of the
# device is refused; each refusal says what to do. Then a write + verify round trip on
# an image file with no pull: every promise kept (docs/probe.md).
. "$(dirname "$0")/../test-lib.sh"
need_tool mkfs.ext4 e2fsck losetup mount umount

truncate -s 16M "$T/fs.img"
mkfs.ext4 -q -F "$T/fs.img"
out=$("$B" probe write "$T/fs.img" --log "$T/a.log" --settle 0 --ops 5 2>&1)
rc=$?
t "an ext4 image is refused (exit 1)" '[ $rc -eq 1 ]'
printf '%s\n' "$out" | grep -q "holds an ext4 filesystem (ext4 signature at byte 1080).*--destroy-contents"
ok $? "naming the filesystem and the option that overrides it: $out"
e2fsck -fn "$T/fs.img" >/dev/null 2>&1
ok $? "the refused image is untouched (e2fsck -fn clean)"

truncate -s 8M "$T/part.img"
# an MBR by hand: one Linux (0x83) partition entry and the boot signature
printf '\203' | dd of="$T/part.img" bs=1 seek=450 conv=notrunc 2>/dev/null
printf '\125\252' | dd of="$T/part.img" bs=1 seek=510 conv=notrunc 2>/dev/null
out=$("$B" probe write "$T/part.img" --log "$T/a.log" --settle 0 --ops 5 2>&1)
rc=$?
t "an image with an MBR partition table is refused (exit 1)" '[ $rc -eq 1 ]'
printf '%s\n' "$out" | grep -q "partition table"
ok $? "naming the partition table: $out"

# signatures of volumes, written as their tools write them (the magic where libblkid
# looks): md's 0.90 superblock (magic, version 0.90) 64 KiB-aligned at the end, Intel's
# firmware RAID (IMSM) metadata two sectors before the end; and mkswap's swap area
refused() { # IMAGE DESC WANT
	cp "$1" "$1.orig"
	out=$("$B" probe write "$1" --log "$T/a.log" --settle 0 --ops 5 2>&1)
	rc=$?
	t "$2 is refused (exit 1)" '[ $rc -eq 1 ]'
	printf '%s\n' "$out" | grep -q "holds $3.*--destroy-contents (or wipe it first: wipefs -a"
	ok $? "... naming it and the way out: $out"
	cmp -s "$1" "$1.orig"
	ok $? "... and left untouched"
}
truncate -s 8M "$T/md.img"
printf '\374\116\053\251\000\000\000\000\132\000\000\000' |
	dd of="$T/md.img" bs=1 seek=$((8 * 1048576 - 65536)) conv=notrunc 2>/dev/null
refused "$T/md.img" "an md RAID member (0.90 superblock)" "a Linux md RAID member (linux_raid_member signature"
truncate -s 8M "$T/isw.img"
printf 'Intel Raid ISM Cfg Sig. 1.0.00' |
	dd of="$T/isw.img" bs=512 seek=$((8 * 2048 - 2)) conv=notrunc 2>/dev/null
refused "$T/isw.img" "an Intel firmware RAID member" "an Intel firmware RAID member (isw_raid_member"
if have_tool mkswap; then
	truncate -s 8M "$T/swap.img"
	chmod 600 "$T/swap.img"
	mkswap "$T/swap.img" >/dev/null 2>&1
	refused "$T/swap.img" "a swap area" "a swap area (swap signature at byte 4086)"
else
	skip "a swap area is refused" "no mkswap"
fi

out=$("$B" probe timing "$T/fs.img" --max-eb 64k 2>&1)
rc=$?
t "probe timing refuses the ext4 image too (exit 1)" '[ $rc -eq 1 ]'
printf '%s\n' "$out" | grep -q "holds an ext4 filesystem"
ok $? "... naming it"

"$B" probe write "$T/fs.img" --log "$T/a.log" --settle 0 --ops 20 --size 1M \
	--destroy-contents >/dev/null 2>&1
ok $? "--destroy-contents overrides a signature"

out=$("$B" probe write "$T/fs.img" --log "$T/a.log" --settle 0 --offset 12M --size 8M 2>&1)
rc=$?
t "a region past the end is refused (exit 1)" '[ $rc -eq 1 ]'
printf '%s\n' "$out" | grep -q "never writes outside the device"
ok $? "saying the probe never writes outside the device: $out"

"$B" probe write "$T/fs.img" --settle 0 >/dev/null 2>&1
rc=$?
t "write without --log or --listener is a usage error (exit 2)" '[ $rc -eq 2 ]'

# a mounted loop device: refused whatever the options
truncate -s 16M "$T/loop.img"
mkfs.ext4 -q -F "$T/loop.img"
mkdir "$T/mnt"
L=$(losetup -f --show "$T/loop.img" 2>/dev/null)
if [ -n "$L" ] && mount "$L" "$T/mnt" 2>/dev/null; then
	at_exit "umount '$T/mnt' 2>/dev/null; losetup -d '$L' 2>/dev/null"
	echo precious >"$T/mnt/file"
	sync
	out=$("$B" probe write "$L" --log "$T/b.log" --settle 0 --ops 5 --destroy-contents 2>&1)
	rc=$?
	t "a mounted loop device is refused, even with --destroy-contents (exit 1)" '[ $rc -eq 1 ]'
	printf '%s\n' "$out" | grep -q "is mounted on $T/mnt.*umount"
	ok $? "naming the mount point and the way out: $out"
	is "$(cat "$T/mnt/file")" precious "the mounted filesystem's file is intact"
	umount "$T/mnt"
	"$B" probe write "$L" --log "$T/b.log" --settle 0 --ops 30 --destroy-contents >/dev/null 2>&1
	ok $? "unmounted, the loop device is probed with --destroy-contents"
	out=$("$B" probe verify "$L" --log "$T/b.log")
	ok $? "... and verifies with every promise kept (no pull)"
	losetup -d "$L"
else
	[ -n "$L" ] && losetup -d "$L"
	skip "a mounted loop device is refused" "cannot set up and mount a loop device here"
fi

# a round trip on a blank file: no pull, every promise kept
truncate -s 8M "$T/blank.img"
"$B" probe write "$T/blank.img" --log "$T/c.log" --settle 0 --ops 200 --seed 7 >/dev/null 2>&1
ok $? "write on a blank image"
head -1 "$T/c.log" | grep -q "^blackout-probe 1 run=[0-9a-f]\{16\} unit=512 first=0 units=16384$"
ok $? "the log begins with its header"
out=$("$B" probe verify "$T/blank.img" --log "$T/c.log")
ok $? "verify: no broken promise"
printf '%s\n' "$out" | grep -q "^flushes: honoured" &&
	printf '%s\n' "$out" | grep -q "^collateral damage: none seen"
ok $? "flushes honoured, no collateral damage"
# a unit the log says was flushed, changed behind the probe's back
unit=$(awk '$1 == "I" { u = $3 } $1 == "F" && u != "" { print u; exit }' "$T/c.log")
printf 'XXXX' | dd of="$T/blank.img" bs=1 seek=$((unit * 512 + 100)) conv=notrunc 2>/dev/null
out=$("$B" probe verify "$T/blank.img" --log "$T/c.log")
rc=$?
t "a flushed unit changed behind the probe's back: verify exits 3" '[ $rc -eq 3 ]'
done_testing
