#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# explore_progress.t — a piped `blackout explore` is not silent: plain progress lines on
# standard error (states judged, time so far, time left), no terminal redraws.
. "$BLACKOUT_SRC/tests/compat/lib.sh"

"$BLACKOUT" explore --stack "cache(size=64k,flush=honor) > disk > mem(size=8M)" --fs ext3 \
	--workload append-fsync --json "$SCRATCH/r.json" 2>"$SCRATCH/err.txt" | cat >/dev/null
sed 's/^/#   /' "$SCRATCH/err.txt"
grep -Eq '^explore: [0-9]+ of [0-9]+ crash states judged, [0-9]+ violations, [0-9]+ s so far, about [0-9]+ s left$' "$SCRATCH/err.txt"
ok $? "plain progress lines with states judged and time left"
! grep -q $'\r' "$SCRATCH/err.txt"
ok $? "no carriage-return redraws when standard error is not a terminal"
done_testing
