#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check.sh DIR ACKS — the config-update example's checker (docs/apps.md): each config
# (`config`, fsynced; `config-nofsync`) must be one whole version, not older
# than the last acknowledged. Exit 1 (lost) when one is missing or older; 2 with
# "NAME: empty" for an empty file (what an unsynced replace may leave), "NAME:
# zero-filled" for a file of NUL bytes only (its size durable, its data not), "NAME:
# garbage" for anything else. `config` is checked first, so its problem is the
# first line.
last=$(tail -n 1 "$2" | sed -n 's/^version //p')
worst=0
# check NAME: prints the problem, returns 0, 1 or 2
check() {
	f=$DIR/$1
	if [ ! -f "$f" ]; then
		[ -z "$last" ] && return 0
		echo "$1: missing, though version $last was acknowledged"
		return 1
	fi
	[ -s "$f" ] || { echo "$1: empty"; return 2; }
	u=$(tr -d '\000' <"$f" | sort -u)
	nuls=$(tr -cd '\000' <"$f" | wc -c)
	lines=$(wc -l <"$f")
	v=${u#version }
	case "$u" in "version "*) ;; *) v=x ;; esac
	size=$(wc -c <"$f")
	[ "$nuls" = "$size" ] && { echo "$1: zero-filled ($size NUL bytes)"; return 2; }
	case "$v" in '' | *[!0-9]*)
		echo "$1: garbage ($nuls NUL bytes): $(echo "$u" | head -c 60 | tr '\n' ' ')"
		return 2
		;;
	esac
	[ "$lines" = 800 ] && [ "$nuls" = 0 ] ||
		{ echo "$1: garbage: version $v with $lines lines, $nuls NUL bytes"; return 2; }
	[ -n "$last" ] && [ "$v" -lt "$last" ] &&
		{ echo "$1: lost: version $v, but $last was acknowledged"; return 1; }
	return 0
}
DIR=$1
for name in config config-nofsync; do
	check "$name"
	rc=$?
	[ $rc -gt $worst ] && worst=$rc
done
exit $worst
