#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh SYNC FPW COMMITS [CLUSTER] — the PostgreSQL example of blackout app
# (docs/apps.md): makes a cluster in pg/, starts the server with synchronous_commit=SYNC
# and full_page_writes=FPW (on|off), then one psql session commits COMMITS numbered rows
# of 1900 bytes (four to a page, so rows land in both 4 KiB halves of an 8 KiB page) with
# a CHECKPOINT after each, and acknowledges "commit I" from psql's \! once the server
# has answered the COMMIT: the ack is the server's reply, not the client's write.
# CLUSTER: "initdb" (the default) or "initdb-checksums" runs initdb in the guest (with
# data checksums); a path to a tar of a fresh cluster (template.sh, carried with --with)
# unpacks it instead, which is minutes faster under TCG. Needs Debian's postgresql-15
# and util-linux's setpriv carried with --with (docs/apps.md lists them); the server
# runs as the user pg, as postgres refuses root.
set -u
sync=${1:-on} fpw=${2:-on} n=${3:-10} cluster=${4:-initdb}
PGBIN=/usr/lib/postgresql/15/bin PGUID=70
# util-linux's setpriv (--with /usr/bin/setpriv): busybox sh prefers its own applet of
# that name, which cannot change user ids
SETPRIV=/app/bin/setpriv
[ -x $SETPRIV ] || SETPRIV=setpriv
case "$sync$fpw" in onon | onoff | offon | offoff) ;; *)
	echo "run.sh: SYNC and FPW are on or off, not '$sync' '$fpw'" >&2
	exit 2
	;;
esac
case "$n" in '' | *[!0-9]*) echo "run.sh: COMMITS is a number, not '$n'" >&2 && exit 2 ;; esac
# postgres refuses root: a user for it, and a /tmp it can make its socket in
grep -qs '^pg:' /etc/passwd || echo "pg:x:$PGUID:$PGUID:pg:/tmp:/bin/sh" >>/etc/passwd
grep -qs '^pg:' /etc/group || echo "pg:x:$PGUID:" >>/etc/group
chmod 1777 /tmp
as_pg() { $SETPRIV --reuid=$PGUID --regid=$PGUID --clear-groups -- "$@"; }

case "$cluster" in
initdb | initdb-checksums)
	mkdir -m 700 pg && chown $PGUID:$PGUID pg || exit 1
	# -N: initdb's own fsyncs are not part of the experiment; the sync below makes it
	# durable
	sums=
	[ "$cluster" = initdb ] || sums=-k
	as_pg "$PGBIN/initdb" -D "$PWD/pg" -U pg -A trust -E UTF8 --locale=C -N \
		--wal-segsize=1 $sums >/tmp/initdb.log 2>&1 || {
		tail -n 3 /tmp/initdb.log
		exit 1
	}
	;;
*)
	[ -f "$cluster" ] || {
		echo "run.sh: no cluster tar $cluster (carry its directory with --with)" >&2
		exit 2
	}
	tar -xf "$cluster" && [ -f pg/PG_VERSION ] && chown -R $PGUID:$PGUID pg || {
		echo "run.sh: $cluster does not hold a cluster in pg/" >&2
		exit 1
	}
	;;
esac
# small; no JIT (its library is not carried), no autovacuum (the run's writes are the
# client's and the checkpoints'); GMT, which the server knows without the zoneinfo files
# the guest lacks (a cluster made on the host names the host's zone)
cat >>pg/postgresql.conf <<CONF
listen_addresses = ''
unix_socket_directories = '/tmp'
max_connections = 8
shared_buffers = 8MB
dynamic_shared_memory_type = mmap
max_wal_size = 32MB
min_wal_size = 2MB
jit = off
autovacuum = off
synchronous_commit = $sync
full_page_writes = $fpw
timezone = 'GMT'
log_timezone = 'GMT'
CONF
sync
# not through as_pg: $! must be the server itself (setpriv execs it), to stop it
$SETPRIV --reuid=$PGUID --regid=$PGUID --clear-groups -- "$PGBIN/postgres" -D "$PWD/pg" \
	>/tmp/pg.log 2>&1 &
pid=$!
t=0
until "$PGBIN/pg_isready" -q -h /tmp -U pg -d postgres; do
	kill -0 $pid 2>/dev/null && [ $t -lt 600 ] || {
		echo "the server did not start: $(grep -E 'FATAL|PANIC' /tmp/pg.log | head -n 1)"
		exit 1
	}
	usleep 100000
	t=$((t + 1))
done
{
	echo '\set ON_ERROR_STOP 1'
	echo 'CREATE EXTENSION amcheck;'
	echo 'CREATE TABLE t(id int PRIMARY KEY, v text NOT NULL);'
	echo 'ALTER TABLE t ALTER v SET STORAGE PLAIN;'
	echo 'CREATE TABLE u(k int NOT NULL, n int NOT NULL, pad text NOT NULL);'
	echo "INSERT INTO u SELECT k, 0, repeat('u', 150) FROM generate_series(1, 64) k;"
	echo 'CHECKPOINT;'
	echo '\! bo_ack ready || touch /tmp/ack.failed'
	i=1
	while [ $i -le "$n" ]; do
		# each commit also rewrites every row of u (two pages): a new version of each
		# row, the old ones' headers marked and pruned, in both halves of the pages
		echo "BEGIN; INSERT INTO t VALUES ($i, lpad('', 1900, md5('$i')));"
		echo "UPDATE u SET n = $i; COMMIT;"
		echo "\\! bo_ack 'commit $i' || touch /tmp/ack.failed"
		echo 'CHECKPOINT;'
		i=$((i + 1))
	done
} >/tmp/client.sql
# psql runs as root (bo_ack writes the marker device) and logs in as pg
"$PGBIN/psql" -X -q -h /tmp -U pg -d postgres -f /tmp/client.sql
rc=$?
kill -INT $pid
wait $pid
[ $rc = 0 ] || {
	echo "psql exited $rc: $(grep -E 'ERROR|FATAL|PANIC' /tmp/pg.log | head -n 1)"
	exit 1
}
[ ! -e /tmp/ack.failed ] || {
	echo "bo_ack failed"
	exit 1
}
