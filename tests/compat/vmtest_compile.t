#!/bin/sh
# vmtest_compile.t — `blackout vmtest compile`: an explorer workload as guest shell and
# data files (no VM needed); workloads that cannot be replayed in a guest are refused,
# and an explorer workload needs --fs ext3. TAP.
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
err=$("$B" vmtest compile fill-enospc "$T/c" 2>&1); rc=$?
t "fill is refused (exit 1), naming its line" '[ $rc -eq 1 ] && echo "$err" | grep -q "line 11: fill"'
err=$("$B" vmtest compile no-such-workload "$T/d" 2>&1); rc=$?
t "an unknown workload is an error" '[ $rc -ne 0 ] && [ -n "$err" ]'
err=$("$B" vmtest judge append-fsync "$T/none.img" x 2>&1); rc=$?
t "judge: COMPLETED must be a number (usage, exit 2)" '[ $rc -eq 2 ]'
err=$("$B" vmtest judge append-fsync "$T/none.img" 3 2>&1); rc=$?
t "judge: a missing image is an error naming it" '[ $rc -eq 1 ] && echo "$err" | grep -q none.img'
err=$("$B" vmtest --stack 'mem(size=64M)' --fs ext4 --workload append-fsync 2>&1); rc=$?
t "an explorer workload on ext4 is refused: blackout cannot read extents back" '[ $rc -ne 0 ] && echo "$err" | grep -q "needs --fs ext3"'
done_testing
