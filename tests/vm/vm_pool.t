#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_pool.t — the pool of judging guests (src/vm, docs/realkernel.md section 3) on a
# state store made by hand: host mke2fs gives base.img; deltas rewrite a file block,
# zero the superblock, corrupt an inode, and make the kernel panic (errors=panic and a
# corrupted directory block), then four more. Each state's observation is checked; the
# panicking state, handed to a fresh guest once more, panics it too and is reported
# hung, and the next state is observed on a fresh guest.
# Then one guest judges a state whose mount replays a journal transaction (debugfs
# jo/jw/jc) between states as made: each of those must read the base and no replayed
# block (a state's writes stay in its own snapshot). A guest whose kernel warned while
# booting refuses to judge.
. "$(dirname "$0")/../test-lib.sh"
need_tool qemu-system-x86_64 mke2fs debugfs tune2fs jq
[ -x "$BUILD/guest/bo-observe" ] || bail "$BUILD/guest/bo-observe missing: make"
"$BLACKOUT_SRC/scripts/vm-build" "$BUILD/vm" >/dev/null || bail "scripts/vm-build failed"

S=$T/store
mkdir -p "$S" "$T/src/d"
head -c 10000 /dev/urandom >"$T/src/a"
printf 'hello\n' >"$T/src/d/b"
truncate -s 64M "$S/base.img"
mke2fs -q -F -t ext4 -b 4096 -d "$T/src" "$S/base.img" || bail "mke2fs failed"
blk() { debugfs -R "blocks $1" "$S/base.img" 2>/dev/null | awk '{ print $1 }'; }
ablk=$(blk /a) dblk=$(blk /d)
# the inode table block and byte offset of /d/b's inode ("located at block B, offset 0xO")
read -r iblk ioff < <(debugfs -R "imap /d/b" "$S/base.img" 2>/dev/null |
	sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-f]*\).*/\1 \2/p')
[ -n "$ablk" ] && [ -n "$dblk" ] && [ -n "$iblk" ] || bail "debugfs found no blocks"
state() { # state N: s<N>.delta from $T/img (then removed)
	"$BLACKOUT" vmobserve delta "$S/base.img" "$T/img" "$S/s$1.delta" && rm -f "$T/img"
}
cp "$S/base.img" "$T/img" && state 0 # as made
cp "$S/base.img" "$T/img"
printf 'X%.0s' $(seq 4096) | dd of="$T/img" bs=4096 seek="$ablk" conv=notrunc status=none
state 1 # /a's first block rewritten
cp "$S/base.img" "$T/img" && dd if=/dev/zero of="$T/img" bs=4096 count=1 conv=notrunc status=none
state 2 # the superblock zeroed: no mount
cp "$S/base.img" "$T/img"
fill() { head -c "$1" /dev/zero | tr '\0' '\245'; } # fixed garbage: the same states every run
fill 256 | dd of="$T/img" bs=1 seek=$((iblk * 4096 + ioff)) conv=notrunc status=none
state 3 # /d/b's inode overwritten: e2fsck complains
cp "$S/base.img" "$T/img" && tune2fs -e panic "$T/img" >/dev/null &&
	fill 4096 | dd of="$T/img" bs=4096 seek="$dblk" conv=notrunc status=none
state 4 # errors=panic, /d's block garbage: reading /d panics the kernel
for n in 5 6 7 8; do cp "$S/base.img" "$T/img" && state $n; done # as made, after the panic
amd5=$(head -c 4096 "$T/src/a" | md5sum | cut -d' ' -f1)
xmd5=$(printf 'X%.0s' $(seq 4096) | md5sum | cut -d' ' -f1)

timeout 240 "$BLACKOUT" vmobserve "$S" 9 --fs ext4 --jobs 2 --workdir "$T/wd" \
	--state-timeout 60 >"$T/out.jsonl" 2>"$T/err"
ok $? "vmobserve ran the pool over 9 states with 2 guests"
sed 's/^/# /' "$T/out.jsonl" "$T/err"
st() { jq -r "select(.state == $1) | $2" "$T/out.jsonl"; }
is "$(st 0 .files.a.md5)" "$amd5" "s0: /a's first chunk as made"
is "$(st 0 .fsck_clean)" true "s0: e2fsck -fn clean"
is "$(st 1 .files.a.md5)" "$xmd5" "s1: /a's rewritten block seen through the kernel"
is "$(st 1 .files.a.size)" 10000 "s1: /a's size"
t "s2: the mount fails on a zeroed superblock" '[ "$(st 2 .mount_rc)" != 0 ] && [ "$(st 2 .hung)" = false ]'
is "$(st 3 .mount_rc)" 0 "s3: mounts despite the corrupted inode"
is "$(st 3 .fsck_clean)" false "s3: e2fsck -fn complains"
is "$(st 4 .hung)" true "s4: the panicking state is reported hung"
t "s4: the message says the kernel panicked" 'st 4 .mount_msg | grep -q "Kernel panic"'
is "$(st 5 .files.a.md5)" "$amd5" "s5: observed after the panic, on a fresh guest"
is "$(st 5 .fsck_clean)" true "s5: clean"
is "$(st 8 .files.a.md5)" "$amd5" "s8: the last state observed"
sum=$(tail -n 1 "$T/out.jsonl")
is "$(echo "$sum" | jq .observed)" 8 "summary: 8 states observed"
is "$(echo "$sum" | jq .hung)" 1 "summary: 1 hung"
is "$(echo "$sum" | jq -c '[.retried, .boots]')" "[1,4]" \
	"summary: the panicking state retried once; 4 guests started (2, and a restart after each panic)"
t "summary: phase times reported" '[ "$(echo "$sum" | jq ".seconds.mount > 0 and .seconds.check > 0")" = true ]'

# a journal transaction (debugfs jo/jw/jc) rewriting /a's first block with J...: the
# kernel replays it at mount, into the state's snapshot only
R=$T/replay
mkdir -p "$R"
cp "$S/base.img" "$R/base.img"
printf 'J%.0s' $(seq 4096) >"$T/jblk"
printf 'jo\njw -b %s %s\njc\n' "$ablk" "$T/jblk" >"$T/jcmds"
cp "$S/base.img" "$T/img" && debugfs -w -f "$T/jcmds" "$T/img" >/dev/null 2>&1 &&
	"$BLACKOUT" vmobserve delta "$R/base.img" "$T/img" "$R/s0.delta" || bail "no journal state"
cp "$S/s0.delta" "$R/s1.delta" && cp "$R/s0.delta" "$R/s2.delta" && cp "$S/s0.delta" "$R/s3.delta"
jmd5=$(md5sum <"$T/jblk" | cut -d' ' -f1)
timeout 180 "$BLACKOUT" vmobserve "$R" 4 --fs ext4 --jobs 1 --workdir "$T/wdr" \
	--state-timeout 60 >"$T/r.jsonl" 2>"$T/r.err"
ok $? "vmobserve: one guest, journal states between states as made"
sed 's/^/# /' "$T/r.jsonl" "$T/r.err"
rt() { jq -r "select(.state == $1) | $2" "$T/r.jsonl"; }
is "$(rt 0 .files.a.md5)" "$jmd5" "r0: the journal replayed at mount (/a's block from the journal)"
is "$(rt 0 .fsck_clean)" true "r0: clean after the replay"
is "$(rt 1 .files.a.md5)" "$amd5" "r1 after r0 on the same guest: base + its own delta only"
is "$(rt 2 .files.a.md5)" "$jmd5" "r2: the same journal state replays again"
is "$(rt 3 .files.a.md5)" "$amd5" "r3: base again"
is "$(tail -n 1 "$T/r.jsonl" | jq .boots)" 1 "one guest for the four"
# A kernel that warns while booting judges nothing: qemu wrapped to add acpi=noirq to
# the command line (with MSI left on, the kernel warns setting up the virtio devices)
mkdir -p "$T/qw"
printf '#!/bin/bash\na=()\nfor x in "$@"; do a+=("${x/no_timer_check/no_timer_check acpi=noirq}"); done\nexec %s "${a[@]}"\n' \
	"$(command -v qemu-system-x86_64)" >"$T/qw/qemu-system-x86_64"
chmod +x "$T/qw/qemu-system-x86_64"
PATH="$T/qw:$PATH" timeout 180 "$BLACKOUT" vmobserve "$R" 1 --fs ext4 --jobs 1 --workdir "$T/wdw" \
	>"$T/w.jsonl" 2>"$T/w.err"
rc=$?
sed 's/^/# /' "$T/w.err"
[ $rc = 1 ] && grep -q "the kernel warned while booting (tainted [0-9]*): .*WARNING: " "$T/w.err" &&
	[ ! -s "$T/w.jsonl" ]
ok $? "a kernel that warned while booting: no state judged, the pool stops naming the warning"
left=$(pgrep -f "$T/wd" | wc -l)
is "$left" 0 "no qemu left running"
done_testing
