#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_man.t — man pages made from the option tables (issue 37, item 11): each page of
# a command that parses with a table has NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT
# STATUS, EXAMPLES and SEE ALSO, its options as the command's --help lists them,
# renders under 80 columns, and `make man` makes them again when PREFIX changes. TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
need_tool man
M=$SCRATCH/man
SOURCE_DATE_EPOCH=0 "$BLACKOUT_SRC/scripts/gen-man" "$B" "$M" 9.9 /opt/doc/blackout
ok $? "scripts/gen-man writes the pages"

for c in matrix corrupt log stack mkfs ls stat cat get put mkdir rm rmdir mv ln symlink \
	truncate df explore workloads jbd raid mdhole fsck probe app vmobserve vmtest gen shrink; do
	f=$M/blackout-$c.1
	txt=$(MANWIDTH=80 man -l "$f" 2>&1)
	miss=
	for sec in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" EXAMPLES "SEE ALSO"; do
		printf '%s\n' "$txt" | grep -q "^$sec\$" || miss="$miss $sec"
	done
	[ -z "$miss" ]
	ok $? "blackout-$c.1 has every section${miss:+ (missing:$miss)}"
	wide=$(printf '%s\n' "$txt" | awk 'length > 80' | wc -l)
	[ "$wide" -eq 0 ]
	ok $? "blackout-$c.1 renders within 80 columns ($wide lines wider)"
	# every long option of the command's --help is on its page
	opts=$("$B" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
	lost=
	for o in $opts; do printf '%s\n' "$txt" | grep -q -- "$o" || lost="$lost $o"; done
	[ -z "$lost" ]
	ok $? "blackout-$c.1 documents the options of $c --help${lost:+ (missing:$lost)}"
done
txt=$(MANWIDTH=80 man -l "$M/blackout-mkfs.1" 2>&1)
printf '%s\n' "$txt" | grep -q '^OPTIONS$' && printf '%s\n' "$txt" | grep -q -- '-b, --block-size BLOCKSIZE' &&
	printf '%s\n' "$txt" | grep -q '2      Usage error' && printf '%s\n' "$txt" | grep -q '/opt/doc/blackout'
ok $? "blackout-mkfs.1: OPTIONS from the table, the exit statuses, the DOCDIR given"
MANWIDTH=80 man -l "$M/blackout.1" 2>&1 | grep -q 'fsck.*keeps.*e2fsck' 
ok $? "blackout.1 says fsck keeps e2fsck's exit codes"
txt=$(MANWIDTH=80 man -l "$M/blackout-fsck.1" 2>&1)
printf '%s\n' "$txt" | grep -Eq '^ *16 +usage or syntax error' && ! printf '%s\n' "$txt" | grep -q '2      Usage error'
ok $? "blackout-fsck.1 gives e2fsck's exit codes, not the shared table"

# make man again when PREFIX changes: the stamp is keyed by DOCDIR
cd "$BLACKOUT_SRC" || exit 1
BD=${BUILD:-$BLACKOUT_SRC/build}
make -s BUILD="$BD" PREFIX="$SCRATCH/p1" man >/dev/null 2>&1 &&
	tr -d '\\' <"$BD/man/blackout-ls.1" | grep -qF "$SCRATCH/p1/share/doc/blackout"
ok $? "make man PREFIX=p1 names p1's DOCDIR"
make -q BUILD="$BD" PREFIX="$SCRATCH/p1" man >/dev/null 2>&1
ok $? "and is up to date for the same PREFIX"
make -q BUILD="$BD" PREFIX="$SCRATCH/p2" man >/dev/null 2>&1
[ $? -ne 0 ]
ok $? "but not for another PREFIX"
make -s BUILD="$BD" PREFIX="$SCRATCH/p2" man >/dev/null 2>&1 &&
	tr -d '\\' <"$BD/man/blackout-ls.1" | grep -qF "$SCRATCH/p2/share/doc/blackout"
ok $? "make man PREFIX=p2 makes the pages again with p2's DOCDIR"
make -s BUILD="$BD" man >/dev/null 2>&1
done_testing
