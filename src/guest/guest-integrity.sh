# SPDX-License-Identifier: GPL-2.0-or-later
# guest-integrity.sh — dm-integrity in the vmtest guest (sourced by guest-init when the
# kernel command line has bo.integrity=1, docs/integrity.md): the work mode formats the
# exported disk with integritysetup and puts the filesystem on the opened mapping; the
# judge mode opens each state's snapshot the same way before mounting, as a user would.
# Standalone dm-integrity, CRC32C tags, dm-integrity's default journal (so a cut leaves a
# write's data and its tag both old or both new; docs/integrity.md says why not the
# bitmap mode). Not a general-purpose script: busybox sh, no udev.

INTEG_OPTS="--integrity crc32c --batch-mode"

integ_load() {
	for m in $(cat /lib/modules/load-integrity); do
		insmod "/lib/modules/$m" 2>/dev/null
	done
	export DM_DISABLE_UDEV=1 # no udev here: libdevmapper makes the /dev/mapper nodes
	mkdir -p /dev/mapper /run/cryptsetup
}

# integ_format DEV: formats DEV (wiping it: a sector never written has no valid tag and
# would read back as an error) and opens it; sets D=/dev/mapper/bo-int. Says on the
# console what the format and its wipe cost (docs/integrity.md). Dies naming what failed.
integ_format() {
	integ_load
	ms i0
	/sbin/integritysetup format "$1" $INTEG_OPTS >/tmp/integ.err 2>&1 ||
		die "integritysetup format $1 failed: $(tail -n 1 /tmp/integ.err)"
	ms i1
	/sbin/integritysetup open "$1" bo-int $INTEG_OPTS >/tmp/integ.err 2>&1 ||
		die "integritysetup open $1 failed: $(tail -n 1 /tmp/integ.err)"
	D=/dev/mapper/bo-int
	[ -b $D ] || die "integritysetup made no $D"
	echo "integrity: format and wipe of $1 took $((i1 - i0)) ms;" \
		"$(blockdev --getsize64 $D) of $(blockdev --getsize64 "$1") bytes usable" >/dev/console
}

# integ_judge_up NAME DEV: opens DEV (a state's snapshot) as /dev/mapper/NAMEi; dm-integrity
# replays its own journal here, into the snapshot's RAM disk. Returns non-zero (reason in
# /tmp/integ.err) when it cannot open: an outcome of the state (detected), not a harness
# error.
integ_judge_up() {
	/sbin/integritysetup open "$2" "$1i" $INTEG_OPTS >/tmp/integ.err 2>&1 && [ -b "/dev/mapper/$1i" ]
}
# integ_judge_down NAME: closes the mapping if it was opened
integ_judge_down() {
	[ -b "/dev/mapper/$1i" ] || return 0
	/sbin/integritysetup close "$1i" >/tmp/integ.err 2>&1 ||
		die "$1: integritysetup close failed: $(tail -n 1 /tmp/integ.err)"
}
