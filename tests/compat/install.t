#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# install.t — blackout installed like a Debian tool (docs/install.md): `make install`
# into a DESTDIR gives a binary that runs its quick matrix and finds its vmtest
# harness, man pages `man -l` reads and the nbdkit plugin under nbdkit's name;
# `make uninstall` removes it all; debian/ builds a package (dpkg-buildpackage -b)
# whose unpacked binary, page and plugin work. Run as root (or with CI=true) it also
# installs the package for real, checks `nbdkit blackout stack=...` finds the plugin
# by name, and removes the package again. About a minute alone: one package build,
# one quick matrix on a small state budget (the installed binary running it is the
# point, not its verdicts).
. "$BLACKOUT_SRC/tests/compat/lib.sh"
SRC=$BLACKOUT_SRC
BUILD=${BUILD:-$SRC/build}

for tool in make man nbdkit nbdinfo jq dpkg-buildpackage dh dpkg-deb; do
	command -v "$tool" >/dev/null && continue
	echo "Bail out! $tool missing: run scripts/install-deps"
	exit 1
done

REAL=0 # the package installed for real by this test, removed on exit
cleanup() {
	if [ "$REAL" -eq 1 ]; then
		dpkg -r blackout >/dev/null 2>&1
	fi
}
at_exit cleanup

# nbdkit's plugin directory with its /usr prefix swapped, as the Makefile does
plugindir=$(nbdkit --dump-config | sed -n 's|^plugindir=||p')
sub=${plugindir#/usr/}

# ---- make install into a DESTDIR (PREFIX=/usr/local) -------------------------------
D=$SCRATCH/dest
P=$D/usr/local
make -s -C "$SRC" BUILD="$BUILD" DESTDIR="$D" install >"$SCRATCH/install.log" 2>&1
ok $? "make install DESTDIR=... succeeds"
sed 's/^/#   /' "$SCRATCH/install.log" | tail -5
[ -x "$P/bin/blackout" ] && [ -x "$P/lib/blackout/scripts/vmtest" ] &&
	[ -x "$P/lib/blackout/scripts/vm-build" ] && [ -f "$P/lib/blackout/src/guest/guest-init" ]
ok $? "the binary and the vmtest harness are under PREFIX"
[ -f "$P/$sub/nbdkit-blackout-plugin.so" ] &&
	[ "$(readlink -f "$P/lib/blackout/blackout-nbdkit.so")" = "$(readlink -f "$P/$sub/nbdkit-blackout-plugin.so")" ]
ok $? "the plugin is nbdkit-blackout-plugin.so in PREFIX/$sub, linked from the harness"
cmds=$("$P/bin/blackout" --help | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 }')
missing=
for c in $cmds; do [ -f "$P/share/man/man1/blackout-$c.1" ] || missing="$missing $c"; done
[ -f "$P/share/man/man1/blackout.1" ] && [ -n "$cmds" ] && [ -z "$missing" ]
ok $? "a man page for blackout and for each of its $(echo $cmds | wc -w) commands"
[ -z "$missing" ] || diag "no page for:$missing"
page=$(MANWIDTH=100 man -l "$P/share/man/man1/blackout-matrix.1" 2>&1)
printf '%s\n' "$page" | grep -q '^NAME' && printf '%s\n' "$page" | grep -q 'blackout-matrix - ' &&
	printf '%s\n' "$page" | grep -q -- '--quick'
ok $? "man -l reads the installed blackout-matrix page (NAME, --quick)"

# the installed binary, away from the source tree
cd "$SCRATCH" || exit 1
env -u BLACKOUT_SRC -u BUILD "$P/bin/blackout" matrix --quick --max-states 30 --jobs 2 --out "$SCRATCH/mq" \
	>"$SCRATCH/mq.txt" 2>"$SCRATCH/mq.err"
rc=$?
[ $rc -eq 0 ] && jq -e '.mode == "quick" and (.cells | length > 0)' "$SCRATCH/mq/matrix.json" >/dev/null &&
	[ -s "$SCRATCH/mq/report.html" ]
ok $? "the installed blackout matrix --quick runs and writes its report"
[ $rc -eq 0 ] || sed 's/^/#   /' "$SCRATCH/mq.err" | tail -5
# The options are checked in C before the harness runs, so the harness is reached with
# valid ones and stopped by its own first check: a PATH without qemu.
mkdir -p "$SCRATCH/noqemu"
for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
	for f in "$d"/*; do
		b=${f##*/}
		[ "$b" = qemu-system-x86_64 ] || [ -e "$SCRATCH/noqemu/$b" ] || ln -s "$f" "$SCRATCH/noqemu/$b"
	done
done
err=$(env -u BLACKOUT_SRC -u BUILD PATH="$SCRATCH/noqemu" XDG_CACHE_HOME="$SCRATCH/cache" \
	"$P/bin/blackout" vmtest --stack 'mem(size=64M)' --fs ext4 --workload create --cuts 1 2>&1)
[ "$err" = "vmtest: qemu-system-x86_64 missing: run scripts/install-deps" ] &&
	[ "$(readlink -f "$SCRATCH/cache/blackout/blackout-nbdkit.so")" = "$(readlink -f "$P/$sub/nbdkit-blackout-plugin.so")" ] &&
	[ "$(readlink -f "$SCRATCH/cache/blackout/blackout")" = "$(readlink -f "$P/bin/blackout")" ]
ok $? "installed vmtest runs the installed harness, its cache under XDG_CACHE_HOME"
diag "vmtest said: $err"

make -s -C "$SRC" BUILD="$BUILD" DESTDIR="$D" uninstall >/dev/null 2>&1
ok $? "make uninstall succeeds"
left=$(find "$D" ! -type d)
[ -z "$left" ]
ok $? "make uninstall leaves no file behind"
[ -z "$left" ] || diag "left: $left"

# ---- the Debian package -------------------------------------------------------------
mkdir -p "$SCRATCH/pkg/blackout"
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then # committed and new files
	(cd "$SRC" && git ls-files -co --exclude-standard | cpio -pdm --quiet "$SCRATCH/pkg/blackout")
else
	(cd "$SRC" && tar --exclude=./build --exclude=./blackout-report -cf - .) |
		tar -xf - -C "$SCRATCH/pkg/blackout"
fi
(cd "$SCRATCH/pkg/blackout" && DEB_BUILD_OPTIONS="parallel=2 nocheck" \
	dpkg-buildpackage -b -uc -us >"$SCRATCH/pkg/build.log" 2>&1)
rc=$?
deb=$(ls "$SCRATCH"/pkg/blackout_*_*.deb 2>/dev/null | head -n 1)
[ $rc -eq 0 ] && [ -n "$deb" ]
ok $? "dpkg-buildpackage -b -uc -us builds the package"
[ -n "$deb" ] || { tail -20 "$SCRATCH/pkg/build.log" | sed 's/^/#   /'; done_testing; exit; }
R=$SCRATCH/root
dpkg -x "$deb" "$R"
ok $? "dpkg -x unpacks it into a scratch root"
[ -x "$R/usr/bin/blackout" ] && [ -f "$R$plugindir/nbdkit-blackout-plugin.so" ] &&
	[ -x "$R/usr/lib/blackout/scripts/vmtest" ] && [ -f "$R/usr/share/man/man1/blackout-matrix.1.gz" ]
ok $? "it holds /usr/bin/blackout, the plugin in $plugindir, the harness and the pages"
out=$(env -u BLACKOUT_SRC "$R/usr/bin/blackout" mkfs -q "$SCRATCH/p.img" --size 8M &&
	env -u BLACKOUT_SRC "$R/usr/bin/blackout" ls "$SCRATCH/p.img" /)
[ "$out" = lost+found ]
ok $? "the package's binary makes and lists a filesystem"
MANWIDTH=100 man -l "$R/usr/share/man/man1/blackout.1.gz" 2>&1 | grep -q 'blackout - a storage reliability laboratory'
ok $? "man -l reads the package's blackout page"
nbdkit "$R$plugindir/nbdkit-blackout-plugin.so" --dump-plugin 2>&1 | grep -qx 'name=blackout'
ok $? "nbdkit loads the package's plugin, named blackout"

# ---- for real, as root or in CI: nbdkit finds the plugin by name --------------------
if [ "$(id -u)" -eq 0 ] || [ "${CI:-}" = true ]; then
	if dpkg-query -W -f='${Status}' blackout 2>/dev/null | grep -q 'install ok installed'; then
		diag "a blackout package is installed already: left alone, not installed for real"
	else
		REAL=1
		dpkg -i "$deb" >"$SCRATCH/dpkg.log" 2>&1
		ok $? "dpkg -i installs the package"
		size=$(nbdkit -U - blackout stack='mem(size=1M)' --run 'nbdinfo --size "$uri"' 2>&1)
		[ "$size" = 1048576 ]
		ok $? "nbdkit blackout stack=... finds the installed plugin by name"
		diag "nbdinfo --size: $size"
		MANWIDTH=100 man blackout-matrix 2>/dev/null | grep -q 'blackout-matrix - '
		ok $? "man blackout-matrix finds the installed page"
		dpkg -r blackout >/dev/null 2>&1 && REAL=0
		[ $REAL -eq 0 ] && [ ! -e /usr/bin/blackout ] && [ ! -e "$plugindir/nbdkit-blackout-plugin.so" ]
		ok $? "dpkg -r removes it again"
	fi
else
	diag "not root and CI is not true: the package was not installed for real"
fi

done_testing
