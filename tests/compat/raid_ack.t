#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# raid_ack.t — through the plugin, a RAID5 with more members failed than it survives
# (all of them, then two) refuses a full-stripe write and a flush with an error, as
# the kernel's NBD client or qemu would see it; with one member failed both succeed
# and the data reads back through parity.
. "$(dirname "$0")/nbd_lib.sh"

SPEC="raid5(chunk=64k) > [mem(size=4M)] x4"
STRIPE=196608 # three data chunks of 64k: one full stripe

start_nbd "$SPEC"
ok $? "serving $SPEC"
is "$(ctl_last 'fail 1')" "ok fail raid5 1" "fail member 1 (the level survives one)"
qio "write -P 0x5a 0 $STRIPE" >/dev/null 2>&1
ok $? "degraded: a full-stripe write is acknowledged"
qio flush >/dev/null 2>&1
ok $? "degraded: flush is acknowledged"
qio "read -P 0x5a 0 $STRIPE" >/dev/null 2>&1
ok $? "degraded: the stripe reads back"
is "$(ctl_last 'fail 3')" "ok fail raid5 3" "fail member 3 too: two of four lost"
out=$(qio "write -P 0x6b 0 $STRIPE" 2>&1)
ok $((! $?)) "two lost: the full-stripe write fails"
case "$out" in *"Input/output error"*) ok 0 "and the client sees EIO" ;; *)
	ok 1 "the client sees EIO"
	diag "qemu-io: $out" ;;
esac
qio flush >/dev/null 2>&1
ok $((! $?)) "two lost: flush fails"
grep -q "members failed or missing, RAID5 survives 1" "$T/nbdkit.log"
ok $? "the plugin's log says why"
stop_nbd

start_nbd "$SPEC"
ok $? "serving $SPEC again"
for i in 0 1 2 3; do ctl_last "fail $i" >/dev/null; done
is "$(ctl_last 'fail 3')" "ok fail raid5 3" "every member failed"
qio "write -P 0x7c 0 $STRIPE" flush >/dev/null 2>&1
ok $((! $?)) "all lost: full-stripe write + flush in one connection fail"
qio flush >/dev/null 2>&1
ok $((! $?)) "all lost: a flush on its own fails"
qio "write -P 0x7c 65536 512" >/dev/null 2>&1
ok $((! $?)) "all lost: a one-sector write fails"
stop_nbd

done_testing
