#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_exit.t — the exit statuses of docs/cli.md, command by command (issue 37,
# item 9): 0 done, 1 failed (here: a file that does not exist), 2 usage error (an
# unknown option, a malformed value), 3 explore found a broken state. fsck keeps
# e2fsck's codes and is checked by its own tests. TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
cd "$SCRATCH" || exit 1
"$B" mkfs -q a.img --size 8M || bail "mkfs failed"
STACK='disk > mem(size=16M)'

# expect STATUS DESCRIPTION ARGS...: the exit status, and for 1 and 2 one reason on
# stderr that starts with "blackout CMD"; for 2 also the pointer to --help
expect() {
	want=$1 d=$2; shift 2
	timeout 60 "$B" "$@" >out 2>err; rc=$?
	good=1
	[ $rc -eq "$want" ] || good=0
	if [ "$want" -ne 0 ] && [ "$want" -ne 3 ]; then
		head -1 err | grep -q "^blackout $1" || good=0
	fi
	if [ "$want" -eq 2 ]; then grep -q "^Try 'blackout $1.* --help'" err || good=0; fi
	[ $good -eq 1 ]
	ok $? "$* -> $want ($d; exit $rc: $(head -1 err))"
}

# one line per command: the bad value, the missing file (ARGS split on '|')
while IFS='|' read -r cmd badval missing; do
	[ -n "$cmd" ] || continue
	# shellcheck disable=SC2086
	expect 2 "unknown option" $cmd --no-such-option
	# shellcheck disable=SC2086
	[ -n "$badval" ] && expect 2 "malformed value" $cmd $badval
	# shellcheck disable=SC2086
	[ -n "$missing" ] && expect 1 "missing file" $cmd $missing
done <<'TABLE'
ls|-o data=bogus a.img|nosuch.img
stat|-o commit=x a.img /|nosuch.img /x
cat||nosuch.img /x
get||nosuch.img /x out
put|-o data=bogus a.img out /x|nosuch.img out /x
mkdir||nosuch.img /d
rm||nosuch.img /x
rmdir||nosuch.img /d
mv||nosuch.img /a /b
ln||nosuch.img /a /b
symlink||nosuch.img a /b
truncate|a.img /x 12Q|nosuch.img /x 1k
df||nosuch.img
mkfs|-b 3000 x.img --size 8M|nodir/x.img --size 8M
corrupt|a.img --what nothing --seed 1|nosuch.img --what inode --seed 1
log dump||nosuch.log
stack describe|mem(sise=1)|
stack probe|mem(size=64k|
jbd recover|--map 1-2 --block-size 1000 a.img|nosuch.img
jbd write|--barrier 2 a.img commit|nosuch.img commit
raid hole|--count x mem(size=64k)|
raid layout|5 0|
workloads|check|
workloads check||nosuch.wl
workloads show||nosuch
explore|--stack mem(size=16M) --fs ext4 --workload append-fsync|--stack mem(size=16M) --fs ext3 --workload ./nosuch.wl
explore --merge||nosuch.json
matrix|--jobs 0|
matrix --merge||nosuch.json
mdhole|--log x.log --max-states 0 --store d|--log nosuch.log --store d
probe write|a.img --log x.log --size 3|
probe verify|a.img --log|nosuch.img --log nosuch.log
probe listen|--port 0 --out x.log|
app|--jobs 0 --checker /bin/true /bin/true|
vmobserve|store 0 --fs ext4|
vmobserve delta|a.img a.img|nosuch.img a.img x.delta
vmtest|--stack mem(size=64M) --fs ext4 --workload create --jobs 0|
vmtest points|1 x 3|
vmtest judge|append-fsync nodir x|append-fsync nodir 1
TABLE

# app: options end at PROGRAM, so PROGRAM's own -v is not taken for app's option
"$B" app --checker /bin/true ./nosuch-prog -v >out 2>err
[ $? -eq 1 ] && grep -q "program ./nosuch-prog" err
ok $? "app gives -v after PROGRAM to PROGRAM ($(head -1 err))"

# --help of a command or action: printed, exit 0, and nothing is run after it
for c in "fsck" "probe write" "probe spec" "app" "vmobserve" "vmobserve delta" "vmtest" "vmtest compile" "vmtest points"; do
	# shellcheck disable=SC2086
	"$B" $c --help >out 2>err
	[ $? -eq 0 ] && [ ! -s err ] && grep -q "^usage: blackout $c" out
	ok $? "$c --help: exit 0, the help, nothing on stderr ($(head -1 err))"
done

# the statuses that say something
expect 2 "quick and full conflict" matrix --quick --full
expect 2 "unknown row" matrix --rows bogus
expect 2 "max-states 0" explore --stack "$STACK" --fs ext3 --workload append-fsync --max-states 0
expect 2 "a stack spec that does not parse" explore --stack 'mem(sise=1)' --fs ext3 --workload append-fsync
expect 2 "no such geometry" raid layout 1 2
"$B" no-such-command >/dev/null 2>err
[ $? -eq 2 ] && grep -q "^blackout: unknown command 'no-such-command'" err
ok $? "an unknown command -> 2 ($(head -1 err))"
expect 2 "an unknown action" jbd bogus
expect 0 "help" ls --help
expect 0 "help of an action" stack probe --help
expect 0 "version" --version
expect 1 "corrupt has nothing of that kind to change" corrupt a.img --what htree --seed 1
"$B" explore --stack "cache(flush=ignore) > $STACK" --fs ext3,barrier=1 --workload append-fsync \
	--max-states 300 --quiet >/dev/null 2>&1
is "$?" 3 "explore that finds a broken state exits 3"
done_testing
