#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# spdx_check.t — the licence: LICENSE is the GPL version 2 text, debian/copyright says
# GPL-2.0-or-later in DEP-5 form, and scripts/spdx-check finds files without the SPDX
# line, adds it in each file type's comment style (after a #! line), leaves the rest of
# the file as it was, and refuses a line naming another licence.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
S="$BLACKOUT_SRC/scripts/spdx-check"
ID='SPDX-License-Identifier: GPL-2.0-or-later'

head -n 2 "$BLACKOUT_SRC/LICENSE" | grep -q 'GNU GENERAL PUBLIC LICENSE' &&
	grep -q 'Version 2, June 1991' "$BLACKOUT_SRC/LICENSE" &&
	grep -q 'TERMS AND CONDITIONS FOR COPYING, DISTRIBUTION AND MODIFICATION' "$BLACKOUT_SRC/LICENSE"
ok $? "LICENSE holds the GNU GPL version 2 text"
C="$BLACKOUT_SRC/debian/copyright"
head -n 1 "$C" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' &&
	grep -qx 'Files: \*' "$C" && grep -qx 'License: GPL-2.0-or-later' "$C" &&
	grep -q '^ .*either version 2 of the License, or$' "$C" &&
	! grep -q 'unspecified' "$C"
ok $? "debian/copyright: DEP-5, every file GPL-2.0-or-later, with the licence's notice"

d="$SCRATCH/tree"
mkdir -p "$d/src" "$d/docs"
printf '/* a.c — a file. */\nint a;\n' >"$d/src/a.c"
printf '/* a.h — its header. */\nextern int a;\n' >"$d/src/a.h"
printf '#!/bin/sh\n# run — a script.\necho hi\n' >"$d/run"
printf '# Makefile — builds.\nall:\n' >"$d/Makefile"
printf '# Notes\n' >"$d/docs/notes.md"
chmod +x "$d/run"
cp "$d/src/a.c" "$SCRATCH/a.c.orig"
(cd "$d" && "$S" src/a.c src/a.h run Makefile docs/notes.md) >"$SCRATCH/list.txt"
rc=$?
sed 's/^/#   /' "$SCRATCH/list.txt"
[ $rc -eq 1 ] && [ "$(wc -l <"$SCRATCH/list.txt")" -eq 4 ] && ! grep -q notes.md "$SCRATCH/list.txt"
ok $? "untagged C, header, script and Makefile listed (exit 1); documentation not tagged"
(cd "$d" && "$S" --add src/a.c src/a.h run Makefile docs/notes.md) 2>/dev/null
ok $? "--add tags them"
[ "$(head -n 1 "$d/src/a.c")" = "// $ID" ] && [ "$(head -n 1 "$d/src/a.h")" = "/* $ID */" ] &&
	[ "$(head -n 1 "$d/run")" = '#!/bin/sh' ] && [ "$(sed -n 2p "$d/run")" = "# $ID" ] &&
	[ "$(head -n 1 "$d/Makefile")" = "# $ID" ] && [ "$(cat "$d/docs/notes.md")" = '# Notes' ]
ok $? "each file type gets its comment style, the script's after its #! line"
tail -n +2 "$d/src/a.c" | cmp -s - "$SCRATCH/a.c.orig" && [ -x "$d/run" ] && "$d/run" | grep -qx hi
ok $? "the rest of each file is unchanged and the script still runs"
(cd "$d" && "$S" src/a.c src/a.h run Makefile docs/notes.md)
ok $? "a tagged tree checks clean (exit 0)"
(cd "$d" && "$S" --add src/a.c) 2>/dev/null && [ "$(grep -c SPDX "$d/src/a.c")" -eq 1 ]
ok $? "--add twice adds nothing"
printf '// SPDX-License-Identifier: MIT\nint b;\n' >"$d/src/b.c"
out=$(cd "$d" && "$S" --add src/b.c 2>/dev/null)
[ $? -eq 1 ] && printf '%s' "$out" | grep -q 'b.c: names another licence'
ok $? "a file naming another licence is refused, even with --add"
"$S" --bogus 2>/dev/null
[ $? -eq 2 ]
ok $? "a usage error exits 2"
done_testing
