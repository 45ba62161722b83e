# SPDX-License-Identifier: GPL-2.0-or-later
# vm-lib.sh — the shell shared by the scripts that boot a guest on a blackout stack
# (scripts/vmrecord and scripts/vmtest): nbdkit serving the
# plugin, qemu booting the cached kernel and initramfs, the guest's serial markers, the
# control socket. Sourced, not run. Every process is started under `timeout` and killed
# by vm_cleanup (set as the EXIT trap by the caller).
#
# The caller sets: OUT (a directory), PLUGIN, STACK, VM (scripts/vm-build's output),
# INITRD, FS, MOPT, and optionally NBD_ARGS (an array of further plugin arguments) and
# BOOT_EXTRA (further kernel command-line words). vm_attach_nbd chooses the guest
# kernel's own NBD client (real FUA); the default is virtio-blk.

SOCK=$OUT/nbd.sock CTL=$OUT/ctl.sock
ATTACH=virtio
DISK=(-drive "file=nbd+unix:///?socket=$SOCK,format=raw,if=virtio,cache=writeback")
NBD_PID= QEMU_PID=
NBD_ARGS=(${NBD_ARGS[@]+"${NBD_ARGS[@]}"})
BOOT_EXTRA=${BOOT_EXTRA-}

# No host TCP port: qemu runs socat per guest connection to 10.0.2.100:10809.
vm_attach_nbd() {
	ATTACH=nbd
	DISK=(-netdev "user,id=n0,restrict=on,guestfwd=tcp:10.0.2.100:10809-cmd:socat - UNIX-CONNECT:$SOCK"
		-device virtio-net-pci,netdev=n0)
}

# kill_pidfile SIGNAL FILE: the real process (the `timeout` wrapper's child)
kill_pidfile() {
	local p
	p=$(cat "$2" 2>/dev/null) && [ -n "$p" ] && kill "-$1" "$p" 2>/dev/null
	rm -f "$2"
}

# start_nbd: nbdkit serving $STACK with the control socket; fails naming its log
start_nbd() {
	rm -f "$SOCK" "$CTL" "$OUT/nbd.pid"
	timeout 900 nbdkit -f --exit-with-parent -U "$SOCK" -P "$OUT/nbd.pid" "$PLUGIN" \
		stack="$STACK" control="$CTL" ${NBD_ARGS[@]+"${NBD_ARGS[@]}"} 2>>"$OUT/nbdkit.log" &
	NBD_PID=$!
	for _ in $(seq 1 200); do
		[ -s "$OUT/nbd.pid" ] && [ -S "$CTL" ] && return 0
		kill -0 "$NBD_PID" 2>/dev/null || break
		sleep 0.05
	done
	NBD_PID=
	echo "nbdkit did not start: $(tail -n 3 "$OUT/nbdkit.log")" >&2
	return 1
}
# stop_nbd: SIGTERM, so the plugin unloads cleanly (and saves a recording)
stop_nbd() {
	kill_pidfile TERM "$OUT/nbd.pid"
	[ -n "$NBD_PID" ] && kill "$NBD_PID" 2>/dev/null
	[ -n "$NBD_PID" ] && wait "$NBD_PID" 2>/dev/null
	NBD_PID=
}
ctl() { printf '%s\n' "$@" | timeout 30 socat -t 20 - "UNIX-CONNECT:$CTL"; }

# boot MODE TAG [SECONDS]: starts the guest in the background, killed after SECONDS
# (default 120); its marker port's output in $OUT/TAG.markers, console in TAG.console
boot() {
	rm -f "$OUT/$2.markers" "$OUT/$2.console" "$OUT/$2.sock" "$OUT/qemu.pid"
	: >"$OUT/$2.markers"
	# RAM as src/vm/guest.c sizes it: the initramfs unpacks into at most half of it
	local mem=$(($(stat -c %s "$INITRD") * 4 >> 20))
	[ $mem -ge 256 ] || mem=256
	timeout -s KILL "${3:-120}" qemu-system-x86_64 -pidfile "$OUT/qemu.pid" -accel tcg -cpu max \
		-m $mem -smp 1 -nodefaults -no-reboot -display none -kernel "$VM/vmlinuz" -initrd "$INITRD" \
		-append "console=ttyS0 loglevel=4 panic=-1 no_timer_check bo.attach=$ATTACH bo.mode=$1 bo.fs=$FS bo.mopt=$MOPT${BOOT_EXTRA:+ $BOOT_EXTRA}" \
		-chardev "socket,id=bo,path=$OUT/$2.sock,server=on,wait=off,logfile=$OUT/$2.markers" \
		-serial "file:$OUT/$2.console" -serial chardev:bo \
		"${DISK[@]}" </dev/null >>"$OUT/qemu.log" 2>&1 &
	QEMU_PID=$!
	# not a job of this shell: a guest killed on purpose (kill_guest) is no news, and
	# bash would print "Killed" with its whole command line when it reaps it
	disown "$QEMU_PID"
}
# kill_guest: SIGKILL (a power cut from the guest's side: qemu flushes nothing)
kill_guest() {
	local i
	for i in $(seq 1 50); do # qemu writes its pid file early; wait for it if young
		[ -s "$OUT/qemu.pid" ] || [ -z "$QEMU_PID" ] && break
		kill -0 "$QEMU_PID" 2>/dev/null || break
		sleep 0.02
	done
	kill_pidfile KILL "$OUT/qemu.pid"
	[ -n "$QEMU_PID" ] && kill -9 "$QEMU_PID" 2>/dev/null
	# disowned, so no `wait`: the shell reaps it; at most 5 s for the kernel to do so
	for i in $(seq 1 250); do
		[ -n "$QEMU_PID" ] && kill -0 "$QEMU_PID" 2>/dev/null || break
		sleep 0.02
	done
	QEMU_PID=
}
vm_cleanup() {
	kill_guest
	stop_nbd
}

marker() { tr -d '\r' <"$OUT/$1.markers" | grep -q "^BO:$2"; }
# go TAG: the guest waits after READY for this line on its marker port
go() { printf 'GO\n' | timeout 10 socat -t 1 - "UNIX-CONNECT:$OUT/$1.sock" >/dev/null 2>&1; }
# wait_marker TAG WORD SECONDS: 0 when seen, 1 on timeout, guest ERROR or guest exit
wait_marker() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		marker "$1" "$2" && return 0
		marker "$1" ERROR && return 1
		kill -0 "$QEMU_PID" 2>/dev/null || { marker "$1" "$2"; return; }
		sleep 0.1
	done
	return 1
}
