#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# gen_fsop.t — the guest's helper for the steps busybox cannot make (bo-observe fsop,
# src/guest/fsop.c), run on the host's filesystem: each fallocate mode changes the
# size as the kernel documents, O_DIRECT / O_SYNC / mmap writes put the payload's
# bytes at the offset, xattrs are set and removed, fsync goes through an inherited fd
# (and fails on a closed one), bad usage is refused. No VM needed. TAP.
. "$(dirname "$0")/../test-lib.sh"

G=$BUILD/guest/bo-observe
[ -x "$G" ] || skip_all "no $G (make)"
F=$T/f
head -c 16384 /dev/urandom >"$F"
size() { stat -c %s "$F"; }

run_ok "falloc keep-size past the end" "$G" fsop falloc keep-size 16384 16384 "$F"
t "keep-size keeps the size (16384)" '[ "$(size)" = 16384 ]'
if "$G" fsop falloc punch-hole 4096 4096 "$F" 2>"$T/err"; then
	t "punch-hole zeroes its range" '[ "$(dd if="$F" bs=4096 skip=1 count=1 2>/dev/null | tr -d "\0" | wc -c)" = 0 ] && [ "$(size)" = 16384 ]'
else
	skip "punch-hole zeroes its range" "the host filesystem refuses it: $(cat "$T/err")"
fi
run_ok "falloc plain extends" "$G" fsop falloc plain 0 20480 "$F"
t "plain: the size is 20480" '[ "$(size)" = 20480 ]'
head -c 4096 /dev/zero | tr '\0' 'a' >"$T/p"
run_ok "an mmap write past the end" "$G" fsop write mmap "$T/p" 30000 "$F"
t "mmap: the file grew to 34096, the bytes are there" '[ "$(size)" = 34096 ] && [ "$(dd if="$F" bs=1 skip=30000 count=4096 2>/dev/null | tr -d a | wc -c)" = 0 ]'
run_ok "an O_SYNC write" "$G" fsop write sync "$T/p" 8192 "$F"
t "O_SYNC: the bytes at 8192" '[ "$(dd if="$F" bs=4096 skip=2 count=1 2>/dev/null | tr -d a | wc -c)" = 0 ]'
if "$G" fsop write direct-sync "$T/p" 0 "$F" 2>"$T/err"; then
	t "O_DIRECT|O_SYNC: the bytes at 0" '[ "$(dd if="$F" bs=4096 count=1 2>/dev/null | tr -d a | wc -c)" = 0 ]'
else
	skip "O_DIRECT|O_SYNC: the bytes at 0" "the host filesystem refuses O_DIRECT: $(cat "$T/err")"
fi
if "$G" fsop setxattr "$F" user.k v1 2>"$T/err"; then
	t "setxattr then removexattr" '"$G" fsop removexattr "$F" user.k'
	err=$("$G" fsop removexattr "$F" user.k 2>&1); rc=$?
	t "removing it again fails, naming the path (ENODATA)" '[ $rc -eq 1 ] && echo "$err" | grep -q "removexattr: $F"'
else
	skip "setxattr then removexattr" "no user xattrs here: $(cat "$T/err")"
	skip "removing it again fails" "no user xattrs here"
fi
t "fsync through an inherited fd" '"$G" fsop fsync 7 7<"$F"'
err=$("$G" fsop fdatasync 7 2>&1); rc=$?
t "fdatasync of a closed fd fails (EBADF)" '[ $rc -eq 1 ] && echo "$err" | grep -q "Bad file descriptor"'
err=$("$G" fsop falloc collapse 0 1 "$F" 2>&1); rc=$?
t "an unaligned collapse fails as the kernel says (exit 1)" '[ $rc -eq 1 ] && [ -n "$err" ]'
err=$("$G" fsop falloc sideways 0 1 "$F" 2>&1); rc=$?
t "an unknown mode is refused" '[ $rc -eq 1 ] && echo "$err" | grep -q usage'
"$G" fsop frobnicate >/dev/null 2>&1; rc=$?
t "an unknown operation: usage (exit 2)" '[ $rc -eq 2 ]'
done_testing
