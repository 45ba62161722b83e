#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh UPDATES — the config-update example of blackout app (docs/apps.md): UPDATES
# rounds, each replacing two config files by "version I" (800 lines, 2 blocks): `config`
# the careful way (write config.tmp, fsync it, rename it over config) and
# `config-nofsync` the same without the fsync; then an fsync of the directory (so both
# renames are durable) and the acknowledgement "version I". One recording holds both.
set -u
n=${1:-10}
i=1
while [ "$i" -le "$n" ]; do
	yes "version $i" | head -n 800 >config.tmp || exit 1
	sync config.tmp || exit 1
	mv config.tmp config || exit 1
	yes "version $i" | head -n 800 >config-nofsync.tmp || exit 1
	mv config-nofsync.tmp config-nofsync || exit 1
	sync . || exit 1
	bo_ack "version $i" || exit 1
	i=$((i + 1))
done
