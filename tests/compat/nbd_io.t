#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_io.t — the blackout nbdkit plugin over a plain memory stack, driven by real
# NBD clients (qemu-io, nbdinfo): data path, FUA/flush/trim/zero accounting, unaligned
# read-modify-write, power cut by operation count with the in-flight write's outcome.
. "$(dirname "$0")/nbd_lib.sh"

start_nbd "mem(size=4M)"
ok $? "nbdkit serves the plugin on a Unix socket"

info=$(timeout 20 nbdinfo --json "$NBD_URI" </dev/null)
ok $? "nbdinfo connects"
for f in can_fua can_flush can_trim can_zero; do
	is "$(echo "$info" | jq -r ".exports[0].$f")" true "nbdinfo: $f"
done
is "$(echo "$info" | jq -r '.exports[0]["export-size"]')" 4194304 "export size is the stack's"
is "$(echo "$info" | jq -r '.exports[0].is_read_only')" false "writable"

qio "write -P 0xaa 0 65536" >/dev/null
ok $? "aligned write"
qio "read -P 0xaa 0 65536" >/dev/null
ok $? "a second connection reads it back (one device for every connection)"

w0=$(stat nbd.writes)
r0=$(stat nbd.rmw)
qio "write -P 0xbb 100 1000" "write -P 0xcc 4000 200" >/dev/null
ok $? "unaligned writes"
qio "read -P 0xaa 0 100" "read -P 0xbb 100 1000" "read -P 0xaa 1100 2900" \
	"read -P 0xcc 4000 200" "read -P 0xaa 4200 61336" >/dev/null
ok $? "unaligned writes change exactly their bytes (read-modify-write keeps neighbours)"
is "$(stat nbd.writes)" $((w0 + 2)) "two write requests counted"
is "$(stat nbd.rmw)" $((r0 + 2)) "both were read-modify-write"

f0=$(stat nbd.fua_writes)
fl0=$(stat nbd.flushes)
qio "write -f -P 0x11 8192 4096" >/dev/null
ok $? "FUA write"
is "$(stat nbd.fua_writes)" $((f0 + 1)) "FUA reached the plugin as FUA"
# qemu-io flushes once when it closes the image; the FUA write itself adds none.
is "$(stat nbd.flushes)" $((fl0 + 1)) "FUA was not turned into a flush"

fl0=$(stat nbd.flushes)
qio "flush" >/dev/null
ok $? "flush"
is "$(stat nbd.flushes)" $((fl0 + 2)) "flush counted (plus qemu-io's own on close)"

z0=$(stat nbd.zeros)
qio "write -z 16384 8192" "read -P 0 16384 8192" "read -P 0xaa 24576 4096" >/dev/null
ok $? "write zeroes: the range reads as zero, its neighbour is untouched"
is "$(stat nbd.zeros)" $((z0 + 1)) "zero request counted"

t0=$(stat nbd.trims)
qio "discard 32768 16384" >/dev/null
ok $? "discard"
is "$(stat nbd.trims)" $((t0 + 1)) "trim reached the plugin"

qio "read 4194304 512" >/dev/null 2>&1
ok $((! $?)) "a read past the end fails"

# A power cut now: the memory medium has no volatile state, so everything survives.
is "$(ctl_last cut)" "ok cut given=zero inflight=0 decisions=0 outcome=list:" "cut"
qio "read 0 512" >/dev/null 2>&1
ok $((! $?)) "while the power is off, reads fail"
qio "write 0 512" >/dev/null 2>&1
ok $((! $?)) "while the power is off, writes fail"
is "$(stat nbd.powered)" 0 "stats: power off"
is "$(dev_stat mem powered_off)" 1 "stats: the medium is powered off"
is "$(ctl_last replug)" "ok replug" "replug"
qio "read -P 0xbb 100 1000" "read -P 0x11 8192 4096" >/dev/null
ok $? "after replug the medium's contents are back"

# cut-at: the power fails while the 2nd next write is in flight; the outcome list
# says 3 of its 8 sectors landed (media persist an in-flight write in order).
qio "write -P 0x22 65536 4096" >/dev/null
is "$(ctl_last 'cut-at 2 list:3')" "ok cut-at 2 list" "cut-at armed"
is "$(stat nbd.cut_armed)" 2 "stats: cut armed, 2 writes to go"
qio "write -P 0x33 131072 512" >/dev/null
ok $? "the 1st write completes"
qio "write -P 0x44 65536 4096" >/dev/null 2>&1
ok $((! $?)) "the 2nd write fails: the power went while it was in flight"
is "$(stat nbd.powered)" 0 "the power is off"
ctl stats | grep -q '^nbd.last_cut given=list(1) inflight=1 decisions=1 outcome=list:3$'
ok $? "the cut recorded the in-flight write and the decision taken"
ctl_last replug >/dev/null
qio "read -P 0x44 65536 1536" "read -P 0x22 67072 2560" "read -P 0x33 131072 512" >/dev/null
ok $? "exactly 3 sectors of the in-flight write landed; the completed write is there"

nbd_alive
ok $? "nbdkit still running"
grep -q -i 'error\|assert' "$T/nbdkit.log" && sed 's/^/# nbdkit: /' "$T/nbdkit.log"
stop_nbd

# A 4096-byte-sector stack: sub-sector writes are read-modify-written on 4 KiB sectors.
start_nbd "mem(size=1M,sector=4096)"
ok $? "serving a 4096-byte-sector stack"
qio "write -P 0x77 0 16384" "write -P 0x88 5000 100" "write -P 0x99 8190 8" >/dev/null
ok $? "writes of 100 and 8 bytes inside and across 4 KiB sectors"
qio "read -P 0x77 0 5000" "read -P 0x88 5000 100" "read -P 0x77 5100 3090" \
	"read -P 0x99 8190 8" "read -P 0x77 8198 8186" >/dev/null
ok $? "only those bytes changed"
is "$(stat nbd.sector_size)" 4096 "stats: sector size 4096"
is "$(stat nbd.rmw)" 2 "both were read-modify-write"
stop_nbd

# Plugin parameters are checked.
start_nbd "nosuchmodel(x=1)" 2>/dev/null
ok $((! $?)) "a bad stack spec stops nbdkit with an error"
start_nbd "mem(size=1M)" size=3000 2>/dev/null
ok $((! $?)) "size= not a multiple of the sector size is refused"
start_nbd "mem(size=1M)" size=64k
ok $? "size= exports a prefix"
is "$(timeout 20 nbdinfo --size "$NBD_URI" </dev/null)" 65536 "nbdinfo sees size=64k"
stop_nbd

done_testing
