#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check.sh DIR ACKS — the LevelDB example's checker (docs/apps.md): opens DIR/db with
# paranoid checks and no repair; exit 2 when LevelDB refuses it or a read fails its
# checksum, 1 when a key acknowledged in ACKS ("put key:I", one a line) is missing.
exec bo-leveldb check "$1/db" "$2"
