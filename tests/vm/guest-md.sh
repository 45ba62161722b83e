# guest-md.sh — the md parts of the vmtest guest (sourced by guest-init when the
# kernel command line has bo.md=LEVEL:N:MISSING, docs/md.md): the plugin serves the
# members as exports m0..m<N-1> (members=yes) and the marker export; the guest attaches
# each present member with the kernel's own NBD client (/dev/nbd<I>, real FUA and a
# flush per member), the marker as /dev/nbd<N>, and creates md RAID LEVEL over them with
# member MISSING left out ("-": none), as a user would with mdadm. The filesystem then
# goes on /dev/md0. Not a general-purpose script: busybox sh, no udev.

# md_attach: sets D=/dev/md0 and BO_MARK; dies naming what failed
md_attach() {
	level=${BO_md%%:*}
	rest=${BO_md#*:}
	n=${rest%%:*}
	missing=${rest#*:}
	case "$level:$n:$missing" in
	[0-9]:[0-9]:[0-9-] | [0-9]:[0-9][0-9]:[0-9-] | [0-9]:[0-9][0-9]:[0-9][0-9]) ;;
	*) die "bo.md=$BO_md: LEVEL:N:MISSING (e.g. 5:4:3)" ;;
	esac
	for m in $(cat /lib/modules/load-md); do
		insmod "/lib/modules/$m" 2>/dev/null
	done
	grep -q "\[raid$level\]" /proc/mdstat 2>/dev/null || die "no md personality raid$level (load-md)"
	ifconfig lo 127.0.0.1 up
	ifconfig eth0 10.0.2.15 netmask 255.255.255.0 up || die "no eth0"
	i=0
	while [ ! -b /dev/nbd$n ]; do
		i=$((i + 1))
		[ $i -gt 50 ] && die "no /dev/nbd$n"
		sleep 0.1
	done
	devs= i=0
	while [ $i -lt "$n" ]; do
		if [ "$i" = "$missing" ]; then
			devs="$devs missing"
		else
			/sbin/nbd-client 10.0.2.100 10809 /dev/nbd$i -b 4096 -N m$i -nonetlink \
				>/dev/console 2>&1 || die "nbd-client: no export m$i (members=yes?)"
			devs="$devs /dev/nbd$i"
		fi
		i=$((i + 1))
	done
	if [ "$BO_record" = 1 ]; then
		/sbin/nbd-client 10.0.2.100 10809 /dev/nbd$n -b 4096 -N marker -nonetlink \
			>/dev/console 2>&1 || die "nbd-client: no marker export (is the plugin recording?)"
		BO_MARK=/dev/nbd$n
	fi
	mkdir -p /run/mdadm
	# --run: start even though a member is missing; the array is new, so nothing to resync
	# on a degraded RAID5, and a healthy one's resync is set-up I/O (before step 0)
	/sbin/mdadm --create /dev/md0 --level="$level" --raid-devices="$n" --chunk=64 \
		--metadata=1.2 --run --force $devs >/dev/console 2>&1 || die "mdadm --create failed"
	/sbin/mdadm --wait /dev/md0 >/dev/null 2>&1
	D=/dev/md0
}
