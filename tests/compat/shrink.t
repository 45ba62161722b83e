#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# shrink.t — `blackout shrink`: the planted 8-step lost-fsync workload comes out as its 2
# steps in a file the parser accepts, the rebuild line it prints rebuilds the state it
# names (failing, kept as an image), the dm-flakey script is valid sh that drops writes
# before the fsync and names its caveat; a workload that does not fail and bad usage are
# refused with their exit statuses. TAP.
. "$(dirname "$0")/../test-lib.sh"

cat >"$T/lost8.wl" <<'EOF'
name lost8
setup
mkdir /d
create /f
write /f 0 16k
create /g
run
mkdir /x
create /y
write /f 0 8k
truncate /g 1k
fsync /f
rename /y /z
mkdir /x/w
unlink /g
EOF
S='cache(size=64k,flush=honor) > disk > mem(size=8M)'
F='ext3,data=ordered,barrier=0'
out=$("$B" shrink --stack "$S" --fs "$F" --workload "$T/lost8.wl" --out "$T/o" \
	--max-states 500 --max-candidates 64 --quiet); rc=$?
echo "$out" | sed 's/^/# /'
t "shrink exits 0 on the planted workload" '[ $rc -eq 0 ]'
t "it says 8 run steps -> 2, signature durable, silent" \
	'echo "$out" | grep -q "^workload:  lost8, 8 run steps -> 2 " && echo "$out" | grep -qx "signature: durable, silent"'
"$B" workloads check "$T/o/lost8-min.wl" >"$T/min.txt" 2>&1
t "the minimal workload file parses" '[ $? -eq 0 ]'
t "it is the setup and the overwrite and its fsync" \
	'sed -n "/^run$/,\$p" "$T/o/lost8-min.wl" | tr "\n" ";" | grep -qx "run;write /f 0 8k;fsync /f;" && grep -qx "write /f 0 16k" "$T/o/lost8-min.wl"'
id=$(echo "$out" | sed -n 's/^state: *\([^ ]*\) .*/\1/p')
line=$(sed 's/--keep DIR$//' "$T/o/lost8-min.cmd")
t "the .cmd file holds the rebuild line printed, with --keep DIR" \
	'[ -n "$id" ] && echo "$out" | grep -qF "rebuild:   $line--keep DIR" && grep -q -- "--state $id --keep DIR$" "$T/o/lost8-min.cmd"'
(cd "$T" && eval "$(echo "$line" | sed "s|^blackout|\"$B\"|") --keep kept --quiet")
rc=$?
t "running it rebuilds $id: exit 3 and the image kept" '[ $rc -eq 3 ] && [ -s "$T/kept/$id.img" ]'
sh -n "$T/o/lost8-repro.sh"
t "the reproducer is valid sh" '[ $? -eq 0 ]'
t "it drops writes before the fsync and checks what the fsync promised" \
	'awk "/flakey_table \"\\\$DROP\"/ { d = NR } /^sync \"\\\$MNT\\/f\"/ { f = NR } END { exit !(d && f && d < f) }" "$T/o/lost8-repro.sh" && grep -q "^bo_promise /f$" "$T/o/lost8-repro.sh"'
t "its header says what dm-flakey expresses and gives the finer state's rebuild line" \
	'grep -q "^# drop_writes: a device that acknowledges every write" "$T/o/lost8-repro.sh" && grep -qF "#   $line--keep DIR" "$T/o/lost8-repro.sh"'

err=$("$B" shrink --stack 'disk > mem(size=8M)' --fs ext3 --workload "$T/lost8.wl" --out "$T/o2" --quiet 2>&1); rc=$?
t "a workload that does not fail: exit 1, nothing to shrink" '[ $rc -eq 1 ] && echo "$err" | grep -q "nothing to shrink"'
err=$("$B" shrink --fs ext3 --workload "$T/lost8.wl" 2>&1); rc=$?
t "without --stack: usage error" '[ $rc -eq 2 ] && echo "$err" | grep -q -- "--stack, --fs and --workload are required"'
err=$("$B" shrink --stack "$S" --fs ext3 --workload "$T/lost8.wl" --invariant lost 2>&1); rc=$?
t "an unknown --invariant: usage error naming the choices" '[ $rc -eq 2 ] && echo "$err" | grep -q "durable, stale, bystander, consistent, atomic"'
done_testing
