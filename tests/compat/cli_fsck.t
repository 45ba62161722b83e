#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_fsck.t — `blackout fsck` as an e2fsck user types it: e2fsck's option letters and
# combinations (-f, -a, -fy, -- , options after IMAGE), -n/-p/-y exclusive, e2fsck's
# exit codes (16 for usage), -p's preen (fixes only what e2fsck -p fixes, else stops
# with UNEXPECTED INCONSISTENCY and writes nothing), and -y listing what remains.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
B=$BLACKOUT
W=$SCRATCH

"$B" mkfs "$W/clean.img" --size 16M -q && echo hello >"$W/h" &&
	"$B" put "$W/clean.img" "$W/h" /hello.txt && "$B" mkdir -p "$W/clean.img" /d/e &&
	"$B" put "$W/clean.img" "$W/h" /d/e/f
ok $? "a 16 MiB image with /hello.txt and /d/e/f"
cp "$W/clean.img" "$W/bad.img"
"$B" corrupt "$W/bad.img" --what inode --seed 7 --count 3 >/dev/null
ok $? "corrupt --what inode --seed 7 --count 3"
cp "$W/bad.img" "$W/orig.img"

# code CMD...: the exit status of a blackout command, output discarded
code() { "$B" "$@" >"$W/out" 2>"$W/err"; echo $?; }

is "$(code fsck "$W/bad.img" -n -y)" 16 "-n -y together: refused with e2fsck's usage code 16"
cmp -s "$W/bad.img" "$W/orig.img"
ok $? "... and the image is not written"
is "$(code fsck -ny "$W/bad.img")" 16 "-ny combined: refused (16)"
is "$(code fsck -p -y "$W/bad.img")" 16 "-p -y: refused (16)"
is "$(code fsck -a -n "$W/bad.img")" 16 "-a -n: refused (16)"
grep -q "^blackout fsck: -a and -n cannot be used together$" "$W/err"
ok $? "... saying which options exclude each other"
is "$(code fsck "$W/bad.img" -y --fast)" 16 "--fast with -y: refused (16)"
is "$(code fsck -x "$W/bad.img")" 16 "an unknown short option exits 16"
is "$(code fsck --bogus "$W/bad.img")" 16 "an unknown long option exits 16"
is "$(code fsck --json=1 "$W/bad.img")" 16 "a value given to a flag exits 16"
is "$(code fsck)" 16 "no IMAGE exits 16"
is "$(code fsck "$W/bad.img" "$W/clean.img")" 16 "two images exit 16"
cmp -s "$W/bad.img" "$W/orig.img"
ok $? "no refused command wrote to the image"

is "$(code fsck -f "$W/clean.img")" 0 "-f is accepted (clean: 0)"
is "$(code fsck -fn "$W/clean.img")" 0 "-fn is accepted (clean: 0)"
is "$(code fsck "$W/clean.img" -fn --json)" 0 "options after IMAGE, combined and long"
is "$(code fsck -n -- "$W/clean.img")" 0 "-- ends the options"
is "$(code fsck -fn "$W/bad.img")" 4 "-fn on the damaged image: 4"
"$B" fsck --help >"$W/help"
for c in 0 1 2 4 8 16 32; do
	grep -q "^ *$c  " "$W/help" || { ok 1 "--help documents exit code $c"; continue; }
	ok 0 "--help documents exit code $c"
done
grep -q "^ *-f " "$W/help" && grep -q "^ *-p " "$W/help" && grep -q "^ *-a  *the same as -p" "$W/help"
ok $? "--help documents -f and -a"

# -p (and -a): the inode damage needs questions e2fsck -p would not answer
is "$(code fsck -p "$W/bad.img")" 4 "-p on damage beyond preen: exit 4"
grep -q "UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY" "$W/out"
ok $? "... saying UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY"
cmp -s "$W/bad.img" "$W/orig.img"
ok $? "... and writing nothing"
is "$(code fsck -a "$W/bad.img")" 4 "-a is -p"
# damage preen fixes: wrong free counts and a link count
cp "$W/clean.img" "$W/cnt.img"
debugfs -w -R "ssv free_blocks_count 7" "$W/cnt.img" >/dev/null 2>&1 &&
	debugfs -w -R "sif /hello.txt links_count 3" "$W/cnt.img" >/dev/null 2>&1
ok $? "free counts and a link count damaged with debugfs"
is "$(code fsck -p "$W/cnt.img")" 1 "-p fixes counts and links unasked: exit 1"
e2fsck_clean "$W/cnt.img"
ok $? "... and e2fsck -fn finds nothing after"
is "$(code fsck -p "$W/cnt.img")" 0 "-p on a clean image: 0"
# an orphan list a crash left (unlinked while open): e2fsck -p clears it unasked
cp "$W/clean.img" "$W/orph.img"
oino=$(debugfs -R "stat /hello.txt" "$W/orph.img" 2>/dev/null | head -1 | awk '{print $2}')
printf 'unlink /hello.txt\nsif <%s> links_count 0\nssv last_orphan %s\n' "$oino" "$oino" |
	debugfs -w -f - "$W/orph.img" >/dev/null 2>&1
rc=$(code fsck -p "$W/orph.img")
[ "$rc" -le 1 ] && ! grep -q "UNEXPECTED INCONSISTENCY" "$W/out"
ok $? "-p releases an orphaned inode unasked (exit $rc)"
e2fsck_clean "$W/orph.img"
ok $? "... and e2fsck -fn finds nothing after"

# issue 37's image: -n finds e2fsck's i_size problem; -y leaves it e2fsck-clean
. "$BLACKOUT_SRC/tests/compat/fsck_damage_gen.sh"
"$B" fsck -n "$W/orig.img" >"$W/out" 2>&1
grep -q "^inode 2050, i_size is 1024, should be 10240$" "$W/out"
ok $? "-n reports e2fsck's 'i_size is 1024, should be 10240' (a block past i_size, claimed twice)"
cp "$W/orig.img" "$W/w.img"
n0=$(e2fsck_nprob "$W/w.img")
"$B" fsck -y "$W/w.img" >/dev/null 2>&1
n1=$(e2fsck_nprob "$W/w.img")
[ "$n1" -le "$n0" ]
ok $? "-y never makes it worse by e2fsck's count ($n0 -> $n1)"
e2fsck_clean "$W/w.img"
ok $? "-y repairs it all, as e2fsck -fy does"

# -y lists every problem that remains after its repairs
cp "$W/orig.img" "$W/y.img"
rc=$(code fsck -y "$W/y.img")
n=$(sed -n 's/.*repaired; \([0-9]*\) problem(s) remain.*/\1/p' "$W/out")
nr=$(grep -c "^remains: " "$W/out")
[ -n "$n" ] && [ "$n" -eq "$nr" ]
ok $? "-y lists each remaining problem ($nr listed, summary says ${n:-none}, exit $rc)"
[ "$rc" -eq 1 ] || [ "$n" -gt 0 ]
ok $? "-y exits 1 only when nothing remains"
# a cleared root is beyond blackout's repairs (docs/fsck-gaps.md): what remains is listed
cp "$W/clean.img" "$W/r.img"
debugfs -w -R "clri <2>" "$W/r.img" >/dev/null 2>&1
rc=$(code fsck -y "$W/r.img")
n=$(sed -n 's/.*repaired; \([0-9]*\) problem(s) remain.*/\1/p' "$W/out")
nr=$(grep -c "^remains: " "$W/out")
[ "$rc" -eq 4 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" -eq "$nr" ]
ok $? "-y on a cleared root: exit 4, each of the $n remaining problems listed ($nr, exit $rc)"
cp "$W/clean.img" "$W/r.img"
debugfs -w -R "clri <2>" "$W/r.img" >/dev/null 2>&1
"$B" fsck -y --json "$W/r.img" >"$W/j.json" 2>/dev/null
jq -e '.remaining > 0 and (.remaining_problems | length) == .remaining and .exit == 4' \
	"$W/j.json" >/dev/null
ok $? "--json -y: remaining_problems lists each of the 'remaining' problems"
done_testing
