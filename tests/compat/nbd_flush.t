#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_flush.t — durability through the plugin as the stack promises it: over a write
# cache a flushed or FUA write survives a power cut and an unflushed one survives only
# if the cut's outcome says so; a lying cache (flush=ignore, fua=ignore) loses them.
# qemu-io's `abort` drops the connection without the flush it would send on close.
. "$(dirname "$0")/nbd_lib.sh"
ulimit -c 0

# write_then_drop CMD...: qemu-io commands, then an abort (no flush on close).
write_then_drop() { qio "$@" abort >/dev/null 2>&1; }
same() { qio "read -P $1 $2 $3" >/dev/null; } # same PATTERN OFF LEN

HONEST="cache(size=1M,flush=honor,fua=honor) > mem(size=4M)"
start_nbd "$HONEST"
ok $? "serving $HONEST"
write_then_drop "write -P 0xa1 0 4096" flush "write -P 0xb2 8192 4096" "write -f -P 0xc3 16384 4096"
is "$(dev_stat cache dirty_bytes)" 4096 "only the unflushed, non-FUA write is dirty in the cache"
is "$(dev_stat cache fua_writes)" 1 "the FUA write reached the cache as FUA"
is "$(dev_stat cache flushes)" 1 "the flush reached the cache"
is "$(ctl_last cut)" "ok cut given=zero inflight=0 decisions=8 outcome=list:0,0,0,0,0,0,0,0" \
	"cut (zero outcome: no dirty sector reaches the media)"
ctl_last replug >/dev/null
same 0xa1 0 4096
ok $? "write + flush survived the cut"
same 0xc3 16384 4096
ok $? "FUA write survived the cut"
same 0 8192 4096
ok $? "the unflushed write was lost (zero outcome)"

# The same unflushed write under an outcome where every dirty sector landed.
write_then_drop "write -P 0xb2 8192 4096"
is "$(ctl_last 'cut list:1,1,1,1,1,1,1,1')" \
	"ok cut given=list(8) inflight=0 decisions=8 outcome=list:1,1,1,1,1,1,1,1" "cut, all landed"
ctl_last replug >/dev/null
same 0xb2 8192 4096
ok $? "the unflushed write survived (all-landed outcome)"

# Torn at sector granularity: the first half landed, the second half did not.
write_then_drop "write -P 0xd4 8192 4096"
ctl_last 'cut list:1,1,1,1,0,0,0,0' >/dev/null
ctl_last replug >/dev/null
qio "read -P 0xd4 8192 2048" "read -P 0xb2 10240 2048" >/dev/null
ok $? "a listed outcome replays a torn write exactly (4 new sectors, 4 old)"

# A seeded outcome is repeatable: the same seed on the same state gives the same list.
write_then_drop "write -P 0xe5 8192 4096"
o1=$(ctl_last 'cut 12345' | sed 's/.*outcome=//')
ctl_last replug >/dev/null
write_then_drop "write -P 0xe5 8192 4096"
o2=$(ctl_last 'cut 12345' | sed 's/.*outcome=//')
ctl_last replug >/dev/null
is "$o2" "$o1" "cut SEED: same seed, same decisions ($o1)"

# Trim goes to the stack as a discard (what a discarded sector reads as is the
# stack's business, so only its arrival is checked here).
write_then_drop "write -P 0xf6 65536 65536" flush "discard 65536 65536"
is "$(stat nbd.trims)" 1 "discard reached the plugin as a trim"
stop_nbd

LYING="cache(size=1M,flush=ignore,fua=ignore) > mem(size=4M)"
start_nbd "$LYING"
ok $? "serving $LYING"
write_then_drop "write -P 0xa1 0 4096" flush "write -f -P 0xc3 16384 4096"
is "$(dev_stat cache dirty_bytes)" 8192 "a lying cache keeps flushed and FUA writes dirty"
ctl_last cut >/dev/null
ctl_last replug >/dev/null
same 0 0 4096
ok $? "lying cache: the flushed write was lost"
same 0 16384 4096
ok $? "lying cache: the FUA write was lost"
# settle: the drive sat idle, so even a lying cache has written everything back
write_then_drop "write -P 0xa1 0 4096" flush
is "$(ctl_last settle)" "ok settle" "settle answers ok"
is "$(dev_stat cache dirty_bytes)" 0 "settle: nothing dirty in the lying cache"
ctl_last cut >/dev/null
is "$(ctl_last settle)" "error: settle: the power is off (replug first)" "settle with the power off: an error"
ctl_last replug >/dev/null
same 0xa1 0 4096
ok $? "lying cache, settled before the cut: the write survived"
stop_nbd

done_testing
