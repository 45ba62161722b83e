#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fs_damage_full.t — tests/compat/fs_damage.t over all eight seeds of every corrupt kind
# (about 6,400 command runs on 336 damaged images); make check runs three seeds, this
# runs the rest too. make check-long runs it.
FS_DAMAGE_SEEDS="1 2 3 4 5 6 7 8" exec sh "$BLACKOUT_SRC/tests/compat/fs_damage.t"
