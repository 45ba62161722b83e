# SPDX-License-Identifier: GPL-2.0-or-later
# guest-app.sh — the application parts of the guest (blackout app, docs/apps.md),
# sourced by guest-init from the per-run cpio (/app/guest-app.sh) that `blackout app`
# appends to the cached initramfs. Work mode: bo_run runs the user's program in
# /mnt/app instead of a compiled workload's steps; `bo_ack TEXT` (/bin/bo_ack) puts each
# acknowledgement in the I/O log. Judge mode: app_judge runs the user's checker on each
# mounted state with the acknowledgements made before its cut.
#
# Files of the per-run cpio: /app/prog (the program), /app/checker, /app/args.sh
# (`set -- ARGS`), /app/env.sh (BO_APP_TIMEOUT, BO_APP_CHECK_TIMEOUT), carried
# executables in /app/bin; judge mode adds /app/acks (every acknowledgement, in order,
# one per line) and /app/acks.map ("s<N> K": state s<N> was cut after the first K).
. /app/env.sh

# bo_run (work mode): "step 0" begins the program; each acknowledgement is the mark
# "ack TEXT" followed by "step K" (bo_ack), so the explorer's count of completed steps at
# a cut is the number of acknowledgements made before it; "end" once it exited 0.
bo_run() {
	bo_mark "step 0"
	mkdir -p /mnt/app || die "cannot make /mnt/app"
	echo 0 >/tmp/bo_ack.n
	app_ack_cmd
	export BO_MARK BO_APP_DIR=/mnt/app PATH=/app/bin:$PATH
	. /app/args.sh
	(cd /mnt/app && exec timeout -s KILL "$BO_APP_TIMEOUT" /app/prog "$@") \
		</dev/null >/tmp/app.out 2>&1
	rc=$?
	sed 's/^/app: /' /tmp/app.out >/dev/console
	[ $rc = 0 ] || die "the program exited $rc$([ $rc = 137 ] && echo ' (killed: --app-timeout?)'): $(tail -n 1 /tmp/app.out)"
	say "APP acks $(cat /tmp/bo_ack.n)"
	bo_mark end
}

# app_ack_cmd: writes /bin/bo_ack, the program's channel (docs/apps.md): `bo_ack TEXT`
# returns once the marks "ack TEXT" and "step K" are in the plugin's log, each an O_DIRECT
# write to the marker export answered by the plugin (guest-init's bo_mark). TEXT is one
# line of 1..251 bytes ("ack " + TEXT fits a mark's 255). Acks are serialised by a lock
# directory, so two processes acknowledging at once each get their own step.
app_ack_cmd() {
	cat >/bin/bo_ack <<'ACK'
#!/bin/sh
t="$*"
n=$(printf '%s' "$t" | wc -c)
case "$t" in *'
'*) echo "bo_ack: the text must be one line" >&2 && exit 2 ;; esac
[ "$n" -ge 1 ] && [ "$n" -le 251 ] || { echo "bo_ack: 1 to 251 bytes of text, not $n" >&2; exit 2; }
[ -n "$BO_MARK" ] || { echo "bo_ack: no marker export (only under blackout app)" >&2; exit 2; }
while ! mkdir /tmp/bo_ack.lock 2>/dev/null; do usleep 1000; done
k=$(($(cat /tmp/bo_ack.n) + 1))
mark() { printf '%s\n' "$1" | dd of="$BO_MARK" bs=4096 count=1 conv=sync,notrunc oflag=direct 2>/dev/null; }
mark "ack $t" && mark "step $k" && echo $k >/tmp/bo_ack.n
rc=$?
rmdir /tmp/bo_ack.lock
[ $rc = 0 ] || echo "bo_ack: the plugin did not take the mark" >&2
exit $rc
ACK
	chmod 755 /bin/bo_ack
}

# app_judge NAME: runs the checker on the mounted state (/mnt) with the acknowledgements
# made before NAME's cut; prints "app exit N|signal N|timeout" and its output lines. A
# checker is killed at BO_APP_CHECK_TIMEOUT; one killed by another signal crashed.
app_judge() {
	k=$(sed -n "s/^$1 //p" /app/acks.map)
	[ -n "$k" ] || die "$1: not in /app/acks.map"
	head -n "$k" /app/acks >/tmp/acks
	rm -f /tmp/app.timeout
	# its own session (setsid execs it: not a group leader in a shell without job
	# control), so the whole group dies: a child left in /mnt would keep it busy
	(cd /mnt/app 2>/dev/null || cd /mnt
	exec setsid env PATH=/app/bin:$PATH BO_APP_DIR=/mnt/app /app/checker /mnt/app /tmp/acks) \
		</dev/null >/tmp/check.out 2>&1 &
	cpid=$!
	(sleep "$BO_APP_CHECK_TIMEOUT" && : >/tmp/app.timeout && kill -9 -$cpid) 2>/dev/null &
	wpid=$!
	wait $cpid
	rc=$?
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	kill -9 -$cpid 2>/dev/null
	if [ -e /tmp/app.timeout ]; then
		obs "app timeout"
	elif [ $rc -gt 128 ]; then
		obs "app signal $((rc - 128))"
	else
		obs "app exit $rc"
	fi
	head -c 65536 /tmp/check.out | while read -r l; do obs "app-line $l"; done
}
