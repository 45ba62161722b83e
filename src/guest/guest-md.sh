# SPDX-License-Identifier: GPL-2.0-or-later
# guest-md.sh — the md parts of the vmtest guest (sourced by guest-init when the
# kernel command line has bo.md=LEVEL:N:MISSING[:POLICY], docs/md.md): the plugin serves the
# members as exports m0..m<N-1> (members=yes) and the marker export; the guest attaches
# each present member with the kernel's own NBD client (/dev/nbd<I>, real FUA and a
# flush per member), the marker as /dev/nbd<N>, and creates md RAID LEVEL over them with
# member MISSING left out ("-": none; two as A+B), chunks of bo.mdchunk KiB (default 64),
# as a user would with mdadm, with --consistency-policy=ppl (":ppl") or an internal
# bitmap (":bitmap"); with ":j" one more
# export, m<N>, is md's write journal (--write-journal) and the marker is /dev/nbd<N+1>.
# The filesystem then goes on /dev/md0. Not a general-purpose script: busybox sh, no udev.

# md_parse: level n missing policy from bo.md=LEVEL:N:MISSING[:POLICY] (MISSING a
# member, two as A+B, or -; POLICY j, ppl or bitmap); dies naming what is wrong
md_parse() {
	IFS=: read -r level n missing policy extra <<EOF
$BO_md
EOF
	case "$level:$n:$extra" in
	[0156]:[2-9]: | [0156]:1[0-9]:) ;;
	*) die "bo.md=$BO_md: LEVEL:N:MISSING[:j|:ppl|:bitmap] (e.g. 5:4:3)" ;;
	esac
	case "$missing" in
	- | [0-9] | 1[0-9] | [0-9]+[0-9] | [0-9]+1[0-9] | 1[0-9]+[0-9] | 1[0-9]+1[0-9]) ;;
	*) die "bo.md=$BO_md: MISSING is a member, two as A+B, or -" ;;
	esac
	journal= popt=
	case "$policy" in
	'') ;;
	j) journal=/dev/nbd$n ;;
	ppl) popt=--consistency-policy=ppl ;;
	bitmap) popt=--bitmap=internal ;; # the bitmap policy: mdadm makes it with the bitmap
	*) die "bo.md=$BO_md: POLICY is j, ppl or bitmap" ;;
	esac
}

# md_attach: sets D=/dev/md0 and BO_MARK; dies naming what failed
md_attach() {
	md_parse
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
		if case "+$missing+" in *"+$i+"*) true ;; *) false ;; esac; then
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
	# RAID6 with one member missing would still resync its other parity, and md will not
	# start a degraded array that needs a resync ("cannot start dirty degraded array"):
	# the members are zeros, whose parities are zeros, so the array is clean as created
	clean=
	[ "$level" = 6 ] && [ "$missing" != - ] && clean=--assume-clean
	chunk=--chunk=$BO_mdchunk # RAID1 has no chunks (mdadm refuses the option)
	[ "$level" = 1 ] && chunk=
	/sbin/mdadm --create /dev/md0 --level="$level" --raid-devices="$n" $chunk \
		--metadata=1.2 --run --force $clean $jopt $popt $devs >/dev/console 2>&1 ||
		die "mdadm --create failed"
	/sbin/mdadm --wait /dev/md0 >/dev/null 2>&1
	# the kernel's own account of the array (level, chunk, layout as "algorithm N",
	# members present) for the record's console
	grep -A1 '^md0 :' /proc/mdstat >/dev/console
	D=/dev/md0
}

# md_settle: after the set-up is synced, before the run. With a write journal, md
# replays at assembly every stripe logged since its last checkpoint, and it checkpoints
# only when a quarter of the log is in use: without this the judge's assembly of every
# state replayed the ~440 stripes of mkfs and the set-up (0.3-1 s of each state under
# TCG). Writing the journal mode (the same mode) suspends the array, which writes the
# log back and checkpoints it, as a while of running would have: the run's stripes
# are still journaled and replayed as before.
md_settle() {
	[ -n "$journal" ] || return 0
	echo write-through >/sys/block/md0/md/journal_mode ||
		die "md: could not checkpoint the write journal (journal_mode)"
}

# md_report: the array as md sees it after the run, for the record's console. With
# bo.md_fail=1 (vmrecord --md-fail) a member failed during the run; md marks it faulty
# only at its next superblock write (a failed read is rebuilt from the others and a
# failed flush is not counted), which comes when the array goes clean, ~200 ms after the
# last write: wait up to 5 s for that, so the console shows it ([U_UU]).
md_report() {
	i=0
	while [ "$BO_md_fail" = 1 ] && [ "$(cat /sys/block/md0/md/degraded 2>/dev/null)" = 0 ] &&
		[ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -A1 '^md0 :' /proc/mdstat >/dev/console
}

# ---- judge mode: a state's members as linear maps of its snapshot ----------------
# bo.members=S:L,... (512-byte sectors, from the store's `members` file): member I of
# the state is sectors [S, S+L) of the snapshot. md_judge_up NAME SNAPSHOT assembles
# /dev/md0 from the members that carry an md superblock, as a user would: without
# --run first; md refuses a dirty degraded array, and then, as the user's next step,
# --run --force. What happened is an observation line (docs/architecture.md): "md
# started", or "md refused MESSAGE" then "md forced EXIT". Sets MDDEV=/dev/md0; returns
# non-zero (with /tmp/md.err) when it cannot assemble.
# A state costs what its execs cost (each mdadm or dmsetup, a dynamically linked
# program, ~30-50 ms under TCG): the members are mapped by one `bo-observe linear`
# (the static bo-observe's dm ioctls, as the snapshot is) and removed by one
# `bo-observe unsnap`, which members hold a superblock is read once per boot from the
# base, and the array is stopped through sysfs (docs/md.md, "What a state costs").
# With DM=dmsetup (guest-init: /etc/bo-dm), or once the ioctls failed, one `dmsetup create
# --concise` and one `dmsetup remove` do it, as before; /etc/bo-dm holding md-dmsetup
# chooses that for the members alone (docs/md.md measures the two in one run so).

# md_judge_load: md's modules, and MD_SB: "I:S:L ..." for each member whose base holds
# an md superblock (metadata 1.2: magic a92b4efc, little-endian, 4 KiB into the member).
# A member without one there (missing from the start) is never written by the run, so
# no state gives it one.
md_judge_load() {
	for m in $(cat /lib/modules/load-md); do
		insmod "/lib/modules/$m" 2>/dev/null
	done
	mkdir -p /run/mdadm
	MD_SB= i=0
	for ml in $(echo "$BO_members" | tr , ' '); do
		magic=$(hexdump -s $(((${ml%:*} + 8) * 512)) -n 4 -e '1/4 "%08x"' /dev/vda 2>/dev/null)
		# bo.md_drop=K: member K did not come back after the cut (vmtest --md-drop)
		[ "$magic" = a92b4efc ] && [ "$i" != "$BO_md_drop" ] && MD_SB="$MD_SB $i:$ml"
		i=$((i + 1))
	done
	[ -n "$MD_SB" ] || die "bo.members=$BO_members: no member of the base holds an md superblock"
}

# md_stop: mdadm --stop's effect without its exec (a stopped array frees its members)
md_stop() {
	[ -e /sys/block/md0/md/array_state ] && echo clear >/sys/block/md0/md/array_state
	return 0
}

# md_assemble NAME DEV...: as a user would, then forced when md refuses
md_assemble() {
	shift
	/sbin/mdadm --assemble $MDDEV "$@" >/tmp/md.err 2>&1 && { obs "md started"; return 0; }
	if grep -q "has no superblock" /tmp/md.err; then
		# this state lost a member's superblock: leave it out, as --examine would say
		devs=
		for d in "$@"; do
			/sbin/mdadm --examine "$d" >/dev/null 2>&1 && devs="$devs $d"
		done
		md_stop
		set -- $devs
		/sbin/mdadm --assemble $MDDEV "$@" >/tmp/md.err 2>&1 && { obs "md started"; return 0; }
	fi
	obs "md refused $(tail -n 1 /tmp/md.err)"
	md_stop
	/sbin/mdadm --assemble --run --force $MDDEV "$@" >/tmp/md.err 2>&1
	r=$?
	obs "md forced $r"
	return $r
}

md_judge_up() {
	# MD_DM: how the members are mapped, chosen at the first state (guest-init sets DM
	# after it sources this file)
	if [ -z "$MD_DM" ]; then
		MD_DM=$DM
		[ "$(cat /etc/bo-dm 2>/dev/null)" = md-dmsetup ] && MD_DM=dmsetup
	fi
	spec= devs= maps=
	for e in $MD_SB; do
		sl=${e#*:}
		spec="$spec${spec:+;}$1m${e%%:*},,,,0 ${sl#*:} linear $2 ${sl%:*}"
		maps="$maps $1m${e%%:*} ${sl#*:} $2 ${sl%:*}"
		devs="$devs /dev/mapper/$1m${e%%:*}"
	done
	if [ "$MD_DM" = bo-observe ] && ! /bin/bo-observe linear $maps 2>/tmp/dm.err; then
		echo "guest-md: $1: the dm ioctls failed ($(tail -n 1 /tmp/dm.err)); using dmsetup from now on" >/dev/console
		MD_DM=dmsetup
	fi
	if [ "$MD_DM" != bo-observe ]; then
		dmsetup create --noudevsync --concise "$spec" >/tmp/dm.err 2>&1 ||
			die "$1: dmsetup create of the members failed: $(tail -n 1 /tmp/dm.err)"
	fi
	MDDEV=/dev/md0
	md_assemble "$1" $devs
}
# md_judge_down NAME: stops the array and removes the members' maps
md_judge_down() {
	md_stop
	names=
	for e in $MD_SB; do
		names="$names $1m${e%%:*}"
	done
	if [ "$MD_DM" = bo-observe ]; then
		/bin/bo-observe unsnap $names 2>/tmp/dm.err ||
			die "$1: removing the members' maps failed: $(tail -n 1 /tmp/dm.err)"
		return 0
	fi
	dmsetup remove --noudevsync $names >/tmp/dm.err 2>&1 ||
		die "$1: dmsetup remove of the members failed: $(tail -n 1 /tmp/dm.err)"
}
