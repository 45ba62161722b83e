#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh RECORDS — the append-only log example of blackout app (docs/apps.md), the shape
# of a write-ahead log: RECORDS times appends "I MD5 PAYLOAD" (MD5 of the payload) to
# app.log, fdatasyncs it and acknowledges "record I".
set -u
n=${1:-20}
i=1
while [ "$i" -le "$n" ]; do
	p=$(yes "record $i" | head -n 30 | tr '\n' ' ')
	s=$(printf '%s' "$p" | md5sum)
	printf '%s %s %s\n' "$i" "${s%% *}" "$p" >>app.log || exit 1
	sync -d app.log || exit 1
	bo_ack "record $i" || exit 1
	i=$((i + 1))
done
