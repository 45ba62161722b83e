#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh SYNC KEYS — the LevelDB example of blackout app (docs/apps.md): KEYS Puts into
# the database db/ with WriteOptions.sync true (SYNC=sync) or false (nosync), each
# acknowledged "put key:I" once it returned. Needs --with build/apps/bo-leveldb (the
# Makefile builds it against Debian's libleveldb).
exec bo-leveldb put db "${1:-sync}" "${2:-20}"
