#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_probe.t — `blackout probe` proven on devices whose behaviour is known: the guest's
# bo-probe writes to the NBD disk the plugin serves (the guest kernel's own NBD client:
# real FUA and flushes), its acknowledgements go to the host through a third serial port,
# the host cuts the power through the control socket (`cut-at N SEED`: the N-th write
# after the pattern is in flight), replugs, copies the disk out and verifies it with
# the log. The grid of the unit tests: cheap flash (128 KiB erase blocks) → collateral
# damage, erase block 128 KiB; a cache ignoring flushes → flushes not honoured; an
# honest cache and careful flash → honoured, no damage; a tearing disk → torn sectors;
# each agreeing with `blackout probe spec` on the same stack (docs/probe.md).
. "$(dirname "$0")/../test-lib.sh"
need_tool qemu-system-x86_64 nbdkit socat qemu-img timeout

PLUGIN=$BUILD/blackout-nbdkit.so
[ -f "$PLUGIN" ] || bail "$PLUGIN missing: make"
[ -x "$BUILD/guest/bo-probe" ] || bail "$BUILD/guest/bo-probe missing: make"
VM=$("$BLACKOUT_SRC/scripts/vm-build" "$BUILD/vm") || bail "scripts/vm-build failed"
INITRD=$VM/initramfs.cpio FS=ext4 MOPT=defaults
SEED=2 CUT=40
# a probe's guest and nbdkit, should the script end inside one (vm_cleanup is
# scripts/vm-lib.sh's, sourced by the first probe; it stops only what still runs)
at_exit 'command -v vm_cleanup >/dev/null && vm_cleanup'

# probe NAME SPEC: one boot; leaves $T/NAME/verify.out and $T/NAME/spec.out
probe() {
	local name=$1
	OUT=$T/$name STACK=$2
	mkdir -p "$OUT"
	NBD_ARGS=()
	BOOT_EXTRA="bo.probe_size=2M bo.probe_seed=$SEED"
	. "$BLACKOUT_SRC/scripts/vm-lib.sh"
	vm_attach_nbd
	DISK+=(-serial "file:$OUT/acks.raw")
	start_nbd || return 1
	boot probe g 240 2>/dev/null
	if ! wait_marker g READY 200; then
		echo "# $name: no READY: $(tail -n 3 "$OUT/g.console" | tr '\n' ' ')"
		vm_cleanup
		return 1
	fi
	# the pattern was written before the cut is armed; idle time puts it on the media
	ctl settle >/dev/null
	ctl "cut-at $CUT seed:$SEED" | tail -n 1 | sed 's/^/# /'
	go g
	wait_marker g DONE 200
	local rc=$?
	tr -d '\r' <"$OUT/g.markers" | grep '^BO:PROBE' | sed 's/^/# /'
	kill_guest
	ctl replug >/dev/null
	timeout 60 qemu-img convert -f raw -O raw "nbd+unix:///?socket=$SOCK" "$OUT/dev.img" ||
		rc=1
	stop_nbd
	tr -d '\r' <"$OUT/acks.raw" >"$OUT/acks.log"
	"$B" probe verify "$OUT/dev.img" --log "$OUT/acks.log" >"$OUT/verify.out" 2>&1
	sed 's/^/#   vm: /' "$OUT/verify.out"
	"$B" probe spec "$STACK" --seed $SEED --cut-at $CUT --size 2M >"$OUT/spec.out" 2>&1
	sed 's/^/# spec: /' "$OUT/spec.out"
	return $rc
}
# line NAME WHICH KEY: the verdict line starting with KEY, of vm or spec
line() {
	local f=$T/$1/verify.out
	[ "$2" = spec ] && f=$T/$1/spec.out
	grep "^$3" "$f" | head -n 1
}
verdict() { line "$@" | sed 's/ (.*//; s/;.*//'; }
# agree NAME: the guest's verdicts on flushes, FUA, torn sectors and collateral damage are the
# in-process probe's, counts included (same seed, same stream, same cut)
agree() {
	local k
	for k in flushes fua "torn sectors" "collateral damage"; do
		[ "$(line "$1" vm "$k")" = "$(line "$1" spec "$k")" ] || return 1
	done
}

probe flash 'flash(ftl=cheap,eb=128k,size=16M)'
ok $? "cheap flash: the probe ran in the guest and the power was cut"
is "$(verdict flash vm flushes)" "flushes: honoured" "cheap flash: flushes honoured"
line flash vm "collateral damage" | grep -q "^collateral damage: YES, [0-9]* units"
ok $? "cheap flash: collateral damage"
eb=$(line flash vm "collateral damage" | sed -n 's/.*erase block at least \([0-9]* KiB\).*/\1/p')
is "$eb" "128 KiB" "cheap flash: erase block 128 KiB"
agree flash
ok $? "cheap flash: agrees with probe spec"

probe lying 'cache(flush=ignore) > disk > mem(size=16M)'
ok $? "a cache ignoring flushes: ran and cut"
is "$(verdict lying vm flushes)" "flushes: NOT honoured" "flushes not honoured"
agree lying
ok $? "agrees with probe spec"

probe honest 'cache(flush=honor) > disk > mem(size=16M)'
ok $? "an honest cache: ran and cut"
is "$(verdict honest vm flushes)/$(verdict honest vm "collateral damage")" \
	"flushes: honoured/collateral damage: none seen" "flushes honoured, no collateral damage"
agree honest
ok $? "agrees with probe spec"

probe careful 'flash(ftl=careful,eb=128k,size=16M)'
ok $? "careful flash: ran and cut"
is "$(verdict careful vm flushes)/$(verdict careful vm "collateral damage")" \
	"flushes: honoured/collateral damage: none seen" "flushes honoured, no collateral damage"
agree careful
ok $? "agrees with probe spec"

probe tear 'disk(tear=byte) > mem(size=16M)'
ok $? "a tearing disk: ran and cut"
is "$(verdict tear vm "torn sectors")" "torn sectors: yes" "torn sectors"
agree tear
ok $? "agrees with probe spec"
done_testing
