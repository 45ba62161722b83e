#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck_damage_500.t — the long run of issue 37's acceptance: `corrupt --what inode` over
# six images blackout makes (ext2/ext3, 1/2/4 KiB blocks, 8-64 MiB, one metadata_csum)
# and the four mke2fs-made images of fsck_agree.t (htree, revision 0, 4 KiB
# metadata_csum), x 28 seeds x 1-3 changes (840 damaged images). For each, e2fsck -fn's
# problem lines before and after `blackout fsck -y`: none made worse, every remaining
# problem listed by -y. 20-75 s; `make check-long` runs it, not `make check`.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
. "$BLACKOUT_SRC/tests/compat/fsck_damage_gen.sh"
. "$BLACKOUT_SRC/tests/compat/fsck_mkimg.sh"
W=$SCRATCH
[ -d /dev/shm ] && W=$(mktemp -d /dev/shm/blackout-long.XXXXXX) && at_exit "rm -rf '$W'"

inode_damage_bases "$W"
ok $? "six base images made by blackout mkfs/put/mkdir/symlink/ln"
fsck_mkimg "$W/m3_1k.img" ext3 1024 && fsck_mkimg "$W/m3_4kc.img" ext3 4096 -O metadata_csum &&
	fsck_mkimg "$W/m2_4k.img" ext2 4096 && fsck_mkimg "$W/m2_r0.img" ext2 1024 -r 0 -O none
ok $? "four base images made by mke2fs -d (fsck_mkimg.sh)"
inode_damage_sweep "$W" "$(seq 1 "${FSCK_LONG_SEEDS:-28}")" "$W"/b*.img "$W"/m*.img >"$W/res"
inode_damage_judge "$W/res" 500
done_testing
