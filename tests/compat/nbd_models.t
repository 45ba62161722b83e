#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_models.t — the control socket's model controls through the plugin: fault rules
# armed and disarmed at run time (dev_fault_arm), a RAID member failed while a client
# keeps reading (raid_fail_member), flash statistics (NAND erases) in `stats`.
. "$(dirname "$0")/nbd_lib.sh"

start_nbd "fault > mem(size=4M)"
ok $? "serving fault > mem"
is "$(ctl_last 'arm write-error lba=8-15 errno=EIO')" "ok arm 0" "arm a write-error rule (blanks in the rule)"
is "$(dev_stat fault rules)" 1 "stats: one rule armed"
qio "write 4096 512" >/dev/null 2>&1
ok $((! $?)) "a write to the armed range fails"
qio "write -P 0x61 0 512" "read -P 0x61 0 512" >/dev/null
ok $? "a write outside it succeeds"
is "$(dev_stat fault faults_fired)" 1 "stats: the rule fired once"
got=$(ctl_last 'arm bogus rule')
case "$got" in "error: arm: "*"unknown kind"*) ok 0 "a bad rule is refused: ${got#error: }" ;; *) ok 1 "bad rule (got '$got')" ;; esac
is "$(ctl_last 'disarm 0')" "ok disarm 0" "disarm by id"
is "$(ctl_last 'disarm 0')" "error: disarm: no rule 0" "disarm of an unknown id"
qio "write -P 0x62 4096 512" "read -P 0x62 4096 512" >/dev/null
ok $? "after disarm the range is writable"
ctl 'arm read-error lba=0-7' 'arm read-error lba=100-107' >/dev/null
is "$(ctl_last disarm)" "ok disarm 2 rules" "disarm without an id: every rule armed here"
qio "read -P 0x61 0 512" >/dev/null
ok $? "reads work again"
stop_nbd

start_nbd "raid5(chunk=64k) > [mem(size=4M)] x4"
ok $? "serving raid5 over 4 members"
qio "write -P 0x71 0 1048576" flush >/dev/null
ok $? "write 1 MiB across the stripes"
is "$(ctl_last 'fail 1')" "ok fail raid5 1" "fail member 1"
qio "read -P 0x71 0 1048576" >/dev/null
ok $? "degraded: the data reads back through parity"
got=$(ctl_last 'fail 9')
case "$got" in "error: fail 9: "*) ok 0 "no member 9: ${got#error: }" ;; *) ok 1 "fail 9 (got '$got')" ;; esac
is "$(ctl_last 'arm read-error lba=0')" "error: arm: unsupported by this stack (no fault device in it)" \
	"arm on a stack without a fault device"
stop_nbd

start_nbd "mem(size=1M)"
is "$(ctl_last 'fail 1')" "error: fail: unsupported by this stack (no RAID device in it)" \
	"fail on a stack without RAID"
stop_nbd

start_nbd "flash(ftl=cheap,eb=128k,page=4k,size=8M)"
ok $? "serving a cheap flash card"
qio "write -P 0x33 0 65536" flush >/dev/null
ok $? "write to the flash"
e=$(dev_stat flash nand_erases)
[ -n "$e" ] && [ "$e" -ge 1 ]
ok $? "stats: NAND erases counted (nand_erases=$e)"
stop_nbd

done_testing
