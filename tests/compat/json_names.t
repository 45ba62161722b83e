#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# json_names.t — JSON as other programs read it: a result whose failure names a file
# with bytes that are not UTF-8 and an em dash goes through `explore --merge`; jq and
# Python's json read the output, "—" stays "—", and the bytes decode back exactly by
# the scheme of docs/json.md. Bad fields are refused by name.
. "$BLACKOUT_SRC/tests/compat/lib.sh"

src="$BLACKOUT_SRC/fuzz/corpus/fuzz_workload/result.json"
# the detail of failure 0 becomes the bytes 2f 64 ff fe 2f 66 20 e2 80 94 (as the scheme
# writes them: ff -> U+EFFF, fe -> U+EFFE)
python3 - "$src" "$SCRATCH/in.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["failures"][0]["detail"] = "/d\uefff\ueffe/f \u2014 lost"
open(sys.argv[2], "w", encoding="utf-8").write(json.dumps(d, ensure_ascii=False))
PY
"$BLACKOUT" explore --merge "$SCRATCH/in.json" --quiet --json "$SCRATCH/out.json" 2>"$SCRATCH/err"
rc=$?
# 3: the merged exploration has failing states, as the input has
[ $rc -eq 3 ] && [ -s "$SCRATCH/out.json" ]
ok $? "explore --merge reads and writes the result (exit $rc)"
[ "$(jq -r '.failures[0].detail' "$SCRATCH/out.json")" = "$(printf '/d\356\277\277\356\277\276/f \342\200\224 lost')" ]
ok $? "jq reads it, the em dash printed as an em dash"
! grep -q '\\u00' "$SCRATCH/out.json"
ok $? "no byte of UTF-8 is written as its own \\u escape"
python3 - "$SCRATCH/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
def to_bytes(s):
    return b"".join(bytes([ord(c) - 0xef00]) if 0xef80 <= ord(c) <= 0xefff else c.encode()
                    for c in s)
sys.exit(0 if to_bytes(d["failures"][0]["detail"]) == b"/d\xff\xfe/f \xe2\x80\x94 lost" else 1)
PY
ok $? "Python's json reads it and the name decodes back to its exact bytes"

refuse() { # refuse FROM TO MESSAGE-PART
	sed "s/$1/$2/" "$src" >"$SCRATCH/bad.json"
	"$BLACKOUT" explore --merge "$SCRATCH/bad.json" --quiet 2>"$SCRATCH/err"
	rc=$?
	[ $rc -ne 0 ] && grep -q "$3" "$SCRATCH/err"
	ok $? "merge refuses $2: $(cat "$SCRATCH/err")"
}
refuse '"judged":1449' '"judged":1.5' "'judged' is a number, not an integer"
refuse '"judged":1449' '"judged":1e999' "real number overflow"
refuse '"judged":1449' '"judged":18446744073709551616' "too big integer"
refuse '"blackout_explore":1' '"blackout_explore":2' "format version"
refuse '"ok":1441' '"ok":1441,"ok":1' "duplicate object key"
refuse '"coverage":1.000000' '"coverage":-1e308' "'coverage' is -1e+308"
refuse '"silent":0' '"silent":999' "more than the 8 failing states"
done_testing
