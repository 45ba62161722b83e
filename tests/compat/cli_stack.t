#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_stack.t — `blackout stack describe|format|probe` agree on what a spec may be
# (docs/stack-spec.md): a size the model cannot open (no sectors, part of a sector,
# part of an erase block) is refused by all three, when the spec is parsed, with the
# same message, exit status and a caret under the layer; a size it can open is taken
# by all three.
. "$(dirname "$0")/../test-lib.sh"

cd "$T" || bail "no scratch directory"
for spec in 'mem(size=0)' 'mem(size=1000)' 'flash(size=100k)' \
	'raid5 > [disk > mem(size=1000)] x3' 'file(path=nosuch.img,size=700)'; do
	first= first_rc=
	for cmd in describe format probe; do
		"$B" stack $cmd "$spec" >"$T/out" 2>"$T/err"
		rc=$?
		[ -n "$first_rc" ] || first_rc=$rc
		# a bad spec's status (docs/commands/stack.md), the same for all three
		t "stack $cmd '$spec': refused, exit $first_rc as a bad spec (exit $rc)" \
			'[ $rc -ne 0 ] && [ $rc -eq $first_rc ]'
		msg=$(head -n 1 "$T/err")
		[ -n "$first" ] || first=$msg
		printf '%s\n' "$msg" | grep -Eq 'is not a (positive )?whole number of' &&
			[ "$msg" = "$first" ] && grep -q '\^' "$T/err"
		ok $? "... when parsed, naming the size, the same for all three: $msg"
	done
done
[ ! -e nosuch.img ]
ok $? "the refused file spec created no file"

for spec in 'mem(size=8704)' 'flash(size=256k)' 'mem(size=32k,sector=4096)'; do
	for cmd in describe format probe; do
		"$B" stack $cmd "$spec" >/dev/null 2>"$T/err"
		ok $? "stack $cmd '$spec': taken $(head -n 1 "$T/err")"
	done
done
done_testing
