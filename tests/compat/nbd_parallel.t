#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_parallel.t — the plugin under nbdkit's parallel thread model (docs/nbd.md): many
# requests in flight at once each land whole (8 MiB through 32 requests in flight reads
# back as written, one device write each); the recorder's log is the order the stack
# applied them in (of two overlapping writes in flight together, the one logged last is
# the one read back); and fail-member's mark falls between a member's requests: with
# writes to the member in flight as the mark lands, none is logged after it and its
# media hold exactly the writes the log holds.
. "$(dirname "$0")/nbd_lib.sh"
need_tool nbdcopy qemu-io

LOG=$T/io.log
dump() { "$B" log dump "$LOG" | sed -n 's/^ *[0-9][0-9]* \(.*[^ ]\) *$/\1/p'; }
uri() { echo "nbd+unix:///$1?socket=$NBD_SOCK"; }

is "$(nbdkit --dump-plugin "$PLUGIN" | sed -n 's/^thread_model=//p')" parallel \
	"nbdkit runs the plugin's requests in parallel (thread_model=parallel)"

head -c 8M /dev/urandom >"$T/data"
start_nbd "cache(size=1M,flush=honor) > mem(size=16M)" record="$LOG"
ok $? "nbdkit serves a cached stack with record="
timeout 120 nbdcopy --requests=32 --request-size=4096 --flush "$T/data" "$NBD_URI"
ok $? "nbdcopy writes 8 MiB as 4 KiB requests, 32 in flight"
is "$(stat nbd.writes)" 2048 "... each request one write (2048)"
timeout 120 nbdcopy --requests=32 --request-size=4096 "$NBD_URI" "$T/back"
cmp -s -n 8388608 "$T/data" "$T/back"
ok $? "... and the 8 MiB read back (32 reads in flight) are what was written"

# Sixteen pairs of overlapping 64 KiB writes, each pair in flight together: whichever
# the stack applied last is what the overlap holds, and it must be the one logged last.
cmds=()
for i in $(seq 0 15); do
	b=$((i * 131072))
	cmds+=(-c "aio_write -P $((0x10 + i)) $b 64k" -c "aio_write -P $((0x80 + i)) $((b + 4096)) 64k")
done
timeout 60 qemu-io -t writeback -f raw "${cmds[@]}" -c aio_flush "$NBD_URI" >/dev/null 2>&1
ok $? "qemu-io sends sixteen pairs of overlapping writes, each pair at once"
case "$(ctl 'record save' | tail -n 1)" in "ok "*" records") ok 0 "record save" ;; *) ok 1 "record save" ;; esac
dump >"$T/dump"
bad=0 swapped=0
for i in $(seq 0 15); do
	b=$((i * 131072))
	# the later of the two writes in the log (the last 64 KiB write at either lba)
	first=$(grep -n "^write   lba=$((b / 512)) count=128" "$T/dump" | tail -n 1 | cut -d: -f1)
	second=$(grep -n "^write   lba=$(((b + 4096) / 512)) count=128" "$T/dump" | tail -n 1 | cut -d: -f1)
	if [ -z "$first" ] || [ -z "$second" ]; then
		diag "pair $i: not both writes in the log"
		bad=$((bad + 1))
		continue
	fi
	want=$((0x80 + i))
	if [ "$first" -gt "$second" ]; then
		want=$((0x10 + i))
		swapped=$((swapped + 1))
	fi
	if ! timeout 30 qemu-io -f raw -r -c "read -P $want $((b + 4096)) 61440" "$NBD_URI" \
		>"$T/rd" 2>&1 || grep -q "Pattern verification failed" "$T/rd"; then
		diag "pair $i: the overlap does not hold the pattern of the write logged last ($want)"
		bad=$((bad + 1))
	fi
done
is "$bad" 0 "every overlap holds the write the log has last"
diag "pairs applied in the reverse of the order sent: $swapped of 16"
stop_nbd

# fail-member=1@step 3 with writes to member 1 in flight as the mark lands
F1=$T/m1.img
truncate -s 4M "$F1"
head -c 4M /dev/urandom >"$T/m1data"
rm -f "$LOG"
start_nbd "concat > [mem(size=1M) ; file(path=$F1)]" members=yes record="$LOG" "fail-member=1@step 3"
ok $? "nbdkit takes members=yes and fail-member=1@step 3"
(
	# copies until member 1 fails under them (or 60 s pass)
	end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ] &&
		timeout 60 nbdcopy --requests=32 --request-size=4096 "$T/m1data" "$(uri m1)" 2>/dev/null; do
		touch "$T/copied"
	done
	[ $SECONDS -lt $end ] && touch "$T/refused"
) &
copier=$!
i=0
while [ ! -e "$T/copied" ] && [ $i -lt 600 ]; do
	sleep 0.05
	i=$((i + 1))
done
printf 'step 3\n' >"$T/mark.txt"
timeout 30 qemu-io -f raw -c "write -s $T/mark.txt 0 7" "$(uri marker)" >/dev/null 2>&1
ok $? "the mark \"step 3\" is taken while member 1 is being written"
wait $copier
ok $([ -e "$T/refused" ]; echo $?) "... and the copy in flight fails from it on"
case "$(ctl 'record save' | tail -n 1)" in "ok "*" records") ok 0 "record save" ;; *) ok 1 "record save" ;; esac
stop_nbd
dump >"$T/dump"
mk=$(grep -n "^mark    step 3$" "$T/dump" | cut -d: -f1)
ok $([ -n "$mk" ]; echo $?) "the log holds the mark"
before=$(head -n "$((${mk:-1} - 1))" "$T/dump" | grep -c "^write   dev=1 ")
after=$(tail -n +"${mk:-1}" "$T/dump" | grep -c "dev=1")
t "member 1 was written before the mark ($before writes)" '[ "$before" -gt 0 ]'
is "$after" 0 "no request of member 1 is logged after the mark"
# member 1's media: each 4 KiB block the log wrote holds the data, every other is zero
grep "^write   dev=1 " "$T/dump" | sed 's/.* lba=\([0-9]*\) count=\([0-9]*\).*/\1 \2/' |
	sort -un >"$T/written"
wrong=0
for blk in $(seq 0 1023); do
	if grep -q "^$((blk * 8)) 8$" "$T/written"; then
		want="$T/m1data"
	else
		want=/dev/zero
	fi
	cmp -s -i $((blk * 4096)):$((blk * 4096)) -n 4096 "$F1" "$want" || wrong=$((wrong + 1))
done
is "$wrong" 0 "member 1's media hold exactly the writes the log holds (of 1024 blocks)"
done_testing
