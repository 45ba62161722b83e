#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check.sh DIR ACKS — the PostgreSQL example's checker (docs/apps.md): starts the
# recovered cluster DIR/pg (its own WAL recovery) and judges it. Exit 2 when the server
# does not start or a query fails (a data checksum failure among them), when amcheck
# finds a damaged heap or index, or when a row holds other bytes than were committed:
# corruption PostgreSQL or its tools report. Exit 1 when a commit acknowledged in ACKS
# ("commit I", one a line, after "ready") is missing. (Each commit also set every row
# of u to its number: rows of u disagreeing with each other or with t are corruption.) Nothing acknowledged: nothing to
# judge (initdb and the set-up make no promise).
set -u
data=$1/pg acks=$2
PGBIN=/usr/lib/postgresql/15/bin PGUID=70
# util-linux's setpriv (--with /usr/bin/setpriv): busybox sh prefers its own applet of
# that name, which cannot change user ids
SETPRIV=/app/bin/setpriv
[ -x $SETPRIV ] || SETPRIV=setpriv
[ -s "$acks" ] || {
	echo "nothing acknowledged yet"
	exit 0
}
[ -f "$data/PG_VERSION" ] || {
	echo "no cluster in pg/, though $(wc -l <"$acks") acknowledgements were made"
	exit 1
}
grep -qs '^pg:' /etc/passwd || echo "pg:x:$PGUID:$PGUID:pg:/tmp:/bin/sh" >>/etc/passwd
grep -qs '^pg:' /etc/group || echo "pg:x:$PGUID:" >>/etc/group
chmod 1777 /tmp
rm -f /tmp/.s.PGSQL.5432 /tmp/.s.PGSQL.5432.lock
$SETPRIV --reuid=$PGUID --regid=$PGUID --clear-groups -- "$PGBIN/postgres" -D "$data" \
	>/tmp/check-pg.log 2>&1 &
pid=$!
stop() {
	kill -QUIT $pid 2>/dev/null
	wait $pid 2>/dev/null
}
t=0
until "$PGBIN/pg_isready" -q -h /tmp -U pg -d postgres; do
	if ! kill -0 $pid 2>/dev/null; then
		wait $pid
		rc=$?
		why=$(grep -E 'FATAL|PANIC' /tmp/check-pg.log | head -n 1)
		echo "the server did not start (exit $rc): ${why:-$(tail -n 1 /tmp/check-pg.log)}"
		exit 2
	fi
	usleep 100000
	t=$((t + 1))
done
# one psql: rows whose bytes are not what was committed, amcheck's findings in the heaps
# and the primary key, u not 64 rows all set by the last commit of t, then every id
out=$("$PGBIN/psql" -X -q -A -t -h /tmp -U pg -d postgres -v ON_ERROR_STOP=1 2>&1 <<'SQL'
SELECT 'damaged row ' || id FROM t WHERE v IS DISTINCT FROM lpad('', 1900, md5(id::text));
SELECT 'heap block ' || blkno || ': ' || msg FROM verify_heapam('t') LIMIT 3;
SELECT bt_index_parent_check('t_pkey', true);
SELECT 'heap u block ' || blkno || ': ' || msg FROM verify_heapam('u') LIMIT 3;
SELECT 'damaged u: ' || count(*) || ' rows, ' || count(DISTINCT k) || ' keys, n '
	|| coalesce(min(n), -1) || '..' || coalesce(max(n), -1) || ', max id '
	|| (SELECT coalesce(max(id), 0) FROM t) FROM u
	HAVING count(*) <> 64 OR count(DISTINCT k) <> 64 OR min(n) <> max(n)
	OR min(n) <> (SELECT coalesce(max(id), 0) FROM t);
SELECT 'id ' || id FROM t;
SQL
)
rc=$?
stop
if [ $rc != 0 ]; then
	echo "query failed: $(echo "$out" | grep -E 'ERROR|FATAL|PANIC' | head -n 1)"
	exit 2
fi
bad=$(echo "$out" | grep -E '^(damaged|heap|index)' | head -n 3 | tr '\n' ';')
[ -z "$bad" ] || {
	echo "corrupt: $bad"
	exit 2
}
ids=" $(echo "$out" | sed -n 's/^id //p' | tr '\n' ' ')"
lost=
while read -r word i; do
	[ "$word" = commit ] || continue
	case "$ids" in *" $i "*) ;; *) lost="$lost $i" ;; esac
done <"$acks"
[ -z "$lost" ] && exit 0
echo "acknowledged commits missing:$lost"
exit 1
