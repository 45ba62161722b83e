#!/bin/sh
# check.sh DIR ACKS — the config-update example's checker (docs/apps.md): the config
# must be one whole version, not older than the last acknowledged. Exit 1 (lost) when it
# is missing or older; 2 with "empty config" for an empty file (what an unsynced
# replace may leave), 2 with "garbage" for anything else.
last=$(tail -n 1 "$2" | sed -n 's/^version //p')
f=$1/config
if [ ! -f "$f" ]; then
	[ -z "$last" ] && exit 0
	echo "no config, though version $last was acknowledged"
	exit 1
fi
[ -s "$f" ] || { echo "empty config"; exit 2; }
u=$(sort -u "$f")
lines=$(wc -l <"$f")
v=${u#version }
case "$u" in "version "*) ;; *) v=x ;; esac
case "$v" in '' | *[!0-9]*)
	echo "garbage: $(echo "$u" | head -c 60 | tr '\n' ' ')"
	exit 2
	;;
esac
[ "$lines" = 800 ] || { echo "garbage: version $v with $lines lines, not 800"; exit 2; }
[ -n "$last" ] && [ "$v" -lt "$last" ] && { echo "lost: version $v, but $last was acknowledged"; exit 1; }
exit 0
