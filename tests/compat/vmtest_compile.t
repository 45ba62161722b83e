#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vmtest_compile.t — `blackout vmtest compile`: an explorer workload as guest shell and
# data files (no VM needed); workloads that cannot be replayed in a guest are refused;
# `blackout vmtest judge` classifies the raw lines a guest leaves (written here by
# hand, with the compiled data files' MD5s). TAP.
. "$(dirname "$0")/../test-lib.sh"

"$B" vmtest compile append-fsync "$T/a"; rc=$?
t "compile a built-in (exit 0)" '[ $rc -eq 0 ]'
t "the script has the setup and the run" 'grep -q "^bo_setup()" "$T/a/workload.sh" && grep -q "^bo_run()" "$T/a/workload.sh"'
t "one STEP marker per run step (10)" '[ "$(grep -c "say \"STEP" "$T/a/workload.sh")" = 10 ]'
t "data files hold the explorer's bytes: 24k of /keep/a" '[ "$(stat -c %s "$T/a/wl/s2")" = 24576 ]'
t "the second append starts where the first ended (1k)" 'grep -q "if=/wl/r4 bs=65536 seek=1024 " "$T/a/workload.sh"'
printf "run\ncreate /f\nwrite /f 0 4k 7\nfsync /f\n" > "$T/w.txt"
"$B" vmtest compile "$T/w.txt" "$T/b"; rc=$?
t "compile a workload file" '[ $rc -eq 0 ] && [ "$(stat -c %s "$T/b/wl/r1")" = 4096 ]'
printf "run\ncreate /it'\''s\n" > "$T/q.txt"
"$B" vmtest compile "$T/q.txt" "$T/q" && sh -n "$T/q/workload.sh"; rc=$?
t "a quote in a path stays quoted (the script parses)" '[ $rc -eq 0 ]'
# rename(2), not mv's "move into": renaming /B over the empty directory /A/C replaces it
mkdir -p "$T/mnt/A/C" "$T/mnt/B"
printf "setup\nmkdir /A\nmkdir /A/C\nmkdir /B\nrun\nrename /B /A/C\n" >"$T/r.txt"
"$B" vmtest compile "$T/r.txt" "$T/r"
(cd "$T" && eval "$(grep -o "mv -[a-zA-Z]* '/mnt/B' '/mnt/A/C'" r/workload.sh | sed "s#'/mnt#'$T/mnt#g")")
t "a rename over an empty directory replaces it (rename(2)), never moves into it" \
	'[ -d "$T/mnt/A/C" ] && [ ! -e "$T/mnt/B" ] && [ ! -e "$T/mnt/A/C/B" ]'
err=$("$B" vmtest compile fill-enospc "$T/c" 2>&1); rc=$?
t "fill is refused (exit 1), naming its line" '[ $rc -eq 1 ] && echo "$err" | grep -q "line 11: fill"'
err=$("$B" vmtest compile no-such-workload "$T/d" 2>&1); rc=$?
t "an unknown workload is an error" '[ $rc -ne 0 ] && [ -n "$err" ]'
err=$("$B" vmtest judge append-fsync "$T/none" x 2>&1); rc=$?
t "judge: CUTS must be a number (usage, exit 2)" '[ $rc -eq 2 ]'
err=$("$B" vmtest judge append-fsync "$T/none" 1 2>&1); rc=$?
t "judge: a missing directory is an error naming it" '[ $rc -eq 1 ] && echo "$err" | grep -q none'
# one cut of a small workload: the guest saw all four steps return
printf "setup\nmkdir /d\nrun\ncreate /f\nwrite /f 0 4k 7\nfsync /f\nfsync-dir /\n" >"$T/j.txt"
"$B" vmtest compile "$T/j.txt" "$T/j" >/dev/null
printf 'BO:STEP 0\nBO:STEP 1\nBO:STEP 2\nBO:STEP 3\n' >"$T/j/cut1.markers.txt"
echo "observed 1 point 9" >"$T/j/cut1.host"
obs() { # obs MD5: the checking guest's lines with /f's one chunk
	printf 'BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir /d\nBO:OBS file 4096 %s /f\n' "$1"
	printf 'BO:OBS umount 0\nBO:OBS fsck 0\nBO:OBS end\n'
}
obs "$(md5sum <"$T/j/wl/r1" | cut -c1-32)" >"$T/j/chk1.markers.txt"
out=$("$B" vmtest judge "$T/j.txt" "$T/j" 1 --explore-json "$T/j.json" 2>&1); rc=$?
t "judge: the synced bytes are there: ok" '[ $rc -eq 0 ] && echo "$out" | grep -q "cut  1 at write    9: ok"'
t "judge: a summary line and an explorer-format result" 'tail -n 1 "$T/j/verdicts.jsonl" | grep -q "\"ok\":1" && "$B" explore --merge "$T/j.json" >/dev/null'
obs "$(head -c 4096 /dev/zero | md5sum | cut -c1-32)" >"$T/j/chk1.markers.txt"
out=$("$B" vmtest judge "$T/j.txt" "$T/j" 1 2>&1); rc=$?
t "judge: the synced chunk reads as zeros: durable, silent" '[ $rc -eq 0 ] && echo "$out" | grep -q "durable (SILENT)"'
printf 'BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir /d/e\nBO:OBS end\n' >"$T/j/chk1.markers.txt"
out=$("$B" vmtest judge "$T/j.txt" "$T/j" 1 2>&1); rc=$?
t "judge: bad observation lines leave the cut unclassified, naming the line" '[ $rc -eq 0 ] && echo "$out" | grep -q "unclassified.*line 3"'
err=$("$B" vmtest --stack 'mem(size=64M)' --fs ext4 --workload sh:/dev/null 2>&1); rc=$?
t "sh:FILE is refused, pointing at workload files" '[ $rc -ne 0 ] && echo "$err" | grep -q "docs/workloads.md"'
# the steps only a guest kernel runs: through the guest's helper (bo-observe fsop) and
# shell fds, with the payload of each write; the appends after them placed by the dry run
printf 'setup\ncreate /f\nwrite /f 0 16k\nrun\nfalloc /f zero-range 0 32k\nappend /f 1k\nfalloc /f punch-hole 4k 4k\nsymlink /f /l\nsetxattr /f user.k v1\nremovexattr /f user.k\ndwrite /f 0 4k\nmwrite /f 1k 100\nosync /f 8k 4k\ndwrite-osync /f 0 4k\nopen h /f\nopen g /f\nunlink /f\nfsync-fd g\nfdatasync-fd h\nclose h\nclose g\n' >"$T/n.txt"
"$B" vmtest compile "$T/n.txt" "$T/n" && sh -n "$T/n/workload.sh"; rc=$?
t "the new steps compile to a script that parses" '[ $rc -eq 0 ]'
t "falloc through the helper, mode by name" 'grep -q "bo-observe fsop falloc zero-range 0 32768 '\''/mnt/f'\''" "$T/n/workload.sh"'
t "the append after zero-range starts at 32k" 'grep -q "if=/wl/r1 bs=65536 seek=32768 " "$T/n/workload.sh"'
t "O_DIRECT, mmap, O_SYNC and O_DIRECT|O_SYNC writes with their bytes" 'grep -q "fsop write direct /wl/r6 0 " "$T/n/workload.sh" && grep -q "fsop write mmap /wl/r7 1024 " "$T/n/workload.sh" && grep -q "fsop write sync /wl/r8 8192 " "$T/n/workload.sh" && grep -q "fsop write direct-sync /wl/r9 0 " "$T/n/workload.sh" && [ "$(stat -c %s "$T/n/wl/r7")" = 100 ]'
t "two named fds get shell fds 4 and 5 (3 is the guest's markers); fsync goes through the fd" 'grep -q "exec 4<'\''/mnt/f'\''" "$T/n/workload.sh" && grep -q "exec 5<'\''/mnt/f'\''" "$T/n/workload.sh" && grep -q "fsop fsync 5 " "$T/n/workload.sh" && grep -q "fsop fdatasync 4 " "$T/n/workload.sh" && grep -q "exec 4<&-" "$T/n/workload.sh" && ! grep -q "exec 3" "$T/n/workload.sh"'
t "symlink and xattrs" 'grep -q "ln -s '\''/mnt/f'\'' '\''/mnt/l'\''" "$T/n/workload.sh" && grep -q "fsop setxattr '\''/mnt/f'\'' '\''user.k'\'' '\''v1'\''" "$T/n/workload.sh"'
printf 'setup\ncreate /f\nrun\nfalloc /f collapse 0 4k\n' >"$T/e.txt"
err=$("$B" vmtest compile "$T/e.txt" "$T/e" 2>&1); rc=$?
t "a collapse the kernel would refuse (EINVAL) is an error naming its line" '[ $rc -eq 1 ] && echo "$err" | grep -q "line 4 (falloc /f): Invalid argument"'
done_testing
