# guest-md.sh — the md parts of the vmtest guest (sourced by guest-init when the
# kernel command line has bo.md=LEVEL:N:MISSING[:j], docs/md.md): the plugin serves the
# members as exports m0..m<N-1> (members=yes) and the marker export; the guest attaches
# each present member with the kernel's own NBD client (/dev/nbd<I>, real FUA and a
# flush per member), the marker as /dev/nbd<N>, and creates md RAID LEVEL over them with
# member MISSING left out ("-": none), chunks of bo.mdchunk KiB (default 64), as a user
# would with mdadm; with ":j" one more
# export, m<N>, is md's write journal (--write-journal) and the marker is /dev/nbd<N+1>.
# The filesystem then goes on /dev/md0. Not a general-purpose script: busybox sh, no udev.

# md_attach: sets D=/dev/md0 and BO_MARK; dies naming what failed
md_attach() {
	level=${BO_md%%:*}
	rest=${BO_md#*:}
	n=${rest%%:*}
	missing=${rest#*:}
	journal=
	case "$missing" in *:j) missing=${missing%:j} journal=/dev/nbd$n ;; esac
	case "$level:$n:$missing" in
	[0-9]:[0-9]:[0-9-] | [0-9]:[0-9][0-9]:[0-9-] | [0-9]:[0-9][0-9]:[0-9][0-9]) ;;
	[0-9]:[0-9]:[0-9-]:j | [0-9]:[0-9][0-9]:[0-9-]:j | [0-9]:[0-9][0-9]:[0-9][0-9]:j) ;;
	*) die "bo.md=$BO_md: LEVEL:N:MISSING[:j] (e.g. 5:4:3)" ;;
	esac
	case "$BO_mdchunk" in 4 | 8 | 16 | 32 | 64 | 128 | 256 | 512) ;;
	*) die "bo.mdchunk=$BO_mdchunk: a chunk of 4 to 512 KiB, a power of two" ;;
	esac
	for m in $(cat /lib/modules/load-md); do
		insmod "/lib/modules/$m" 2>/dev/null
	done
	grep -q "\[raid$level\]" /proc/mdstat 2>/dev/null || die "no md personality raid$level (load-md)"
	ifconfig lo 127.0.0.1 up
	ifconfig eth0 10.0.2.15 netmask 255.255.255.0 up || die "no eth0"
	mk=$n
	[ -n "$journal" ] && mk=$((n + 1))
	i=0
	while [ ! -b /dev/nbd$mk ]; do
		i=$((i + 1))
		[ $i -gt 50 ] && die "no /dev/nbd$mk"
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
	jopt=
	if [ -n "$journal" ]; then
		/sbin/nbd-client 10.0.2.100 10809 "$journal" -b 4096 -N m$n -nonetlink \
			>/dev/console 2>&1 || die "nbd-client: no export m$n for the write journal"
		jopt="--write-journal $journal"
	fi
	if [ "$BO_record" = 1 ]; then
		/sbin/nbd-client 10.0.2.100 10809 /dev/nbd$mk -b 4096 -N marker -nonetlink \
			>/dev/console 2>&1 || die "nbd-client: no marker export (is the plugin recording?)"
		BO_MARK=/dev/nbd$mk
	fi
	mkdir -p /run/mdadm
	# --run: start even though a member is missing; the array is new, so nothing to resync
	# on a degraded RAID5, and a healthy one's resync is set-up I/O (before step 0)
	/sbin/mdadm --create /dev/md0 --level="$level" --raid-devices="$n" --chunk="$BO_mdchunk" \
		--metadata=1.2 --run --force $jopt $devs >/dev/console 2>&1 || die "mdadm --create failed"
	/sbin/mdadm --wait /dev/md0 >/dev/null 2>&1
	# the kernel's own account of the array (level, chunk, layout as "algorithm N",
	# members present) for the record's console
	grep -A1 '^md0 :' /proc/mdstat >/dev/console
	D=/dev/md0
}

# ---- judge mode: a state's members as linear maps of its snapshot ----------------
# bo.members=S:L,... (512-byte sectors, from the store's `members` file): member I of
# the state is sectors [S, S+L) of the snapshot. md_judge_up NAME SNAPSHOT assembles
# /dev/md0 from the members that carry an md superblock, as a user would: without
# --run first; md refuses a dirty degraded array (said on the console as
# "md: NAME: refused: ..."), and then, as the user's next step, --run --force.
# Sets MDDEV=/dev/md0; returns non-zero (with /tmp/md.err) when it cannot assemble.
md_judge_load() {
	for m in $(cat /lib/modules/load-md); do
		insmod "/lib/modules/$m" 2>/dev/null
	done
	mkdir -p /run/mdadm
}
md_judge_up() {
	devs= i=0
	for ml in $(echo "$BO_members" | tr , ' '); do
		dmsetup create "$1m$i" --noudevsync --table "0 ${ml#*:} linear $2 ${ml%:*}" \
			>/tmp/dm.err 2>&1 || die "$1: dmsetup create $1m$i failed: $(tail -n 1 /tmp/dm.err)"
		/sbin/mdadm --examine "/dev/mapper/$1m$i" >/dev/null 2>&1 && devs="$devs /dev/mapper/$1m$i"
		i=$((i + 1))
	done
	MDDEV=/dev/md0
	/sbin/mdadm --assemble $MDDEV $devs >/tmp/md.err 2>&1 && return 0
	echo "md: $1: refused: $(tail -n 1 /tmp/md.err)" >/dev/console
	/sbin/mdadm --stop $MDDEV >/dev/null 2>&1
	/sbin/mdadm --assemble --run --force $MDDEV $devs >/tmp/md.err 2>&1
}
# md_judge_down NAME: stops the array and removes the members' maps
md_judge_down() {
	/sbin/mdadm --stop /dev/md0 >/dev/null 2>&1
	i=0
	for ml in $(echo "$BO_members" | tr , ' '); do
		dmsetup remove --noudevsync "$1m$i" >/tmp/dm.err 2>&1 ||
			die "$1: dmsetup remove $1m$i failed: $(tail -n 1 /tmp/dm.err)"
		i=$((i + 1))
	done
}
