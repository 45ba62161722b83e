#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_kernels.t — scripts/vm-build --kernel: Debian 12's two cloud kernel series, 6.1 and
# 6.12, each cached apart and booted to the guest's check mode on an ext4 image (mount,
# walk, umount, e2fsck -fn in the guest). Asserts the kernel that ran is the series asked
# for (its boot banner) and that the guest saw a clean filesystem; a series vm-build does
# not know, or a cache asked for another series, is refused.
. "$(dirname "$0")/../test-lib.sh"
need_tool qemu-system-x86_64 mke2fs

truncate -s 64M "$T/ext4.img"
mke2fs -q -F -t ext4 "$T/ext4.img" || bail "mke2fs failed"
for series in 6.1 6.12; do
	[ $series = 6.1 ] && cache=$BUILD/vm || cache=$BUILD/vm-$series
	vm=$("$BLACKOUT_SRC/scripts/vm-build" --kernel $series "$cache" 2>"$T/build.err")
	ok $? "vm-build --kernel $series builds or reuses its cache"
	sed 's/^/# /' "$T/build.err"
	case "$(cat "$vm/kver" 2>/dev/null)" in
	$series.[0-9]*) ok 0 "the $series cache holds a $series kernel ($(cat "$vm/kver"))" ;;
	*) ok 1 "the $series cache holds a $series kernel ($(cat "$vm/kver" 2>/dev/null))" ;;
	esac
	cp "$T/ext4.img" "$T/disk.img"
	# loglevel=6 prints the banner (a KERN_NOTICE line) ("Linux version ...") among the guest's few lines
	timeout -s KILL 180 qemu-system-x86_64 -accel tcg -cpu max -m 256 -smp 1 -nodefaults \
		-no-reboot -display none -kernel "$vm/vmlinuz" -initrd "$vm/initramfs.cpio" \
		-append "console=ttyS0 loglevel=6 panic=-1 no_timer_check bo.mode=check bo.fs=ext4" \
		-serial "file:$T/console" -serial "file:$T/markers" \
		-drive "file=$T/disk.img,if=virtio,format=raw" </dev/null >"$T/qemu.log" 2>&1
	ok $? "$series: qemu ran to the guest's power-off"
	banner=$(tr -d '\r' <"$T/console" | grep -o 'Linux version [^ ]*' | head -n 1)
	is "$banner" "Linux version $(cat "$vm/kver")" "$series: the kernel that booted is the cached one"
	tr -d '\r' <"$T/markers" | grep -qx 'BO:END'
	ok $? "$series: the guest finished its check"
	tr -d '\r' <"$T/markers" | grep -qx 'BO:OBS mount 0' &&
		tr -d '\r' <"$T/markers" | grep -qx 'BO:OBS fsck 0'
	ok $? "$series: the guest mounted the image and its e2fsck found nothing"
done

"$BLACKOUT_SRC/scripts/vm-build" --kernel 6.3 "$T/x" 2>"$T/err"
is "$?:$(cat "$T/err")" "2:vm-build: --kernel 6.3: not a kernel series this knows (6.1 or 6.12)" \
	"an unknown series is refused, naming the known ones"
"$BLACKOUT_SRC/scripts/vm-build" --kernel 6.12 "$BUILD/vm" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "holds kernel 6\.1\..*not 6\.12: give another OUTDIR" "$T/err"
ok $? "a 6.1 cache asked for 6.12 is refused, not rebuilt over (exit $rc)"
done_testing
