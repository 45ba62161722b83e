#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_members.t — one plugin serving several members (members=yes, docs/nbd.md): the
# lowers of the top concat are exports m0, m1, ...; a flush of one member reaches its
# own cache only (a power cut keeps the flushed member's write, loses the other's);
# with record= every member's requests land in the one log, each with its device,
# in the order they came; non-concat stacks, size= and other export names are refused.
# fail-member=I@MARK: member I answers EIO to everything from the mark MARK on, the
# others do not, and the failed requests are neither applied nor logged (the log and
# member I's media agree); bad values are refused by name.
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

# fail-member=1@step 3: member 1 is a file, so its media can be read after nbdkit stops
F1=$T/m1.img
truncate -s 1M "$F1"
FSTACK="concat > [mem(size=1M) ; file(path=$F1) ; mem(size=1M)]"
# mark TEXT: one write of TEXT and a newline to the marker export
mark() {
	printf '%s\n' "$1" >"$T/mark.txt"
	mq marker "write -s $T/mark.txt 0 $(wc -c <"$T/mark.txt")" >/dev/null 2>&1
}
start_nbd "$FSTACK" members=yes record="$LOG" "fail-member=1@step 3"
ok $? "nbdkit takes fail-member=1@step 3"
mq m1 "write -P 0xd1 0 4096" "flush" >/dev/null 2>&1
ok $? "member 1 takes a write before any mark"
mark "step 2" && readp m1 0xd1 0 4096
ok $? "... and after another mark (\"step 2\") still reads it back"
mark "step 3"
ok $? "the mark \"step 3\" is taken"
for c in "read 0 4096" "write -P 0xd2 8192 4096" "flush" "write -z 12288 4096" "discard 0 4096"; do
	mq m1 "$c" >/dev/null 2>&1
	ok $((! $?)) "from the mark on, member 1 fails: $c"
done
grep -q "Input/output error" <<<"$(mq m1 "read 0 512" 2>&1)"
ok $? "... with EIO"
mq m0 "write -P 0xe0 0 4096" "flush" >/dev/null 2>&1 && readp m0 0xe0 0 4096
ok $? "member 0 does not fail"
mq m2 "write -P 0xe2 0 4096" "flush" >/dev/null 2>&1 && readp m2 0xe2 0 4096
ok $? "member 2 does not fail"
case "$(ctl 'record save' | tail -n 1)" in "ok "*" records") ok 0 "record save" ;; *) ok 1 "record save" ;; esac
# (uniq: qemu-io adds a flush of its own when it closes)
is "$(dump | sed 's/ data=[0-9a-f]*//' | tail -n +2 | uniq)" "write   dev=1 lba=0 count=8
flush   dev=1
mark    step 2
flush   dev=1
mark    step 3
write   dev=0 lba=0 count=8
flush   dev=0
write   dev=2 lba=0 count=8
flush   dev=2" \
	"the log holds member 1's requests before the mark only, the others' after it"
stop_nbd
cmp -s -n 4096 "$F1" <(head -c 4096 /dev/zero | tr '\0' '\321') &&
	cmp -s -i 4096 -n $((1048576 - 4096)) "$F1" /dev/zero
ok $? "member 1's media hold what the log holds: its write before the mark, none after"

start_nbd "$FSTACK" members=yes record="$LOG" "fail-member=3@step 3" 2>/dev/null
ok $((! $?)) "fail-member=3@... of three members is refused"
grep -q "fail-member=3@step 3: no member 3 (this stack has m0 to m2)" "$T/nbdkit.log"
ok $? "... naming the members"
for v in 1 "1@" "@step 3" "x@step 3" "01@step 3"; do
	start_nbd "$FSTACK" members=yes record="$LOG" "fail-member=$v" 2>/dev/null
	ok $((! $?)) "fail-member=$v is refused"
	grep -q "fail-member=$v: expected I@MARK\|fail-member=$v: the mark must be" "$T/nbdkit.log"
	ok $? "... saying what is wrong"
done
start_nbd "$FSTACK" members=yes "fail-member=1@step 3" 2>/dev/null
ok $((! $?)) "fail-member= without record= is refused"
grep -q "needs members=yes and record=FILE" "$T/nbdkit.log"
ok $? "... naming what it needs"

done_testing
