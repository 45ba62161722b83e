#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vmtest_explore.t — `blackout vmtest` without --cuts and `blackout explore --log`, up to
# the point where guests would boot (no VM here): a recording saved by the explorer
# (--save-log) enumerates to the same result from the log; vmtest refuses a log of
# another stack, fs or workload, a truncated log and a log without its run, naming
# what is wrong, before any guest is built; usage errors exit 2. TAP.
. "$(dirname "$0")/../test-lib.sh"

S='cache(size=256k,flush=ignore) > mem(size=8M)'
F='ext3,barrier=1'
"$B" explore --stack "$S" --fs "$F" --workload wal --max-states 300 --save-log "$T/io.log" \
	--json "$T/a.json" --quiet; rc=$?
t "explore --save-log runs (exit 3: the lying cache loses data)" '[ $rc -eq 3 ] && [ -s "$T/io.log" ]'
"$B" log dump "$T/io.log" >"$T/dump" 2>&1
t "the saved log begins with the marks naming its run" \
	'sed -n "2,4s/^ *[0-9]* mark *//p" "$T/dump" | tr "\n" "|" | grep -qxF "stack $S|fs $F|workload wal|"'
t "and holds step 0 ... end" 'grep -q "mark *step 0" "$T/dump" && grep -q "mark *end" "$T/dump"'
"$B" explore --log "$T/io.log" --stack "$S" --fs "$F" --workload wal --max-states 300 \
	--json "$T/b.json" --quiet; rc=$?
t "explore --log: the same JSON as the run that recorded it" '[ $rc -eq 3 ] && cmp -s "$T/a.json" "$T/b.json"'

vm() { "$B" vmtest --out "$T/out" "$@" 2>&1; }
err=$(vm --log "$T/io.log" --stack 'cache(size=256k,flush=honor) > mem(size=8M)' --fs "$F" --workload wal); rc=$?
t "vmtest: a log from another stack is refused (exit 1)" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "was recorded on stack .cache(size=256k,flush=ignore) > mem(size=8M)., not on --stack"'
err=$(vm --log "$T/io.log" --stack "$S" --fs ext3,barrier=0 --workload wal); rc=$?
t "vmtest: a log made with another fs is refused" '[ $rc -eq 1 ] && echo "$err" | grep -q "recorded with fs .ext3,barrier=1., not with --fs .ext3,barrier=0."'
err=$(vm --log "$T/io.log" --stack "$S" --fs "$F" --workload append-fsync); rc=$?
t "vmtest: a log of another workload is refused" '[ $rc -eq 1 ] && echo "$err" | grep -q "recorded with workload .wal., not with --workload .append-fsync."'
head -c 5000 "$T/io.log" >"$T/short.log"
err=$(vm --log "$T/short.log" --stack "$S" --fs "$F" --workload wal); rc=$?
t "vmtest: a truncated log is refused with where" '[ $rc -eq 1 ] && echo "$err" | grep -q "short.log.*truncated at byte"'
err=$(vm --log "$T/none.log" --stack "$S" --fs "$F" --workload wal); rc=$?
t "vmtest: a missing log is refused naming it" '[ $rc -eq 1 ] && echo "$err" | grep -q "none.log"'
t "nothing was built for guests on refusal" '[ ! -e "$T/out/states/base.img" ]'

# the whole command up to the guests, with stand-ins for the recording boot (the
# explorer's own run saved as the guest's would be) and for the kernel build (fails)
fake=$T/fake
mkdir -p "$fake/scripts"
printf '#!/bin/sh\nexit 0\n' >"$fake/scripts/vmtest"
cat >"$fake/scripts/vmrecord" <<EOF2
#!/bin/sh
echo "\$*" >"$T/vmrecord.args"
while [ \$# -gt 1 ]; do
	case \$1 in --stack) s=\$2 ;; --fs) f=\$2 ;; --workload) w=\$2 ;; --out) o=\$2 ;; esac
	shift 2
done
mkdir -p "\$o" && "$B" explore --stack "\$s" --fs "\$f" --workload "\$w" --max-states 300 \\
	--save-log "\$o/io.log" --quiet
[ -s "\$o/io.log" ]
EOF2
printf '#!/bin/sh\necho "vm-build: stand-in" >&2\nexit 1\n' >"$fake/scripts/vm-build"
chmod +x "$fake/scripts/"*
out=$(BLACKOUT_SRC=$fake "$B" vmtest --out "$T/full" --stack "$S" --fs "$F" --workload wal \
	--max-states 300 2>&1); rc=$?
t "vmtest records through scripts/vmrecord with the run's names and kernel series" \
	'grep -qxF -- "--stack $S --fs $F --workload wal --files 24 --out $T/full/record --kernel 6.1" "$T/vmrecord.args"'
t "enumerates the recording into the state store (base.img of the device's 8 MiB)" \
	'[ "$(stat -c %s "$T/full/states/base.img")" = 8388608 ] && [ -s "$T/full/states/index" ]'
judged=$(sed 's/.*"judged":\([0-9]*\).*/\1/' "$T/b.json")
t "one stored state per distinct state of the explorer's own run ($judged)" \
	'[ "$(wc -l <"$T/full/states/index")" = "$judged" ] && [ -s "$T/full/states/s0.delta" ] && head -n 1 "$T/full/states/index" | grep -q "^s0 p[0-9]*w\{0,1\}-s\{0,1\}[0-9]* [0-9]*$"'
t "and stops when the guests cannot be built, saying so (exit 1)" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "kernel and initramfs could not be built"'

err=$(vm --stack "$S" --fs zfs --workload wal); rc=$?
t "vmtest: an unknown fs is a usage error (exit 2)" '[ $rc -eq 2 ] && echo "$err" | grep -q "ext4, ext3, xfs or btrfs"'
err=$(vm --stack "$S" --fs ext4 --workload wal --keep "$T/k"); rc=$?
t "vmtest: --keep without --state is a usage error" '[ $rc -eq 2 ] && echo "$err" | grep -q "give --state"'
err=$(vm --stack "$S" --fs ext4 --workload wal --shard 2/2); rc=$?
t "vmtest: a bad --shard is a usage error" '[ $rc -eq 2 ] && echo "$err" | grep -q "shard"'
err=$(vm --stack 'cache(sise=1) > mem' --fs ext4 --workload wal); rc=$?
t "vmtest: a bad stack is refused before anything runs" '[ $rc -eq 1 ] && echo "$err" | grep -q column'
"$B" vmtest --help | grep -q -- "--cuts N"; rc=$?
t "vmtest --help shows both modes" '[ $rc -eq 0 ]'
done_testing
