#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# app_refuse.t — `blackout app` on the host, no VM (docs/apps.md): a program, checker or
# --with that is not an executable regular file, whose libraries ldd cannot find, or a
# script for an interpreter the guest lacks is refused with a message naming it, before
# any guest boots (a fake qemu and nbdkit on PATH say if one started); a good program is
# staged as a cpio holding it, its checker, the --with executables, their libraries and
# its arguments quoted for sh; a --with directory's files (not its subdirectories) are
# carried at their host paths, its executables' libraries with them, a link to a
# neighbour kept as a link, and a relative directory is refused.
. "$(dirname "$0")/../test-lib.sh"
need_tool cc cpio
mkdir -p "$T/bin" "$T/src/scripts" "$T/src/src/guest" "$T/build"
for t in qemu-system-x86_64 nbdkit; do
	printf '#!/bin/sh\necho started >>"%s/booted"\nexit 1\n' "$T" >"$T/bin/$t"
	chmod 755 "$T/bin/$t"
done
# a source tree whose vmrecord keeps the per-run cpio it is given and records nothing
printf '#!/bin/sh\nexit 0\n' >"$T/src/scripts/vmtest"
cat >"$T/src/scripts/vmrecord" <<EOF2
#!/bin/sh
while [ \$# -gt 0 ]; do [ "\$1" = --initrd-extra ] && cp "\$2" "$T/extra.gz"; shift; done
echo "fake vmrecord: no boot" >&2
exit 1
EOF2
chmod 755 "$T/src/scripts/vmtest" "$T/src/scripts/vmrecord"
cp "$BLACKOUT_SRC/src/guest/guest-app.sh" "$T/src/src/guest/"
export PATH="$T/bin:$PATH" BLACKOUT_SRC="$T/src" BUILD="$T/build"

printf '#!/bin/sh\nexit 0\n' >"$T/ok.sh"
chmod 755 "$T/ok.sh"
printf '#!/bin/sh\nexit 0\n' >"$T/noexec.sh"
chmod 644 "$T/noexec.sh"
printf '#!/usr/bin/python3\nprint(1)\n' >"$T/py"
chmod 755 "$T/py"
# an ELF that needs a library which is then removed
printf 'int bo_gone(void) { return 0; }\n' >"$T/gone.c"
printf 'int bo_gone(void);\nint main(void) { return bo_gone(); }\n' >"$T/main.c"
cc -shared -fPIC -o "$T/libbo_gone.so" "$T/gone.c" &&
	cc -o "$T/needs-gone" "$T/main.c" -L"$T" -lbo_gone || bail "cannot build the test ELF"
rm "$T/libbo_gone.so"

# refused NAME WANT ARGS...: exit 1, stderr holds WANT, no guest started
refused() {
	local name=$1 want=$2
	shift 2
	"$BLACKOUT" app --out "$T/o-$name" "$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	[ $rc -eq 1 ] && grep -qF -- "$want" "$T/$name.err" && [ ! -e "$T/booted" ] &&
		[ ! -e "$T/extra.gz" ]
	ok $? "$name refused before any guest boots (exit $rc): $(head -n 1 "$T/$name.err")"
}
refused noexec "program $T/noexec.sh is not executable" --checker "$T/ok.sh" "$T/noexec.sh"
refused missing "program $T/nothere: No such file" --checker "$T/ok.sh" "$T/nothere"
refused dir "program $T is not a regular file" --checker "$T/ok.sh" "$T"
refused lib "program $T/needs-gone: library libbo_gone.so not found" --checker "$T/ok.sh" \
	"$T/needs-gone"
refused checker-lib "checker $T/needs-gone: library libbo_gone.so not found" \
	--checker "$T/needs-gone" "$T/ok.sh"
refused checker-noexec "checker $T/noexec.sh is not executable" --checker "$T/noexec.sh" \
	"$T/ok.sh"
refused with "--with $T/needs-gone: library libbo_gone.so" --with "$T/needs-gone" \
	--checker "$T/ok.sh" "$T/ok.sh"
refused python "a script for /usr/bin/python3" --checker "$T/ok.sh" "$T/py"

"$BLACKOUT" app "$T/ok.sh" >"$T/u.out" 2>"$T/u.err"
[ $? -eq 2 ] && grep -q -- "--checker is required" "$T/u.err"
ok $? "no --checker: a usage error"
"$BLACKOUT" app --checker "$T/ok.sh" >"$T/u2.out" 2>"$T/u2.err"
[ $? -eq 2 ] && grep -q "no PROGRAM" "$T/u2.err"
ok $? "no program: a usage error"
"$BLACKOUT" app --checker "$T/ok.sh" --state p1-0 "$T/ok.sh" >"$T/u3.out" 2>"$T/u3.err"
[ $? -eq 2 ] && grep -q "together, with --log" "$T/u3.err"
ok $? "--state without --keep and --log: a usage error"

# a good program: staged, then handed to vmrecord (the fake one stops there)
"$BLACKOUT" app --out "$T/good" --checker "$T/ok.sh" --with /bin/true --timeout 7 \
	--check-timeout 3 "$T/ok.sh" "it's" 'two words' >"$T/good.out" 2>"$T/good.err"
rc=$?
[ $rc -eq 1 ] && [ -s "$T/extra.gz" ] && [ ! -e "$T/booted" ]
ok $? "a good program reaches the recording boot with its cpio (exit $rc)"
mkdir "$T/x" && (cd "$T/x" && zcat -f "$T/extra.gz" | cpio -id --quiet)
lib=$(ldd /bin/true | awk '/libc\.so/ { print $3 }')
[ -x "$T/x/app/prog" ] && [ -x "$T/x/app/checker" ] && [ -x "$T/x/app/bin/true" ] &&
	[ -f "$T/x/app/guest-app.sh" ] && [ -n "$lib" ] && cmp -s "$lib" "$T/x$lib"
ok $? "the cpio holds the program, checker, --with and their libraries at their paths ($lib)"
(. "$T/x/app/args.sh" && [ $# -eq 2 ] && [ "$1" = "it's" ] && [ "$2" = 'two words' ])
ok $? "the arguments reach the guest quoted for sh: $(cat "$T/x/app/args.sh")"
grep -qx 'BO_APP_TIMEOUT=7' "$T/x/app/env.sh" && grep -qx 'BO_APP_CHECK_TIMEOUT=3' "$T/x/app/env.sh"
ok $? "the timeouts reach the guest"
# a --with directory: a server's tree carried at its own path
D="$T/tree/bin"
mkdir -p "$D/sub" && cp /bin/true "$D/srv" && echo data >"$D/conf" && echo deep >"$D/sub/x" &&
	ln -s srv "$D/alias"
"$BLACKOUT" app --out "$T/dir" --checker "$T/ok.sh" --with "$D" "$T/ok.sh" \
	>"$T/dir.out" 2>"$T/dir.err"
rm -rf "$T/y" && mkdir "$T/y" && (cd "$T/y" && zcat -f "$T/extra.gz" | cpio -id --quiet)
[ -x "$T/y$D/srv" ] && cmp -s "$D/conf" "$T/y$D/conf" && [ "$(readlink "$T/y$D/alias")" = srv ] &&
	[ ! -e "$T/y$D/sub" ] && [ ! -e "$T/y/app/bin/bin" ] && cmp -s "$lib" "$T/y$lib"
ok $? "--with DIR: its files at their host paths, a link kept, no subdirectory, the executables' libraries"
(cd "$T/tree" && "$BLACKOUT" app --checker "$T/ok.sh" --with bin "$T/ok.sh") >"$T/rel.out" 2>"$T/rel.err"
[ $? -eq 1 ] && grep -q "with bin: a directory is carried at its host path" "$T/rel.err" &&
	[ ! -e "$T/booted" ]
ok $? "--with a relative directory: refused before any boot ($(head -n 1 "$T/rel.err"))"
done_testing
