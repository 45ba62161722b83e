#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_pg.t — PostgreSQL 15 under blackout app (apps/postgres, docs/apps.md): the real
# server on the guest kernel's ext4 barrier=1 over an honest cache, with
# synchronous_commit=on and full_page_writes=on, its commits acknowledged by a psql
# session once the server answered: no judged state loses an acknowledged commit and
# the checker's own recovery and amcheck pass in every one of them; the same recording
# judged again with the cluster's control file removed in the state is reported as a
# server that does not start (corruption detected), never as lost data. With VM_FULL=1
# (tests/long/vm_pg_full.t) the acceptance runs: 100+ distinct states of that
# setting, synchronous_commit=off losing acknowledged commits (counted), and
# full_page_writes off and on over a drive that tears an 8 KiB page at 4 KiB.
. "$(dirname "$0")/vm_lib.sh"
need_tool setpriv tar
P=/usr/lib/postgresql/15 S=/usr/share/postgresql/15
[ -x "$P/bin/postgres" ] && [ -f "$S/extension/amcheck.control" ] ||
	bail "PostgreSQL 15 missing: run scripts/install-deps"
PG="$BLACKOUT_SRC/apps/postgres"
# the cluster is made on the host: initdb under TCG takes minutes (docs/apps.md)
"$PG/template.sh" "$T/tpl" >"$T/tpl.log" 2>&1 || bail "template.sh: $(tail -n 1 "$T/tpl.log")"
WITH=(--with "$(command -v setpriv)" --with "$P/bin" --with "$P/lib" --with "$S"
	--with "$S/extension" --with "$S/timezonesets" --with "$S/tsearch_data" --with "$T/tpl")
HONEST='cache(size=1M,flush=honor) > mem(size=128M)'
TORN='disk(sector=4096,tear=sector) > mem(size=128M,sector=4096)'
# app NAME ARGS...: one `blackout app` into $T/NAME (exit 0: every state ok, 3: some
# failed; anything else fails)
app() {
	local name=$1
	shift
	timeout "${VM_TIMEOUT:-3000}" "$BLACKOUT" app --out "$T/$name" --json "$T/$name.json" \
		--checker "$PG/check.sh" "${WITH[@]}" --timeout 300 --check-timeout 60 \
		--state-timeout 120 "$@" >"$T/$name.log" 2>&1
	local rc=$?
	grep '^judged\|^app:  \|^guests: \|^states: \|summed' "$T/$name.log" | sed 's/^/# /'
	[ $rc -eq 0 ] || [ $rc -eq 3 ] ||
		{ echo "app $name failed (exit $rc):" && tail -n 20 "$T/$name.log"; } >&2
	[ $rc -eq 0 ] || [ $rc -eq 3 ]
}
j() { jq -r "$2" "$T/$1.json"; }
failures() { jq --arg t "$2" '[.failures[] | select(.detail | contains($t))] | length' "$T/$1.json"; }
# after NAME K: the distinct states cut after the K-th acknowledgement or later
after() { awk -v k="$2" '$2 >= k' "$T/$1/judge/app/acks.map" | wc -l; }
run() { echo "$PG/run.sh" "$@" "$T/tpl/cluster.tar"; }

if [ "${VM_FULL:-0}" = 1 ]; then
	MAX=260 N=12 JOBS=2
else
	MAX=5 N=2 JOBS=1
fi
# shellcheck disable=SC2046
app on --stack "$HONEST" --fs ext4,barrier=1 --max-states $MAX --seed 1 --jobs $JOBS \
	$(run on on $N)
ok $? "synchronous_commit=on, full_page_writes=on on ext4 barrier=1 over an honest cache"
[ "$(j on .ok)" = "$(j on .judged)" ] && [ "$(j on .violations.durable)" = 0 ] &&
	[ "$(failures on 'app:')" = 0 ] && [ "$(after on 2)" -ge 1 ]
ok $? "no state lost an acknowledged commit or failed the checker ($(j on .judged) states, $(after on 2) after a commit was acknowledged)"

# The same recording judged again (no recording boot) in its last state after an
# acknowledged commit, the cluster's control file removed first: the server refuses to
# start, which the checker reports as corruption it detected, never as lost commits.
s=$(awk '$2 >= 2 { s = $1 } END { print s }' "$T/on/judge/app/acks.map")
id=$(awk -v s="$s" '$1 == s { print $2 }' "$T/on/states/index")
printf '#!/bin/sh\nrm -f "$1/pg/global/pg_control"\nexec %s/check.sh "$@"\n' "$PG" >"$T/nocontrol.sh"
chmod 755 "$T/nocontrol.sh"
# shellcheck disable=SC2046
app broken --stack "$HONEST" --fs ext4,barrier=1 --max-states $MAX --seed 1 --jobs 1 \
	--log "$T/on/record/io.log" --state "$id" --keep "$T/keep" --with "$PG" \
	--checker "$T/nocontrol.sh" $(run on on $N)
ok $? "state $id judged again with pg_control removed"
[ "$(j broken .judged)" = 1 ] && [ "$(failures broken 'the server did not start')" = 1 ] &&
	[ "$(failures broken 'lost')" = 0 ] && [ "$(j broken .violations.durable)" = 0 ] &&
	[ "$(jq '[.failures[] | select(.detected_by == "app")] | length' "$T/broken.json")" = 1 ]
ok $? "a server that does not start is detected corruption, not loss: $(jq -r '.failures[0].detail' "$T/broken.json")"
[ "${VM_FULL:-0}" = 1 ] || done_testing

# the acceptance (tests/long/vm_pg_full.t)
[ "$(j on .judged)" -ge 100 ]
ok $? "at least 100 distinct states of the durable setting judged ($(j on .judged), $(after on 2) after a commit was acknowledged)"
# shellcheck disable=SC2046
app off --stack "$HONEST" --fs ext4,barrier=1 --max-states $MAX --seed 1 --jobs 2 \
	$(run off on $N)
ok $? "synchronous_commit=off, the same stack"
[ "$(failures off 'app: lost acknowledged work')" -gt 0 ] && [ "$(failures off 'app: corruption')" = 0 ]
ok $? "acknowledged commits lost in $(failures off 'app: lost') of $(j off .judged) states, none corrupt"
# a drive whose atomic unit is 4 KiB under PostgreSQL's 8 KiB page: a write in flight at
# the cut persists as any subset of its 4 KiB sectors
# shellcheck disable=SC2046
app tornoff --stack "$TORN" --fs ext4,barrier=1 --max-states $MAX --seed 1 --jobs 2 \
	$(run on off $N)
ok $? "full_page_writes=off on the tearing drive"
[ "$(failures tornoff 'app:')" -gt 0 ]
ok $? "breaks: $(failures tornoff 'app: corruption') corrupt and $(failures tornoff 'app: lost') lost of $(j tornoff .judged) states"
# shellcheck disable=SC2046
app tornon --stack "$TORN" --fs ext4,barrier=1 --max-states $MAX --seed 1 --jobs 2 \
	$(run on on $N)
ok $? "full_page_writes=on on the tearing drive"
[ "$(j tornon .ok)" = "$(j tornon .judged)" ] && [ "$(failures tornon 'app:')" = 0 ]
ok $? "never breaks ($(j tornon .judged) states, $(after tornon 2) after a commit was acknowledged)"
done_testing
