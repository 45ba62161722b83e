#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# raid_hole.t — `blackout raid hole` and `blackout raid layout` from the command line:
# the write hole on a degraded RAID5, closed by the journal; md's layout table.
set -u
. "$(dirname "$0")/../test-lib.sh"
t() { ok "$@"; } # here t takes a status first, as ok does

out=$("$B" raid hole 'raid5(chunk=4k,missing=1) > [mem(size=64k)] x4' --lba 3)
t $? "raid hole runs on a degraded raid5"
echo "$out" | grep -q 'untouched sectors wrong: *[1-9][0-9]* outcome.*the write hole'
t $? "degraded raid5 without mitigation shows the write hole"
echo "$out" | grep -q 'every outcome'
t $? "every outcome was examined"

out=$("$B" raid hole 'raid5(chunk=4k,missing=1,journal=1) > [mem(size=64k)] x5' --lba 3)
echo "$out" | grep -q 'untouched sectors wrong: *0 outcome'
t $? "the journal closes the hole"

out=$("$B" raid layout 5 4 left-symmetric 2)
[ "$(echo "$out" | sed -n 2p | tr -s ' ')" = "stripe 1 4 5 P 3" ]
t $? "layout prints md's left-symmetric second stripe"

"$B" raid hole 'raid5 > [mem(size=64k)] x3' >/dev/null 2>&1
[ $? = 1 ]
t $? "a stack that cannot open fails with status 1"
"$B" raid hole >/dev/null 2>&1
[ $? = 2 ]
t $? "a missing spec is a usage error (status 2)"
"$B" raid --help | grep -q 'usage: blackout raid hole'
t $? "--help describes the command"

done_testing
