#!/bin/bash
# nbd_members.t — one plugin serving several members (members=yes, docs/nbd.md): the
# lowers of the top concat are exports m0, m1, ...; a flush of one member reaches its
# own cache only (a power cut keeps the flushed member's write, loses the other's);
# with record= every member's requests land in the one log, each with its device,
# in the order they came; non-concat stacks, size= and other export names are refused.
. "$(dirname "$0")/nbd_lib.sh"

LOG=$T/io.log
M="cache(size=256k,flush=honor) > mem(size=1M)"
STACK="concat > [$M ; $M ; cache(size=256k,flush=honor) > mem(size=2M)]"
uri() { echo "nbd+unix:///$1?socket=$NBD_SOCK"; }
# mq EXPORT CMD...: one qemu-io connection to EXPORT; `abort` at the end leaves without
# the flush qemu-io sends on close
mq() {
	local e=$1 a=()
	shift
	for c in "$@"; do a+=(-c "$c"); done
	timeout 60 qemu-io -t writeback -f raw "${a[@]}" "$(uri "$e")" </dev/null
}
dump() { "$B" log dump "$LOG" | sed -n 's/^ *[0-9][0-9]* \(.*[^ ]\) *$/\1/p'; }

start_nbd "$STACK" members=yes record="$LOG"
ok $? "nbdkit serves a concat's members with record="
info=$(timeout 20 nbdinfo --list --json "$NBD_URI" </dev/null)
is "$(echo "$info" | jq -r '[.exports[] | "\(.["export-name"])=\(.["export-size"] // "")"] | sort | join(",")')" \
	"m0=1048576,m1=1048576,m2=2097152,marker=1048576" "exports m0..m2 with the members' sizes, and marker"

# readp EXPORT PATTERN OFF LEN: the bytes there are PATTERN (after the cut: the flush
# qemu-io sends on close changes nothing then)
readp() { mq "$1" "read -P $2 $3 $4" >/dev/null 2>&1; }
mq m0 "write -P 0xa0 0 4096" "abort" >/dev/null 2>&1
mq m1 "write -P 0xb1 4096 4096" "flush" abort >/dev/null 2>&1
mq m2 "write -f -P 0xc2 8192 512" "abort" >/dev/null 2>&1
is "$(dev_stat cache dirty_bytes)" 4096 "member 0's write waits in its cache"
is "$(stat nbd.members)" 3 "stats counts 3 members"

is "$(ctl 'record save' | tail -n 1)" "ok 5 records" "record save: the stack mark and 4 requests"
is "$(dump | sed 's/ data=[0-9a-f]*//')" "mark    stack $STACK
write   dev=0 lba=0 count=8
write   dev=1 lba=8 count=8
flush   dev=1
write   dev=2 lba=16 count=1 fua" \
	"one log, one order: each request with its member and the member's own LBA"
"$B" log dump --json "$LOG" | jq -e '.devices == [2048, 2048, 4096]' >/dev/null
ok $? "log dump --json lists the devices' sizes"

case "$(ctl_last cut)" in "ok cut "*) ok 0 "a power cut of all members at one instant" ;; *) ok 1 "cut" ;; esac
ctl replug >/dev/null
readp m1 0xb1 4096 4096
ok $? "after a cut: member 1's flushed write survived"
readp m0 0 0 4096
ok $? "member 0's write, not flushed on member 0, was lost (member 1's later flush did not reach it)"
readp m2 0xc2 8192 512
ok $? "member 2's FUA write survived"

mq "" "read 0 512" >/dev/null 2>&1
ok $((! $?)) "the whole stack is not an export with members=yes"
grep -q "no export '' (this plugin serves members m0 to m2 and \"marker\")" "$T/nbdkit.log"
ok $? "... and the refusal names the exports"
mq m3 "read 0 512" >/dev/null 2>&1
ok $((! $?)) "m3 of three members is refused"
mq m01 "read 0 512" >/dev/null 2>&1
ok $((! $?)) "m01 is not m1"
stop_nbd

start_nbd "cache(size=1M) > mem(size=4M)" members=yes 2>/dev/null
ok $((! $?)) "members=yes over a stack whose top is not a concat is refused"
grep -q "the stack's top is 'cache'" "$T/nbdkit.log"
ok $? "... naming the top layer"
start_nbd "concat > [mem(size=1M) ; mem(size=1M)]" members=yes size=1M 2>/dev/null
ok $((! $?)) "members=yes with size= is refused"
start_nbd "concat > [mem(size=1M) ; disk(sector=512) > mem(size=6656)]" members=yes 2>/dev/null
ok $((! $?)) "a member that is not a whole number of 4 KiB is refused"
grep -q "member 1 is 6656 bytes" "$T/nbdkit.log"
ok $? "... naming the member"

done_testing
