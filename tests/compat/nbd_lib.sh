# SPDX-License-Identifier: GPL-2.0-or-later
# nbd_lib.sh — shared helpers for tests/compat/nbd_*.t on top of the one harness
# (tests/test-lib.sh): an nbdkit serving the blackout plugin on Unix sockets, and the
# control-socket client. Sourced, not run. Every process is bounded by `timeout` and
# stopped on exit.

. "$(dirname "$0")/../test-lib.sh"
PLUGIN="$BUILD/blackout-nbdkit.so"
NBD_PID=

need_tool nbdkit qemu-io nbdinfo socat
[ -f "$PLUGIN" ] || bail "$PLUGIN not built (make all with nbdkit-plugin-dev)"

NBD_SOCK="$T/nbd.sock"
CTL_SOCK="$T/ctl.sock"
NBD_URI="nbd+unix:///?socket=$NBD_SOCK"

# start_nbd SPEC [plugin args...]: serves SPEC; returns once both sockets accept.
start_nbd() {
	spec=$1
	shift
	stop_nbd
	rm -f "$T/pid" "$T/nbdkit.log" "$NBD_SOCK" "$CTL_SOCK"
	timeout 300 nbdkit -f --exit-with-parent -U "$NBD_SOCK" -P "$T/pid" \
		"$PLUGIN" stack="$spec" control="$CTL_SOCK" "$@" 2>"$T/nbdkit.log" &
	NBD_PID=$!
	i=0
	# the pid file comes once nbdkit listens; the control socket is the plugin's own
	# and may come a moment later (a loaded machine makes that moment long)
	while [ ! -s "$T/pid" ] || [ ! -S "$NBD_SOCK" ] || [ ! -S "$CTL_SOCK" ]; do
		i=$((i + 1))
		if [ $i -gt 400 ] || ! kill -0 "$NBD_PID" 2>/dev/null; then
			sed 's/^/# nbdkit: /' "$T/nbdkit.log"
			NBD_PID=
			return 1
		fi
		sleep 0.05
	done
}

stop_nbd() {
	if [ -n "$NBD_PID" ]; then
		kill "$NBD_PID" 2>/dev/null
		wait "$NBD_PID" 2>/dev/null
	fi
	NBD_PID=
}
at_exit stop_nbd

nbd_alive() { [ -n "$NBD_PID" ] && kill -0 "$NBD_PID" 2>/dev/null; }

# ctl CMD...: sends each argument as one line; prints the replies.
ctl() {
	printf '%s\n' "$@" | timeout 10 socat -t 5 - "UNIX-CONNECT:$CTL_SOCK"
}
# ctl_last CMD: the final (status) line of CMD's reply.
ctl_last() { ctl "$1" | tail -n 1; }
# stat KEY: one counter from `stats` (nbd.writes, dev.0.mem.powered_off ...).
stat() { ctl stats | awk -v k="$1" '$1 == k { print $2; exit }'; }
# dev_stat NAME KEY: the counter KEY of the first device called NAME in the stack.
dev_stat() {
	ctl stats | awk -v n="$1" -v k="$2" '
		{ split($1, f, ".") } f[1] == "dev" && f[3] == n && f[4] == k { print $2; exit }'
}

# qio CMD...: one qemu-io connection running each argument as a -c command.
qio() {
	local a=()
	for c in "$@"; do a+=(-c "$c"); done
	# writeback: qemu adds no FUA of its own (its default, writethrough, makes every write FUA)
	# stdin never a terminal: under a pty (CI runs make check in one), a backgrounded
	# qemu-io that touches the tty is stopped until the timeout kills it
	timeout 60 qemu-io -t writeback -f raw "${a[@]}" "$NBD_URI" </dev/null
}
