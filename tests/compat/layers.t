#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# layers.t — includes run downhill (DESIGN.md: "A layer only includes the headers of
# layers below it"; docs/architecture.md, Layers). Each directory of src/ is a layer,
# each public header belongs to one; a file may include its own layer's headers
# (public or private) and those of layers below it, never above. No file outside
# src/cli includes a cli/ header. And the circles that were opened stay open: the
# guest's bo-probe links no CLI and no stubs; the RAID plan, log, bitmap and sync
# files never call into the stripe code (nor the plan into any of them); fs.c is
# neither the buffer cache nor mount.
. "$(dirname "$0")/../test-lib.sh"
cd "$BLACKOUT_SRC" || bail "no source tree at $BLACKOUT_SRC"

# The layers, bottom first; after each, its public headers (include/blackout/).
LAYERS='
util   util err endian json
blk    blk rec
dev    dev raid flash
probe  probe
jbd    jbd
fs     fs ext2_format
fsck   fsck e2fsck
md     md_view
crash  crash
gen    gen shrink
app    app
vm     vm vmexplore
report matrix campaign
nbd
guest
cli
'
rank_of_dir() { printf '%s\n' "$LAYERS" | awk -v d="$1" 'NF && $1 == d { print NR; exit }'; }
rank_of_header() { # blackout/NAME.h
	printf '%s\n' "$LAYERS" | awk -v h="$1" 'NF { for (i = 2; i <= NF; i++) if ($i == h) { print NR; exit } }'
}

# every directory of src/ and every public header has a place
missing=
for d in src/*/; do
	d=${d%/} d=${d#src/}
	[ -n "$(rank_of_dir "$d")" ] || missing="$missing src/$d"
done
for h in include/blackout/*.h; do
	h=${h##*/} h=${h%.h}
	[ -n "$(rank_of_header "$h")" ] || missing="$missing blackout/$h.h"
done
[ -z "$missing" ]
ok $? "every directory of src/ and every public header is in a layer:${missing:- yes}"

# FILE RANK INCLUDE: why the include goes uphill, or nothing
uphill() {
	case $3 in
	blackout/*.h)
		h=${3#blackout/} h=${h%.h}
		r=$(rank_of_header "$h")
		[ -z "$r" ] && echo "$1: includes $3, a header of no layer" && return
		[ "$r" -gt "$2" ] && echo "$1: includes $3, a layer above it"
		;;
	*/*)
		d=${3%%/*}
		r=$(rank_of_dir "$d")
		[ -z "$r" ] && echo "$1: includes $3, of no layer" && return
		[ "$r" -gt "$2" ] && echo "$1: includes $3, a layer above it"
		;;
	esac
}

bad=
for d in src/*/; do
	d=${d%/}
	rank=$(rank_of_dir "${d#src/}")
	[ -n "$rank" ] || continue
	for f in "$d"/*.c "$d"/*.h; do
		[ -f "$f" ] || continue
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			why=$(uphill "$f" "$rank" "$inc")
			[ -n "$why" ] && bad="$bad
$why"
		done
	done
done
[ -z "$bad" ]
ok $? "every file in src/ includes only its own layer's headers and those below"
[ -z "$bad" ] || printf '%s\n' "$bad" | sed '/^$/d; s/^/#   /'

bad=
for f in include/blackout/*.h; do
	h=${f##*/} h=${h%.h}
	rank=$(rank_of_header "$h")
	[ -n "$rank" ] || continue
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		why=$(uphill "$f" "$rank" "$inc")
		[ -n "$why" ] && bad="$bad
$why"
	done
done
[ -z "$bad" ]
ok $? "every public header includes only headers of its layer and below"
[ -z "$bad" ] || printf '%s\n' "$bad" | sed '/^$/d; s/^/#   /'

cli=$(grep -l '^[[:space:]]*#[[:space:]]*include[[:space:]]*"cli/' $(find src -name '*.[ch]' ! -path 'src/cli/*') 2>/dev/null)
[ -z "$cli" ]
ok $? "no file outside src/cli includes a cli/ header${cli:+: $(echo $cli)}"

# ---- the circles stay open ----
need_tool nm
O=$BUILD/obj/src
[ -f "$O/dev/raid_plan.o" ] || bail "$O/dev/raid_plan.o missing: make"
defs() { nm --defined-only -g "$O/$1.o" | awk '{ print $3 }' | sort; }
undef() { nm -u "$O/$1.o" | awk '{ print $NF }' | sort; }
calls() { # FROM TO: the functions of TO that FROM calls
	comm -12 "$(tmpf "$1" u undef)" "$(tmpf "$2" d defs)" | tr '\n' ' '
}
tmpf() { # OBJ TAG FN: FN's answer in a file
	f="$T/$(echo "$1" | tr / _).$2"
	[ -f "$f" ] || $3 "$1" >"$f"
	echo "$f"
}

bad=
for from in raid_plan raid_journal raid_ppl raid_bitmap raid_sync raid_log; do
	c=$(calls "dev/$from" dev/raid_stripe)
	[ -n "$c" ] && bad="$bad $from->raid_stripe($c)"
done
for to in raid_journal raid_ppl raid_bitmap raid_sync raid_log raid_stripe; do
	c=$(calls dev/raid_plan "dev/$to")
	[ -n "$c" ] && bad="$bad raid_plan->$to($c)"
done
for to in raid_journal raid_ppl; do
	c=$(calls dev/raid_stripe "dev/$to")
	[ -n "$c" ] && bad="$bad raid_stripe->$to($c), not through raid_log"
done
[ -z "$bad" ]
ok $? "RAID: plan below stripe, journal, PPL, bitmap and sync; the stripe reaches the log through raid_log.c only${bad:+:$bad}"

P=$BUILD/guest/bo-probe
if [ -x "$P" ]; then
	stubs=$(nm "$P" 2>/dev/null | awk '$2 ~ /^[TtWw]$/ { print $3 }' |
		grep -xE 'cmd_probe|cli_[a-z_]+|probe_inproc|probe_timing_spec|probe_sink_tcp|probe_listen' | tr '\n' ' ')
	[ -z "$stubs" ] && nm "$P" | grep -qw probe_write_logged
	ok $? "bo-probe calls the probe driver (probe_write_logged) and links no CLI code or stubs${stubs:+: $stubs}"
else
	skip "bo-probe links no CLI code or stubs" "$P not built"
fi

fsdefs=$(defs fs/fs | grep -xE 'fs_bread|fs_bnew|fs_writeback|fs_mount|fs_mount_hooked|fs_unmount' | tr '\n' ' ')
[ -z "$fsdefs" ] && defs fs/bcache | grep -qx fs_bread && defs fs/mount | grep -qx fs_mount
ok $? "fs.c is neither the buffer cache (bcache.c) nor mount (mount.c)${fsdefs:+: fs.c defines $fsdefs}"

# One naming convention for private headers: a directory's shared internals are
# NAME_int.h (crash_int.h, dev_int.h, raid_int.h ...), never internal.h or
# NAME_internal.h; topic headers (dx.h, problem.h, matrix_run.h) keep their topic's name.
odd=$(find src -name '*internal*.h' | tr '\n' ' ')
[ -z "$odd" ]
ok $? "private internals headers are named NAME_int.h${odd:+: $odd}"

done_testing
