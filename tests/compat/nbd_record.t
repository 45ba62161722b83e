#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_record.t — the plugin's recording mode (record=FILE, docs/nbd.md) driven by
# qemu-io: every request the stack is sent (write, FUA, flush, trim, write-zeroes) and
# every mark written to the `marker` export lands in one log in arrival order;
# `record save` writes it atomically, `blackout log dump` reads it back; bad marks,
# unknown exports and a log past its cap are refused with a message.
. "$(dirname "$0")/nbd_lib.sh"

LOG=$T/io.log
MARK_URI="nbd+unix:///marker?socket=$NBD_SOCK"
# mark FILE: one write of FILE's bytes to the marker export
mark() {
	timeout 60 qemu-io -t writeback -f raw -c "write -s $1 0 $(wc -c <"$1")" "$MARK_URI" \
		</dev/null >/dev/null 2>"$T/mark.err"
}
# dump: the log as "OP DETAILS" lines (log dump without its index column)
dump() { "$B" log dump "$LOG" | sed -n 's/^ *[0-9][0-9]* \(.*[^ ]\) *$/\1/p'; }

start_nbd "mem(size=4M)" record="$LOG"
ok $? "nbdkit serves with record="

info=$(timeout 20 nbdinfo --list --json "$NBD_URI" </dev/null)
is "$(echo "$info" | jq -r '[.exports[]["export-name"]] | sort | join(",")')" ",marker" \
	"the exports listed: the stack (\"\") and marker"

qio "write -P 0xaa 0 4096" "write -f -P 0xbb 4096 4096" "flush" "discard 8192 4096" \
	"write -z 12288 4096" "write -z -f 16384 1024" "write -P 0 20480 4096" >/dev/null
ok $? "writes, a FUA write, a flush, a trim and write-zeroes (one with FUA)"
printf 'step 0\n' >"$T/m0"
mark "$T/m0"
ok $? "a mark ended by a newline"
{ printf 'fs ext4,defaults'; head -c 4080 /dev/zero; } >"$T/m1"
mark "$T/m1"
ok $? "a mark padded with NULs to a 4096-byte block (as the guest writes it)"
qio "write -P 0xcc 24576 512" >/dev/null
ok $? "a write after the marks"
{ head -c 255 /dev/zero | tr '\0' A; printf '\n'; } >"$T/m255"
mark "$T/m255"
ok $? "a mark of 255 bytes"
qio_marker() { timeout 60 qemu-io -t writeback -f raw "$@" "$MARK_URI" </dev/null; }
qio_marker -c "read -P 0x41 0 255" -c "read -P 0x0a 255 1" >/dev/null
ok $? "the marker export reads back what was written"

# refused marks: the log must not change
{ head -c 256 /dev/zero | tr '\0' B; printf '\n'; } >"$T/m256"
mark "$T/m256"
ok $((! $?)) "a mark of 256 bytes is refused"
grep -q 'longer than 255 bytes' "$T/nbdkit.log"
ok $? "... with a message naming the limit"
head -c 4096 /dev/zero >"$T/mz"
mark "$T/mz"
ok $((! $?)) "a write starting with a NUL (no mark) is refused"
grep -q 'holds no mark' "$T/nbdkit.log"
ok $? "... with a message"
qio_marker -c "write -P 0x43 0 4096" >/dev/null 2>&1
ok $((! $?)) "4096 bytes without a NUL or newline are refused"
qio_marker -c "read -P 0x41 0 255" >/dev/null
ok $? "refused marks leave the marker export's contents alone"
minfo=$(timeout 20 nbdinfo --json "$MARK_URI" </dev/null)
is "$(echo "$minfo" | jq -r '.exports[0] | "\(.["export-size"]) \(.can_trim)"')" \
	"1048576 false" "the marker export: 1 MiB, no trim"
qio_marker -c "write -z 0 4096" >/dev/null 2>&1
ok $((! $?)) "write-zeroes to it (zeros: no mark) is refused"
timeout 20 qemu-io -t writeback -f raw -c "read 0 512" "nbd+unix:///other?socket=$NBD_SOCK" \
	</dev/null >/dev/null 2>&1
ok $((! $?)) "an unknown export name is refused"
grep -q "no export 'other'" "$T/nbdkit.log"
ok $? "... naming it"

is "$(ctl_last 'record save')" "ok 14 records" "record save: ok N records"
t "the log file is there and no FILE.tmp is left" '[ -s "$LOG" ] && [ ! -e "$LOG.tmp" ]'
is "$(stat nbd.record.records)" 14 "stats: nbd.record.records"
is "$(stat nbd.record.refused)" 0 "stats: nothing refused"

dump >"$T/dump"
ok $? "blackout log dump reads the saved log"
ops=$(awk '{ print $1 }' "$T/dump" | paste -sd' ')
is "$ops" "mark write write flush discard write write write flush mark mark write flush mark" \
	"the records in arrival order (qemu-io flushes as it closes; refused marks are not there)"
is "$(sed -n 1p "$T/dump")" "mark    stack mem(size=4M)" "first record: the stack mark"
t "write at sector 0, 8 sectors, no FUA" 'sed -n 2p "$T/dump" | grep -q "^write   lba=0 count=8 data="'
t "the FUA write keeps FUA" 'sed -n 3p "$T/dump" | grep -q "^write   lba=8 count=8 fua data="'
is "$(sed -n 5p "$T/dump")" "discard lba=16 count=8" "trim: a discard of its sectors"
z1=$(sed -n 6p "$T/dump")
z0=$(sed -n 8p "$T/dump")
t "write-zeroes: a write of zeros (same data as writing zeros)" \
	'[ "${z1%% data=*}" = "write   lba=24 count=8" ] && [ "${z1##* data=}" = "${z0##* data=}" ]'
t "write-zeroes with FUA: a FUA write of zeros" \
	'sed -n 7p "$T/dump" | grep -q "^write   lba=32 count=2 fua data="'
is "$(sed -n 10p "$T/dump")" "mark    step 0" "the newline-ended mark"
is "$(sed -n 11p "$T/dump")" "mark    fs ext4,defaults" "the NUL-padded mark"
t "the write after the marks comes after them" 'sed -n 12p "$T/dump" | grep -q "^write   lba=48 count=1 data="'
t "the 255-byte mark is whole" '[ "$(sed -n 14p "$T/dump" | grep -o "AA*" | tr -d "\n" | wc -c)" = 255 ]'
qio "write -P 0xdd 28672 512" >/dev/null

# saved again at unload, with what came after the save
stop_nbd
"$B" log dump "$LOG" >"$T/dump2"
ok $? "the log saved at unload reloads"
t "it holds what came after the save: a write and its flush" \
	'[ "$(grep -c . "$T/dump2")" = 17 ] && tail -n 2 "$T/dump2" | head -n 1 | grep -q "write   lba=56 count=1"'

# the cap: a write the log has no room for never reaches the device
start_nbd "mem(size=4M)" record="$LOG" record-max=10k
ok $? "record-max=10k"
qio "write -P 0x11 0 4096" "write -P 0x22 4096 4096" "write -P 0x33 8192 4096" \
	>/dev/null 2>"$T/cap.err"
ok $((! $?)) "the write past the cap fails"
t "the message says the log is full" 'grep -q "the log is full" "$T/nbdkit.log"'
qio "read -P 0x11 0 4096" "read -P 0x22 4096 4096" "read -P 0 8192 4096" >/dev/null
ok $? "the refused write did not reach the device; the others did"
r=$(ctl_last 'record save')
t "record save says the log is incomplete" 'echo "$r" | grep -q "^error: record save: saved [0-9]* records.*incomplete.*cap of 10240 bytes"'
"$B" log dump "$LOG" >/dev/null
ok $? "... and the partial log still loads"
stop_nbd

# refused at load
start_nbd "mem(size=4M)" record="$T/no/such/dir/io.log" 2>/dev/null
ok $((! $?)) "record= in a missing directory stops nbdkit at load"
grep -q 'cannot create' "$T/nbdkit.log"
ok $? "... naming the file"
start_nbd "mem(size=4M)" record-max=1M 2>/dev/null
ok $((! $?)) "record-max= without record= is refused"
long="mem(size=$(printf '0%.0s' $(seq 1 240))4M)" # 251 bytes
start_nbd "$long" record="$LOG" 2>/dev/null
ok $((! $?)) "a stack spec over 249 bytes cannot be recorded"
grep -q 'at most 249' "$T/nbdkit.log"
ok $? "... and the message says so"
start_nbd "mem(size=4M)"
ctl_last 'record save' | grep -q '^error: record save: not recording'
ok $? "record save without record= is an error"
timeout 20 qemu-io -t writeback -f raw -c "read 0 512" "$MARK_URI" </dev/null >/dev/null 2>&1
ok $((! $?)) "no marker export without record="
stop_nbd

done_testing
