#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh JOURNAL SYNC COMMITS — the SQLite example of blackout app (docs/apps.md): makes
# app.db in journal_mode JOURNAL (wal, truncate, persist, delete), then COMMITS times one
# sqlite3 process inserts row I with PRAGMA synchronous=SYNC (full, off, extra...) and,
# once it returned, acknowledges "commit I" (bo_ack). Needs --with /usr/bin/sqlite3.
set -u
mode=${1:-wal} sync=${2:-full} n=${3:-20}
sqlite3 app.db "PRAGMA journal_mode=$mode;
CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT NOT NULL);" >/dev/null || exit 1
i=1
while [ "$i" -le "$n" ]; do
	# journal_mode=wal stays with the file; a rollback mode is the connection's own
	sqlite3 app.db "PRAGMA journal_mode=$mode; PRAGMA synchronous=$sync;
INSERT INTO t VALUES($i, hex(randomblob(700)));" >/dev/null || exit 1
	bo_ack "commit $i" || exit 1
	i=$((i + 1))
done
