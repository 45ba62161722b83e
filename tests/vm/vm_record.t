#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_record.t — one recorded real-kernel run (scripts/vmrecord, docs/realkernel.md
# section 1): append-fsync on ext4 over an honest write cache, the guest kernel's NBD
# client, marks through the marker export. The saved log loads, starts with the stack,
# has the guest's marks in order, carries FUA writes, and every fsync step logged a
# flush or FUA write between its mark and the next one.
. "$(dirname "$0")/../test-lib.sh"
need_tool qemu-system-x86_64 nbdkit socat

STACK='cache(size=1M,flush=honor) > mem(size=64M)'
timeout 300 "$BLACKOUT_SRC/scripts/vmrecord" --stack "$STACK" --fs ext4 --workload append-fsync \
	--out "$T/r" >"$T/r.out" 2>&1
rc=$?
sed 's/^/# /' "$T/r.out"
[ $rc -eq 0 ] || { echo "vmrecord failed (exit $rc):"; tail -n 20 "$T/r.out"; } >&2
ok $rc "vmrecord records one run"
t "it leaves io.log, guest.markers and console" \
	'[ -s "$T/r/io.log" ] && [ -s "$T/r/guest.markers" ] && [ -s "$T/r/console" ]'
"$B" log dump "$T/r/io.log" >"$T/dump" 2>"$T/dump.err"
ok $? "the log loads ($(head -n 1 "$T/dump"))"
sed -n 's/^ *[0-9][0-9]* \(.*[^ ]\) *$/\1/p' "$T/dump" >"$T/ops"
is "$(head -n 1 "$T/ops")" "mark    stack $STACK" "the first record is the stack mark"

# the run's steps, and which of them are fsyncs, from the same compiled workload
"$B" vmtest compile append-fsync "$T/wl" >/dev/null
n=$(grep -c '^	bo_mark "step' "$T/wl/workload.sh")
fsyncs=$(sed -n 's/^	{ sync .* && say "STEP \([0-9]*\)".*/\1/p' "$T/wl/workload.sh")
t "the workload has steps ($n) and fsync steps ($(echo $fsyncs))" \
	'[ "$n" -ge 2 ] && [ -n "$fsyncs" ] && [ -z "$(echo $fsyncs | tr -d "0-9 ")" ]'

want="fs ext4,defaults|workload append-fsync"
for i in $(seq 0 $((n - 1))); do want="$want|step $i"; done
want="$want|end"
got=$(sed -n 's/^mark    //p' "$T/ops" | tail -n +2 | paste -sd'|')
is "$got" "$want" "the marks in order: fs, workload, step 0..$((n - 1)), end"
first_io=$(grep -n -m 1 -v '^mark' "$T/ops" | cut -d: -f1)
fs_at=$(grep -n -m 1 '^mark    workload ' "$T/ops" | cut -d: -f1)
t "the fs and workload marks come before mkfs's first request" '[ "$fs_at" -lt "$first_io" ]'
fua=$(grep -c '^write .* fua ' "$T/ops")
t "FUA writes were recorded ($fua)" '[ "$fua" -ge 1 ]'

# between "step I" and "step I+1" (or "end") of an fsync step: a flush or a FUA write
bad= checked=0
for i in $fsyncs; do
	checked=$((checked + 1))
	nxt="step $((i + 1))"
	[ "$i" = $((n - 1)) ] && nxt=end
	awk -v a="mark    step $i" -v b="mark    $nxt" '
		$0 == a { on = 1; next } $0 == b { exit } on && ($1 == "flush" || / fua /) { f = 1 }
		END { exit !f }' "$T/ops" || bad="$bad $i"
done
is "${bad:-none} $checked" "none $(echo $fsyncs | wc -w)" \
	"every fsync step logged a flush or FUA write before the next mark"

tr -d '\r' <"$T/r/guest.markers" >"$T/markers"
t "the guest's serial lines: every step returned, DONE, no FAIL" \
	'[ "$(grep -c "^BO:STEP" "$T/markers")" = "$n" ] && grep -q "^BO:DONE" "$T/markers" &&
	! grep -q "^BO:FAIL" "$T/markers"'

err=$("$BLACKOUT_SRC/scripts/vmrecord" --stack "$STACK" --fs ext4 --workload append-fsync 2>&1)
t "vmrecord without --out is a usage error" '[ $? -eq 2 ] && echo "$err" | grep -q "required"'
# a filesystem no guest knows is refused by the options' check, before any boot
err=$("$BLACKOUT_SRC/scripts/vmrecord" --stack "$STACK" --fs nosuchfs --workload append-fsync \
	--out "$T/nofs" 2>&1)
rc=$?
t "an unknown filesystem is a usage error before any boot" \
	'[ $rc -eq 2 ] && echo "$err" | grep -q "not .nosuchfs." && [ ! -e "$T/nofs/console" ]'
# a guest that fails (mkfs.xfs refuses a 64 MiB device: xfs wants 300 MiB): a non-zero
# exit with the guest's reason
err=$(timeout 200 "$BLACKOUT_SRC/scripts/vmrecord" --stack "$STACK" --fs xfs \
	--workload append-fsync --out "$T/bad" --timeout 120 2>&1)
rc=$?
echo "$err" | sed 's/^/# /'
t "a guest failure exits 1 naming it (mkfs xfs failed)" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "mkfs xfs failed"'
t "... and leaves no qemu or nbdkit behind" \
	'! pgrep -f "$T/bad/" >/dev/null'
done_testing
