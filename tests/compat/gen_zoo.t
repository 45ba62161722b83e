#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# gen_zoo.t — the bug zoo: `blackout workloads` lists each published reproducer with
# its source test and fix commit; each compiles for a guest kernel into a script that
# parses; blackout's ext3 runs the ones it can (g782 clean with flushes honoured, its
# fsync'd data lost under a cache that ignores them) and refuses the others by name.
# Running them under kernels 6.1 and 6.12 waits for the real-kernel library call. TAP.
. "$(dirname "$0")/../test-lib.sh"

out=$("$B" workloads); rc=$?
t "workloads lists seven zoo lines, each name first" '[ $rc -eq 0 ] && [ "$(echo "$out" | grep -c "^g7[0-9][0-9]-[a-z-]* .* \[xfstests generic/")" = 7 ]'
for n in 764 771 779 782 784 785 737; do
	t "generic/$n is listed with a fix commit" 'echo "$out" | grep -q "^g$n-.*\[xfstests generic/$n; fixed by [a-z0-9]* [0-9a-f]\{12\}: .*\]$"'
done
bad=0
for w in g764-unlink-fsync-fd g771-unlink-fsync-extents g779-symlink-rename g782-link-new-dir \
	g784-dir-rename-reuse g785-rename-new-dir g737-osync-dio-size; do
	"$B" vmtest compile "$w" "$T/$w" >/dev/null 2>&1 && sh -n "$T/$w/workload.sh" || bad=$((bad + 1))
done
t "every zoo workload compiles for the guest into a script that parses" '[ $bad -eq 0 ]'
t "generic/737's second write is O_DIRECT|O_SYNC through the helper" 'grep -q "fsop write direct-sync /wl/r3 0 " "$T/g737-osync-dio-size/workload.sh"'
t "generic/764 fsyncs through the shell fd after the unlink" 'grep -A3 "rm '\''/mnt/testdir/foo'\''" "$T/g764-unlink-fsync-fd/workload.sh" | grep -q "fsop fsync 4"'
S='cache(size=64k,flush=honor) > disk > mem(size=16M)'
out=$("$B" explore --stack "$S" --fs ext3 --workload g782-link-new-dir --max-states 200 2>/dev/null); rc=$?
t "g782 on blackout's ext3, flushes honoured: no failing state" '[ $rc -eq 0 ] && echo "$out" | grep -q ", 0 failing"'
S='cache(size=64k,flush=ignore) > disk > mem(size=16M)'
out=$("$B" explore --stack "$S" --fs ext3 --workload g782-link-new-dir --max-states 200 2>/dev/null)
t "g782 under a cache that ignores flushes: durable broken" 'echo "$out" | grep -Eq "^  durable +[1-9]"'
err=$("$B" explore --stack "$S" --fs ext3 --workload g764-unlink-fsync-fd --max-states 20 2>&1); rc=$?
t "g764 is refused by the model, naming the step" '[ $rc -ne 0 ] && echo "$err" | grep -q "line 12: open: not supported by the model"'
# the same refusal when the unsupported step is in the set-up, which runs before recording
printf 'setup\ncreate /f\nsetxattr /f user.a 1\nrun\nwrite /f 0 4k\nfsync /f\n' >"$T/sx.wl"
err=$("$B" explore --stack "$S" --fs ext3 --workload "$T/sx.wl" --max-states 5 2>&1); rc=$?
t "a set-up step the model lacks is refused by the model, naming the step" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "line 3: setxattr: not supported by the model"'
done_testing
