#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_shrink.t — the dm-flakey reproducer `blackout shrink` writes runs without blackout on
# the real kernel: the planted 8-step lost-fsync workload is shrunk on blackout's model,
# and its script, run in one guest (busybox, dmsetup, mke2fs, dm-flakey) on a virtio
# disk, reports the fsynced file lost; the same script with NO_DROP=1 (no drop step), run
# first in the same boot, passes. The guest's /init is this test's, layered over the
# vmtest initramfs as a second cpio archive (the kernel unpacks both, the later wins).
. "$(dirname "$0")/../test-lib.sh"
need_tool qemu-system-x86_64 cpio gzip

cat >"$T/lost8.wl" <<'EOF'
name lost8
summary an overwrite fsynced and lost by a drive cache the fs never flushes, among six bystander steps
setup
mkdir /d
create /f
write /f 0 16k
create /g
run
mkdir /x
create /y
write /f 0 8k
truncate /g 1k
fsync /f
rename /y /z
mkdir /x/w
unlink /g
EOF
"$B" shrink --stack 'cache(size=64k,flush=honor) > disk > mem(size=8M)' \
	--fs 'ext3,data=ordered,barrier=0' --workload "$T/lost8.wl" --out "$T/out" \
	--max-states 500 --max-candidates 64 --quiet >"$T/shrink.out" 2>&1
ok $? "blackout shrink shrinks the planted workload"
sed 's/^/# /' "$T/shrink.out"
grep -q '8 run steps -> 2' "$T/shrink.out"
ok $? "to 2 run steps"
[ -s "$T/out/lost8-repro.sh" ]
ok $? "and writes the dm-flakey script" || { done_testing; exit; }

vm=$("$BLACKOUT_SRC/scripts/vm-build" "$BUILD/vm" 2>"$T/build.err")
ok $? "vm-build builds or reuses the guest" || { sed 's/^/# /' "$T/build.err"; done_testing; exit; }
cpio -t <"$vm/initramfs.cpio" 2>/dev/null | grep -qx 'lib/modules/dm-flakey.ko'
ok $? "its initramfs carries dm-flakey"

# The second archive: an /init that runs the script twice on /dev/vda and says how each
# ended on the second serial port.
mkdir -p "$T/layer"
cp "$T/out/lost8-repro.sh" "$T/layer/repro.sh"
cat >"$T/layer/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /lib/modules/load /lib/modules/load-flakey); do
	[ "$m" = brd.ko ] || insmod "/lib/modules/$m" 2>/dev/null
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
export MKE2FS=/sbin/mke2fs E2FSCK=/sbin/e2fsck
NO_DROP=1 DEV=/dev/vda MNT=/mnt sh /repro.sh >/tmp/control.out 2>&1
echo "REPRO control $?" >/dev/ttyS1
sed 's/^/REPRO control: /' /tmp/control.out >/dev/ttyS1
DEV=/dev/vda MNT=/mnt sh /repro.sh >/tmp/drop.out 2>&1
echo "REPRO drop $?" >/dev/ttyS1
sed 's/^/REPRO drop: /' /tmp/drop.out >/dev/ttyS1
poweroff -f
EOF
chmod +x "$T/layer/init" "$T/layer/repro.sh"
(cd "$T/layer" && printf 'init\nrepro.sh\n' | cpio -o -H newc --quiet) | gzip -1 >"$T/layer.gz"
cat "$vm/initramfs.cpio" "$T/layer.gz" >"$T/initrd.gz"
truncate -s 64M "$T/disk.img"
timeout -s KILL 300 qemu-system-x86_64 -accel tcg -cpu max -m 256 -smp 1 -nodefaults \
	-no-reboot -display none -kernel "$vm/vmlinuz" -initrd "$T/initrd.gz" \
	-append "console=ttyS0 loglevel=3 panic=-1 no_timer_check" \
	-serial "file:$T/console" -serial "file:$T/markers" \
	-drive "file=$T/disk.img,if=virtio,format=raw" </dev/null >"$T/qemu.log" 2>&1
ok $? "qemu ran to the guest's power-off"
tr -d '\r' <"$T/markers" | sed 's/^/# /'
tr -d '\r' <"$T/markers" | grep -qx 'REPRO control 0' &&
	tr -d '\r' <"$T/markers" | grep -q '^REPRO control: PASS'
ok $? "the control (NO_DROP=1: the same steps, nothing dropped) passes on $(cat "$vm/kver")"
tr -d '\r' <"$T/markers" | grep -qx 'REPRO drop 1' &&
	tr -d '\r' <"$T/markers" | grep -q '^REPRO drop: FAIL: /f: fsynced, not what was written'
ok $? "with the writes dropped from the step shrink chose, the fsynced /f is lost"
done_testing
