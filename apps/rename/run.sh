#!/bin/sh
# run.sh fsync|nofsync UPDATES — the config-update example of blackout app (docs/apps.md):
# UPDATES times writes "version I" (800 lines, 2 blocks) to config.tmp, fsyncs it
# (fsync) or not (nofsync), renames it over config, fsyncs the directory (so the
# rename itself is durable) and acknowledges "version I".
set -u
mode=${1:-fsync} n=${2:-10}
case "$mode" in fsync | nofsync) ;; *) echo "run.sh: fsync or nofsync, not $mode" >&2 && exit 2 ;; esac
i=1
while [ "$i" -le "$n" ]; do
	yes "version $i" | head -n 800 >config.tmp || exit 1
	[ "$mode" = fsync ] && { sync config.tmp || exit 1; }
	mv config.tmp config || exit 1
	sync . || exit 1
	bo_ack "version $i" || exit 1
	i=$((i + 1))
done
