#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_workers.t — when the matrix cannot start all its workers (here: too few file
# descriptors for the sockets), it stops the ones it started and says why; it never
# signals processes it did not start (an unset worker pid of 0 would be the caller's
# whole process group).
. "$(dirname "$0")/lib.sh"

# The run is in its own session: if the matrix signalled its process group, only this
# subshell dies and the marker file below is never written.
for n in 9 11; do
	setsid bash -c "ulimit -n $n; timeout --foreground 120 '$BLACKOUT' matrix --quick --jobs 8 \
		>'$T/out' 2>'$T/err'; echo \$? >'$T/rc'" 2>/dev/null
	ok $([ -f "$T/rc" ]; echo $?) "ulimit -n $n: the caller's process group survives"
	is "$(cat "$T/rc" 2>/dev/null)" 1 "ulimit -n $n: the matrix exits 1"
	grep -q "socketpair: Too many open files" "$T/err"
	ok $? "ulimit -n $n: and says which call failed ($(tail -n 1 "$T/err"))"
	rm -f "$T/rc"
done
done_testing
