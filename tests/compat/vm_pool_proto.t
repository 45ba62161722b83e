#!/bin/bash
# vm_pool_proto.t — the pool (src/vm) against guests that misbehave, no VM: a fake
# qemu-system-x86_64 first on PATH connects the command port as qemu does and plays the
# judge protocol (docs/realkernel.md section 3) well or badly: never answers, floods,
# sends an endless line, names the wrong state, sends a bad observation, never boots,
# exits at boot. Each is a hung state or a clear error, never a crash or a leftover
# process.
. "$(dirname "$0")/../test-lib.sh"
need_tool nbdkit socat jq
[ -f "$BUILD/blackout-nbdkit.so" ] || bail "$BUILD/blackout-nbdkit.so missing: make"
mkdir -p "$T/bin" "$T/store"
truncate -s 1M "$T/store/base.img"
: >"$T/kernel"
: >"$T/initrd"
cat >"$T/bin/qemu-system-x86_64" <<'FAKE'
#!/bin/bash
# fake qemu: the command port's socket from -chardev, then the fake guest on it
while [ $# -gt 0 ]; do
	case "$1" in -chardev) sock=${2#*path=} && shift ;; esac
	shift
done
case "$FAKE" in noboot) exec sleep 30 ;; exitboot) exit 1 ;; esac
exec socat EXEC:"$(dirname "$0")/fake-guest" UNIX-CONNECT:"$sock" 2>/dev/null
FAKE
cat >"$T/bin/fake-guest" <<'FAKE'
#!/bin/bash
# FAKE: how to answer; a good answer is a state whose mount failed
echo "BO:READY"
last= heard=
while read -r cmd name; do
	[ "$cmd" = CHECK ] || continue
	[ "$name" = "$last" ] && continue
	# deaf: the first copy of each command is lost on the way (the pool must resend)
	[ "$FAKE" = deaf ] && [ "$heard" != "$name" ] && heard=$name && continue
	last=$name
	echo "BO:BEGIN $name"
	case "$FAKE:$name" in
	hang:s1) exec sleep 30 ;;
	flood:*) exec yes "BO:OBS dir /x" ;;
	longline:*) printf 'BO:OBS '; yes x | tr -d '\n'; exit ;;
	wrongend:*) echo "BO:END s99" ;;
	badobs:*) printf 'BO:OBS chunk 4096\nBO:OBS mount zero\nBO:OBS end\nBO:END %s\n' "$name" ;;
	*)
		printf 'kernel noise\nBO:OBS chunk 4096\nBO:OBS mount 32 no fs\nBO:OBS end\n'
		printf 'BO:TIME 100 200 300 400 500\nBO:END %s\n' "$name"
		;;
	esac
done
FAKE
chmod +x "$T/bin/qemu-system-x86_64" "$T/bin/fake-guest"

pool() { # pool MODE N [ARGS]: the pool over N states with fake guests behaving as MODE
	local mode=$1 n=$2
	shift 2
	FAKE=$mode PATH="$T/bin:$PATH" timeout 120 "$BLACKOUT" vmobserve "$T/store" "$n" --fs ext4 \
		--kernel "$T/kernel" --initrd "$T/initrd" --plugin "$BUILD/blackout-nbdkit.so" \
		--workdir "$T/wd-$mode" "$@" >"$T/$mode.out" 2>"$T/$mode.err"
}
leftovers() { pgrep -f "$T/" | grep -v "^$$\$" | wc -l; }

pool good 5 --jobs 2
ok $? "well-behaved guests: the pool runs"
is "$(grep -c '"mount_rc":-' "$T/good.out")" 5 "every state observed (a mount failure each)"
is "$(tail -n 1 "$T/good.out" | jq .seconds.check)" 2.5 "BO:TIME phases summed (5 x 0.5 s of check)"
is "$(tail -n 1 "$T/good.out" | jq .boots)" 2 "two guests started, none restarted"

pool deaf 3 --jobs 1 --state-timeout 20
ok $? "a guest that misses each first command: the pool runs"
is "$(jq -s '[.[] | select(.hung == false and .mount_rc == -5)] | length' "$T/deaf.out")" 3 \
	"every state observed after the CHECK was sent again"
is "$(tail -n 1 "$T/deaf.out" | jq .hung)" 0 "none hung"

pool hang 3 --jobs 1 --state-timeout 2
ok $? "a guest that stops answering does not stop the pool"
is "$(jq -r 'select(.state == 1) | .hung' "$T/hang.out")" true "its state is reported hung"
jq -r 'select(.state == 1) | .mount_msg' "$T/hang.out" | grep -q "no BO:END within 2s"
ok $? "... saying it stopped answering"
is "$(jq -r 'select(.state == 2) | .mount_rc' "$T/hang.out")" -5 "the next state is observed on a fresh guest"
is "$(tail -n 1 "$T/hang.out" | jq .boots)" 2 "the guest was restarted once"

for mode in flood longline wrongend badobs noboot exitboot; do
	case $mode in
	flood) want="sent over 33554432 bytes for s0" ;;
	longline) want="sent a line over 4194304 bytes" ;;
	wrongend) want="'BO:END s99' while checking s0" ;;
	badobs) want="state s0: observation" ;;
	noboot) want="failed to boot twice in a row: no BO:READY within 2s" ;;
	exitboot) want="failed to boot twice in a row: qemu exited" ;;
	esac
	pool $mode 2 --jobs 1 --boot-timeout 2
	rc=$?
	t "$mode: a clear error (exit 1)" '[ $rc = 1 ] && grep -qF -- "$want" "$T/$mode.err"'
	grep -qF -- "$want" "$T/$mode.err" || sed 's/^/# /' "$T/$mode.err"
done
sleep 0.2
is "$(leftovers)" 0 "no fake qemu, socat or nbdkit left running"
done_testing
