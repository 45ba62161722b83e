#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# log_dump.t — `blackout log dump` on the logs of fuzz/corpus/fuzz_log: marks printed
# with control bytes escaped, failed operations with their errno; devices, FIFOs and
# damaged files refused at once with a clear message (docs/log-format.md).
. "$(dirname "$0")/../test-lib.sh"
C="$BLACKOUT_SRC/fuzz/corpus/fuzz_log"

out=$("$B" log dump "$C/seed3-marks.log")
ok $? "a log whose marks hold control bytes dumps (exit 0)"
printf "%s\n" "$out" | grep -qF '0 mark    \x1b[31mred\n'
ok $? "the escape byte and the newline are printed escaped"
printf '%s' "$out" | tr -d '\n' | grep -q "$(printf '\033')"
ok $((!$?)) "no raw escape byte reaches the terminal"
is "$(printf "%s\n" "$out" | wc -l)" 6 "one line per operation, a mark's newline included"

out=$("$B" log dump "$C/seed2-4k-failed.log")
printf "%s\n" "$out" | grep -qF 'write   lba=2 count=1 fua data=ae422092ddedd0f7 result=-5 (Input/output error)'
ok $? "a failed FUA write shows its errno"

out=$("$B" log dump --json "$C/seed3-marks.log")
printf "%s\n" "$out" | jq -e '.ops[0].name == "\u001b[31mred\n"' >/dev/null &&
	! printf "%s" "$out" | grep -q "$(printf '\033')"
ok $? "--json escapes the name as a JSON string that reads back exactly"

out=$(timeout 10 "$B" log dump /dev/zero 2>&1)
rc=$?
t "log dump /dev/zero ends at once with exit 1" '[ $rc -eq 1 ]'
is "$out" "blackout log: /dev/zero: not a regular file (an I/O log is a file)" "naming the problem"

mkfifo "$T/fifo"
out=$(timeout 10 "$B" log dump "$T/fifo" 2>&1)
rc=$?
t "a FIFO with no writer is refused, not waited on" \
	'[ $rc -eq 1 ] && printf "%s\n" "$out" | grep -q "not a regular file"'

head -c 100 "$C/seed1.log" >"$T/short.log"
out=$("$B" log dump "$T/short.log" 2>&1)
rc=$?
t "a truncated log is refused with the byte offset" \
	'[ $rc -eq 1 ] && printf "%s\n" "$out" | grep -q "truncated at byte"'

done_testing
