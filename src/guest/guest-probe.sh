# SPDX-License-Identifier: GPL-2.0-or-later
# guest-probe.sh — the probe mode of the vmtest guest (bo.mode=probe, sourced by
# guest-init once the NBD disk $D is attached): `bo-probe write` on the disk the plugin
# serves, its acknowledgements on the third serial port (/dev/ttyS2, a file on the
# host), READY/GO on the marker port around the host arming its cut through the
# plugin's control socket. The host verifies (tests/vm/vm_probe.t, docs/probe.md).
# Kernel command line: bo.probe_size=BYTES (default 2M), bo.probe_seed=N (default 1).
[ -x /bin/bo-probe ] || die "no /bin/bo-probe in the initramfs (make, then scripts/vm-build)"
P_SIZE=2M P_SEED=1
for a in $(cat /proc/cmdline); do
	case "$a" in
	bo.probe_size=*) P_SIZE=${a#*=} ;;
	bo.probe_seed=*) P_SEED=${a#*=} ;;
	esac
done
A=/dev/ttyS2
[ -c $A ] || die "no $A for the acknowledgements (a third -serial on the host)"
stty raw -echo <$A 2>/dev/null
# the pattern is laid and flushed; READY, then the stream once the host says GO (fd 3
# is the marker port, inherited through bo-probe by the --on-ready shell)
/bin/bo-probe write $D --log $A --size "$P_SIZE" --seed "$P_SEED" --settle 0 \
	--destroy-contents \
	--on-ready 'echo BO:READY >&3; while read -r w <&3; do [ "$w" = GO ] && exit 0; done; exit 1' \
	>/tmp/probe.out 2>&1
rc=$?
sed 's/^/probe: /' /tmp/probe.out >/dev/console
say "PROBE $rc $(tail -n 1 /tmp/probe.out | tr -d '\r')"
say DONE
sleep 600
poweroff -f
