# SPDX-License-Identifier: GPL-2.0-or-later
# guest-fs.sh — sourced by guest-init: how the guest makes, mounts and checks each
# filesystem it can test (BO_fs: ext4, ext3, xfs, btrfs; the mount options in BO_mopt).
# One function per action, so the work, check and judge modes never name a filesystem.
# CHUNK (the digest chunk) is the filesystem block: 4096 for every one of them.

# fs_modules: loads BO_fs's kernel modules (lib/modules/load-FS, made by
# scripts/vm-build) the first time they are needed: loading btrfs's for every boot
# would cost each guest its dependencies' start-up benchmarks (docs/vmtest.md).
fs_modules() {
	case "$BO_fs" in
	ext4 | ext3) return 0 ;; # built into the cloud kernel
	xfs | btrfs) ;;
	*) echo "guest-fs: no filesystem '$BO_fs'" >/dev/console && return 1 ;;
	esac
	grep -qw "$BO_fs" /proc/filesystems && return 0
	for m in $(cat "/lib/modules/load-$BO_fs"); do
		insmod "/lib/modules/$m" 2>/dev/null # one already loaded says so: harmless
	done
	grep -qw "$BO_fs" /proc/filesystems ||
		{ echo "guest-fs: the $BO_fs module did not load" >/dev/console && return 1; }
}

# fs_mkfs DEV: a fresh filesystem with 4 KiB blocks, no discard of the device and no
# lazy background work (so nothing but the workload writes once it starts).
#  xfs: mkfs.xfs as a user runs it, so under 300 MiB it refuses (xfsprogs 6.1; its
#   TEST_DIR/TEST_DEV/QA_CHECK_FS escape is for fstests, and formats a configuration
#   its authors do not support).
#  btrfs: mixed data+metadata block groups under 1 GiB, as mkfs.btrfs(8) recommends
#   (without them it needs 109 MiB at least); node size = sector size = 4096 there.
fs_mkfs() {
	fs_modules || return 1
	case "$BO_fs" in
	ext4 | ext3)
		/sbin/mke2fs -q -F -t "$BO_fs" -b 4096 \
			-E lazy_itable_init=0,lazy_journal_init=0 "$1" >/dev/console 2>&1
		;;
	xfs)
		if [ "$(blockdev --getsize64 "$1")" -lt 314572800 ]; then
			echo "guest-fs: xfs needs a device of 300 MiB at least (mkfs.xfs refuses" \
				"smaller ones): give the stack a larger size" >/dev/console
			return 1
		fi
		/sbin/mkfs.xfs -q -f -K -b size=4096 "$1" >/dev/console 2>&1
		;;
	btrfs)
		set -- "$1"
		[ "$(blockdev --getsize64 "$1")" -lt 1073741824 ] && set -- "$1" --mixed
		/sbin/mkfs.btrfs -q -f -K -s 4096 "$@" >/dev/console 2>&1
		;;
	esac
}

# fs_mount DEV DIR: mount with the options under test (ext3 is served by the ext4
# driver); the filesystem's own recovery (journal/log replay) runs here.
fs_mount() {
	fs_modules || return 1
	mount -t "$(fs_type)" -o "$BO_mopt" "$1" "$2"
}
# fs_type: the kernel's name of BO_fs's driver (bo-observe look mounts with it)
fs_type() {
	case "$BO_fs" in
	ext4 | ext3) echo ext4 ;;
	*) echo "$BO_fs" ;;
	esac
}

# fs_checker: the name of BO_fs's checker, as the observation's `checker` line gives
# it to the judge (which knows what each one prints on a clean run).
fs_checker() {
	case "$BO_fs" in
	ext4 | ext3) echo e2fsck ;;
	xfs) echo xfs_repair ;;
	btrfs) echo btrfs-check ;;
	*) echo none ;;
	esac
}

# fs_check DEV LOG: the filesystem's own checker, read-only; its output into LOG, its
# exit status returned (xfs_repair -n and btrfs check: 1 when they find a problem).
fs_check() {
	case "$BO_fs" in
	ext4 | ext3) /sbin/e2fsck -fn "$1" >"$2" 2>&1 ;;
	xfs) /sbin/xfs_repair -n "$1" >"$2" 2>&1 ;;
	btrfs) /sbin/btrfs check --readonly "$1" >"$2" 2>&1 ;;
	*) echo "guest-fs: no filesystem '$BO_fs'" >"$2" && return 8 ;;
	esac
}
