#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check.sh DIR ACKS — the SQLite example's checker (docs/apps.md): exit 2 when
# PRAGMA integrity_check is not "ok" (corruption SQLite would report), 1 when a commit
# acknowledged in ACKS ("commit I", one a line) is not in DIR/app.db, else 0.
db=$1/app.db
n=$(wc -l <"$2")
if [ ! -f "$db" ]; then
	[ "$n" = 0 ] && exit 0
	echo "no app.db, though $n commits were acknowledged"
	exit 1
fi
# one sqlite3 process (each costs a dynamic load in the guest): the check, then the ids
# (its errors apart: before the first commit the table may not exist yet)
out=$(sqlite3 "$db" 'PRAGMA integrity_check;' 'SELECT id FROM t;' 2>/tmp/check.err)
r=$(echo "$out" | head -n 1)
[ "$r" = ok ] || {
	echo "integrity_check: $(echo "$out" | head -n 2 | tr '\n' ' ')$(head -n 1 /tmp/check.err)"
	exit 2
}
[ "$n" = 0 ] && exit 0
ids=" $(echo "$out" | tail -n +2 | tr '\n' ' ')"
lost=
while read -r word i; do
	case "$ids" in *" $i "*) ;; *) lost="$lost $i" ;; esac
done <"$2"
[ -z "$lost" ] && exit 0
echo "acknowledged commits missing:$lost"
exit 1
