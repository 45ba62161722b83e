#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check.sh DIR ACKS — the append-only log's checker (docs/apps.md): records 1..K (K the
# acknowledged) must be there, in order, each with its checksum right. A bad record
# inside that prefix: exit 2 (corruption); the log ending before record K: exit 1
# (lost); anything after the prefix (a torn tail) is allowed, as a log's reader drops it.
k=$(wc -l <"$2")
f=$1/app.log
[ "$k" = 0 ] && exit 0
[ -f "$f" ] || { echo "no app.log, though $k records were acknowledged"; exit 1; }
i=1
while [ "$i" -le "$k" ] && IFS= read -r line; do
	set -- $line
	seq=$1 sum=$2
	p=${line#* * }
	s=$(printf '%s' "$p" | md5sum)
	[ "$seq" = "$i" ] && [ "$sum" = "${s%% *}" ] ||
		{ echo "record $i (acknowledged) is damaged: $(echo "$line" | head -c 40)"; exit 2; }
	i=$((i + 1))
done <"$f"
[ "$i" -gt "$k" ] && exit 0
echo "the log ends at record $((i - 1)); $k were acknowledged"
exit 1
