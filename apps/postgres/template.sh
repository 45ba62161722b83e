#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# template.sh DIR [checksums] — runs initdb on the host (as the user postgres when run as
# root: initdb refuses root) and leaves DIR/cluster.tar, a fresh cluster for run.sh to
# start from instead of running initdb in the guest, where it takes minutes under TCG
# (docs/apps.md). Carry it with --with DIR (its absolute path) and pass DIR/cluster.tar
# to run.sh. "checksums": the cluster has data checksums (initdb -k).
set -eu
dir=$1 sums=${2:-}
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/initdb" ] || {
	echo "template.sh: no $PGBIN/initdb (Debian's postgresql-15)" >&2
	exit 1
}
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -m 700 "$tmp/pg"
run=
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$tmp" "$tmp/pg"
	run="setpriv --reuid=postgres --regid=postgres --clear-groups --"
fi
$run "$PGBIN/initdb" -D "$tmp/pg" -U pg -A trust -E UTF8 --locale=C -N --wal-segsize=1 \
	${sums:+-k} >"$tmp/initdb.log" 2>&1 || {
	tail -n 3 "$tmp/initdb.log" >&2
	exit 1
}
tar -C "$tmp" -cf "$dir/cluster.tar" pg
