#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_pool_proto.t — the pool (src/vm) against guests that misbehave, no VM: a fake
# qemu-system-x86_64 first on PATH connects the command port as qemu does and plays the
# judge protocol (docs/realkernel.md section 3) well or badly: never answers, floods,
# sends an endless line, names the wrong state, sends a bad observation, never boots,
# exits at boot, reports a harness error once or every time, stops answering once or
# every time. Each is a hung state, a retried state or a clear error, never a crash or
# a leftover process. Also: the CHECK carries each state's offset in the packed
# deltas.img, a store of several members puts their places on the guest's command
# line, and a broken store is one error before any guest starts.
. "$(dirname "$0")/../test-lib.sh"
need_tool socat jq
mkdir -p "$T/bin" "$T/store"
truncate -s 1M "$T/store/base.img"
# s<N>.delta: s0 and s2 as made (16 bytes), s1 two blocks (16 + 2 x 4104 bytes)
cp "$T/store/base.img" "$T/img"
printf 'x' | dd of="$T/img" bs=1 seek=8192 conv=notrunc status=none
printf 'y' | dd of="$T/img" bs=1 seek=409600 conv=notrunc status=none
"$BLACKOUT" vmobserve delta "$T/store/base.img" "$T/img" "$T/store/s1.delta"
"$BLACKOUT" vmobserve delta "$T/store/base.img" "$T/store/base.img" "$T/store/s0.delta"
for n in 2 3 4; do cp "$T/store/s0.delta" "$T/store/s$n.delta"; done
: >"$T/kernel"
: >"$T/initrd"
cat >"$T/bin/qemu-system-x86_64" <<'FAKE'
#!/bin/bash
# fake qemu: the command port's socket from -chardev, then the fake guest on it
while [ $# -gt 0 ]; do
	case "$1" in
	-chardev) sock=${2#*path=} && shift ;;
	-append) [ -n "$FAKELOG" ] && printf '%s\n' "$2" >>"$FAKELOG.append" && shift ;;
	esac
	shift
done
case "$FAKE" in noboot) exec sleep 30 ;; exitboot) exit 1 ;; esac
exec socat EXEC:"$(dirname "$0")/fake-guest" UNIX-CONNECT:"$sock" 2>/dev/null
FAKE
cat >"$T/bin/fake-guest" <<'FAKE'
#!/bin/bash
# FAKE: how to answer; a good answer is a state whose mount failed
echo "BO:READY"
last= heard=
errs=0
while read -r cmd name off sum; do
	[ "$cmd" = CHECK ] || continue
	# the line's sum, as guest-init checks it: a line that fails it is junk
	[ "$(((${name#s} * 40503 + off / 4096 * 65519 + 12345) % 1000003))" = "$sum" ] || continue
	[ "$name" = "$last" ] && continue
	# deaf: the first copy of each command is lost on the way (the pool must resend)
	[ "$FAKE" = deaf ] && [ "$heard" != "$name" ] && heard=$name && continue
	last=$name
	echo "BO:BEGIN $name"
	echo "$name $off" >>"$FAKELOG"
	case "$FAKE:$name" in
	harnessonce:s1) [ -e "$FAKELOG.once" ] || { : >"$FAKELOG.once" && echo "BO:ERROR s1: dmsetup create failed: no" && exit; } ;;&
	harness:s1) echo "BO:ERROR s1: bo-observe apply: 0: no BOSTATE1 delta at this offset" && exit ;;
	hang:s1) exec sleep 30 ;;
	hangonce:s1) [ -e "$FAKELOG.once" ] || { : >"$FAKELOG.once" && exec sleep 30; } ;;&
	flood:*) exec yes "BO:OBS dir /x" ;;
	longline:*) printf 'BO:OBS '; yes x | tr -d '\n'; exit ;;
	wrongend:*) echo "BO:END s99" ;;
	badobs:*) printf 'BO:OBS chunk 4096\nBO:OBS mount zero\nBO:OBS end\nBO:END %s\n' "$name" ;;
	kernel:*) printf 'BO:OBS chunk 4096\nBO:OBS mount 32 no fs\nBO:OBS kernel WARNING: CPU: 0 PID: 9 at fake.c:1 f\nBO:OBS end\nBO:END %s\n' "$name" ;;
	mounted:*) printf 'BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS end\nBO:END %s\n' "$name" ;;
	*)
		printf 'kernel noise\nBO:OBS chunk 4096\nBO:OBS mount 32 no fs\nBO:OBS end\n'
		printf 'BO:TIME 100 200 300 400 500\nBO:END %s\n' "$name"
		;;
	esac
done
FAKE
chmod +x "$T/bin/qemu-system-x86_64" "$T/bin/fake-guest"

pool() { # pool MODE N [ARGS]: the pool over N states with fake guests behaving as MODE
	local mode=$1 n=$2
	shift 2
	FAKE=$mode FAKELOG=$T/$mode.checks PATH="$T/bin:$PATH" timeout 120 "$BLACKOUT" vmobserve \
		"$T/store" "$n" --fs ext4 --kernel "$T/kernel" --initrd "$T/initrd" \
		--workdir "$T/wd-$mode" "$@" >"$T/$mode.out" 2>"$T/$mode.err"
}
leftovers() { pgrep -f "$T/" | grep -v "^$$\$" | wc -l; }

pool good 5 --jobs 2
ok $? "well-behaved guests: the pool runs"
is "$(jq -s '[.[] | select(.hung == false and .mount_rc == -5)] | length' "$T/good.out")" 5 \
	"every state observed (a mount failure each), none hung"
is "$(tail -n 1 "$T/good.out" | jq .seconds.check)" 2.5 "BO:TIME phases summed (5 x 0.5 s of check)"
is "$(tail -n 1 "$T/good.out" | jq .boots)" 2 "two guests started, none restarted"
is "$(sort "$T/good.checks" | tr '\n' ' ')" "s0 0 s1 4096 s2 16384 s3 20480 s4 24576 " \
	"each CHECK names its delta's 4096-aligned offset in deltas.img"

pool harnessonce 3 --jobs 1
ok $? "a harness error (BO:ERROR during a state): the pool runs"
is "$(grep -c '^s1 ' "$T/harnessonce.checks")" 2 "the state is sent again"
is "$(jq -s '[.[] | select(.hung == false and .mount_rc == -5)] | length' "$T/harnessonce.out")" 3 \
	"every state observed, none reported hung or as the filesystem's"
is "$(tail -n 1 "$T/harnessonce.out" | jq .boots)" 2 "on a fresh guest"

pool harness 3 --jobs 1
is $? 1 "a harness error twice: a clear error (exit 1)"
grep -q "s1 failed in the harness (not the filesystem) on its second try: s1: bo-observe apply" "$T/harness.err"
ok $? "... naming the state and the guest's message"
sed 's/^/# /' "$T/harness.err"

printf 'BOSTATE1xxxx' >"$T/store/s4.delta"
pool badstore 5 --jobs 1
rc=$?
t "a malformed delta: one clear error before any guest (exit 1)" \
	'[ $rc = 1 ] && grep -q "s4.delta: 12 bytes: shorter than the 16-byte header" "$T/badstore.err"'
t "... and no guest was started" '[ ! -e "$T/badstore.checks" ]'
cp "$T/store/s0.delta" "$T/store/s4.delta"

# a store of several members (docs/md.md): each guest is told where they lie
printf 'm0 0 524288\nm1 524288 524288\n' >"$T/store/members"
pool members 2 --jobs 1
ok $? "a store of several members: the pool runs"
grep -q ' bo.members=0:1024,1024:1024$' "$T/members.checks.append"
ok $? "... and the guest's command line says where each member lies (bo.members=)"
# a member that did not come back after the cut (docs/md.md): md assembled without it
pool mddrop 2 --jobs 1 --md-drop 1
ok $? "--md-drop 1: the pool runs"
grep -q ' bo.members=0:1024,1024:1024 bo.md_drop=1$' "$T/mddrop.checks.append"
ok $? "... and the guest is told which member to leave out (bo.md_drop=1)"
pool mddrop2 2 --jobs 1 --md-drop 2
rc=$?
t "--md-drop of a member the store does not have: a clear error (exit 1)" \
	'[ $rc = 1 ] && grep -q "no member 2 to drop (2 members)" "$T/mddrop2.err"'
printf 'm0 0 524288\nm1 4097 524288\n' >"$T/store/members"
pool badmembers 2 --jobs 1
rc=$?
t "a malformed members file: one clear error before any guest (exit 1)" \
	'[ $rc = 1 ] && grep -q "members: line 2 is not .m1 START BYTES." "$T/badmembers.err"'
t "... and no guest was started" '[ ! -e "$T/badmembers.checks" ]'
rm "$T/store/members"
pool mddrop3 2 --jobs 1 --md-drop 0
rc=$?
t "--md-drop without a store of several members: a clear error (exit 1)" \
	'[ $rc = 1 ] && grep -q "a member to drop needs a store of several members" "$T/mddrop3.err"'

pool deaf 3 --jobs 1 --state-timeout 20
ok $? "a guest that misses each first command: the pool runs"
is "$(jq -s '[.[] | select(.hung == false and .mount_rc == -5)] | length' "$T/deaf.out")" 3 \
	"every state observed after the CHECK was sent again"
is "$(tail -n 1 "$T/deaf.out" | jq .hung)" 0 "none hung"

pool kernel 2 --jobs 1
ok $? "a guest that reports the kernel's own bug lines: the pool runs"
is "$(jq -s -c '[.[] | select(.state != null) | .kernel]' "$T/kernel.out")" \
	'[{"first":"WARNING: CPU: 0 PID: 9 at fake.c:1 f","lines":1},{"first":"WARNING: CPU: 0 PID: 9 at fake.c:1 f","lines":1}]' \
	"... each state's observation carries them (vmobserve's \"kernel\")"

pool hangonce 3 --jobs 1 --state-timeout 2
ok $? "a guest that stops answering once: the pool runs"
is "$(grep -c '^s1 ' "$T/hangonce.checks")" 2 "its state is sent again"
is "$(jq -s '[.[] | select(.hung == false and .mount_rc == -5)] | length' "$T/hangonce.out")" 3 \
	"... to a fresh guest, which judged it: every state observed, none hung"
is "$(tail -n 1 "$T/hangonce.out" | jq -c '[.hung, .retried, .boots]')" "[0,1,2]" \
	"the summary counts it retried, not hung (one restart)"

pool hang 3 --jobs 1 --state-timeout 2
ok $? "a state that stops every guest does not stop the pool"
is "$(grep -c '^s1 ' "$T/hang.checks")" 2 "it was sent to two guests"
is "$(jq -r 'select(.state == 1) | .hung' "$T/hang.out")" true "its state is reported hung"
jq -r 'select(.state == 1) | .mount_msg' "$T/hang.out" | grep -q "no BO:END within 2s"
ok $? "... saying it stopped answering"
is "$(jq -r 'select(.state == 2) | .mount_rc' "$T/hang.out")" -5 "the next state is observed on a fresh guest"
is "$(tail -n 1 "$T/hang.out" | jq -c '[.hung, .retried, .boots]')" "[1,1,3]" \
	"the summary counts it hung once, retried once (two restarts)"

for mode in flood longline wrongend badobs noboot exitboot; do
	case $mode in
	flood) want="sent over 33554432 bytes for s0" ;;
	longline) want="sent a line over 4194304 bytes" ;;
	wrongend) want="'BO:END s99' while checking s0" ;;
	badobs) want="state s0: observation" ;;
	noboot) want="failed to boot twice in a row: no BO:READY within 2s" ;;
	exitboot) want="failed to boot twice in a row: qemu exited" ;;
	esac
	pool $mode 2 --jobs 1 --boot-timeout 2
	rc=$?
	t "$mode: a clear error (exit 1)" '[ $rc = 1 ] && grep -qF -- "$want" "$T/$mode.err"'
	grep -qF -- "$want" "$T/$mode.err" || sed 's/^/# /' "$T/$mode.err"
done
# bo-observe apply (the guest's step that writes a state's delta onto its snapshot), on
# files: the delta found at its offset in a packed deltas.img, and each refusal named
A=$BUILD/guest/bo-observe
if [ -x "$A" ]; then
	(head -c 4096 /dev/zero && cat "$T/store/s1.delta") >"$T/deltas.img"
	truncate -s %4096 "$T/deltas.img"
	cp "$T/store/base.img" "$T/tgt"
	"$A" apply "$T/deltas.img" 4096 "$T/tgt"
	t "apply: s1's delta at 4096 makes the base into s1's image" '[ $? = 0 ] && cmp -s "$T/tgt" "$T/img"'
	apply_err() { "$A" apply "$T/deltas.img" "$1" "$2" 2>&1 >/dev/null; }
	is "$(apply_err 0 "$T/tgt")" "bo-observe apply: 0: no BOSTATE1 delta at this offset" \
		"apply: no delta at the offset"
	is "$(apply_err 100 "$T/tgt")" "bo-observe apply: 100: OFFSET must be a decimal multiple of 4096" \
		"apply: an unaligned offset"
	is "$(apply_err 1048576 "$T/tgt")" "bo-observe apply: 1048576: OFFSET past the end of the deltas device" \
		"apply: an offset past the end"
	truncate -s 64K "$T/small"
	is "$(apply_err 4096 "$T/small")" \
		"bo-observe apply: 4096: record 1: block 100 outside the device (16 blocks)" \
		"apply: a block outside the target, before anything is written"
	t "... the target untouched" '[ "$(tr -d "\\0" <"$T/small" | wc -c)" = 0 ]'
	head -c 8192 "$T/deltas.img" >"$T/cut.img"
	is "$("$A" apply "$T/cut.img" 4096 "$T/tgt" 2>&1)" \
		"bo-observe apply: 4096: the delta's count runs past the deltas device or 64 MiB" \
		"apply: a count running past the deltas device"
else
	skip "bo-observe apply" "no $A (make)"
fi

# an application's states (blackout app): a state that mounted but whose guest gave no
# checker verdict (the checker never ran) is the checker failing, never an ok state
pool mounted 2 --jobs 1 --app
is "$(jq -s '[.[] | select(.app.exit == -1 and (.app.line | test("no verdict")))] | length' \
	"$T/mounted.out")" 2 "--app: a mounted state without the checker's verdict is a failing checker"
pool mounted 2 --jobs 1
is "$(jq -s '[.[] | select(.app)] | length' "$T/mounted.out")" 0 \
	"... and without --app no checker verdict is expected"

sleep 0.2
is "$(leftovers)" 0 "no fake qemu, socat or nbdkit left running"
done_testing
