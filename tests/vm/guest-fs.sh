# guest-fs.sh — sourced by guest-init: how the guest makes, mounts and checks each
# filesystem it can test (BO_fs: ext4, ext3; the mount options in BO_mopt). One
# function per action, so the work, check and judge modes never name a filesystem.
# CHUNK (the digest chunk) is the filesystem block: 4096.

# fs_mkfs DEV: a fresh filesystem with 4 KiB blocks and no lazy background work (so
# nothing but the workload writes once it starts).
fs_mkfs() {
	case "$BO_fs" in
	ext4 | ext3)
		/sbin/mke2fs -q -F -t "$BO_fs" -b 4096 \
			-E lazy_itable_init=0,lazy_journal_init=0 "$1" >/dev/console 2>&1
		;;
	*) echo "guest-fs: no filesystem '$BO_fs'" >/dev/console && return 1 ;;
	esac
}

# fs_mount DEV DIR: mount with the options under test (ext3 is served by the ext4
# driver); the filesystem's own recovery (journal replay) runs here.
fs_mount() {
	case "$BO_fs" in
	ext4 | ext3) mount -t ext4 -o "$BO_mopt" "$1" "$2" ;;
	*) echo "guest-fs: no filesystem '$BO_fs'" >&2 && return 1 ;;
	esac
}

# fs_check DEV LOG: the filesystem's own checker, read-only; its output into LOG, its
# exit status returned.
fs_check() {
	case "$BO_fs" in
	ext4 | ext3) /sbin/e2fsck -fn "$1" >"$2" 2>&1 ;;
	*) echo "guest-fs: no filesystem '$BO_fs'" >"$2" && return 8 ;;
	esac
}
