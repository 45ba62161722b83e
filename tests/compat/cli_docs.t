#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_docs.t — the documentation's examples are what the commands print. Every fenced
# block tagged `console` in docs/ (and README.md) holds `$ blackout ...` lines (a line
# ending in \ continues), each followed by the output the docs show; this runs each
# command (through bash, in a scratch directory, blackout being the build's) and
# compares. The output compared is standard output, or standard error when the command
# printed nothing on standard output (an error example). In the docs' text, a line
# that is only `...` stands for any number of lines, and `...` inside a line for any
# text: what varies from run to run (a time) or what the example leaves out. Exit
# statuses are not compared (docs/ states them in words).
. "$BLACKOUT_SRC/tests/compat/lib.sh"

work="$SCRATCH/run"
mkdir -p "$work"
python3 - "$BLACKOUT_SRC" "$BLACKOUT" "$work" <<'PY'
import glob, os, re, subprocess, sys

src, blackout, work = sys.argv[1:4]
files = sorted(glob.glob(os.path.join(src, "docs", "**", "*.md"), recursive=True))
files.append(os.path.join(src, "README.md"))

def examples(path):
    """(line number, command, expected lines) of every console block of path."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^( *)```console\s*$", lines[i])
        i += 1
        if not m:
            continue
        ind = len(m.group(1))
        block = []
        while i < len(lines) and not re.match(r"^ *```\s*$", lines[i]):
            block.append((i + 1, lines[i][ind:] if lines[i][:ind].strip() == "" else lines[i]))
            i += 1
        i += 1
        k = 0
        while k < len(block):
            no, line = block[k]
            if not line.startswith("$ "):
                raise SystemExit("%s:%d: a console block's output comes after a '$ ' line"
                                 % (path, no))
            cmd = line[2:]
            while cmd.endswith("\\") and k + 1 < len(block):
                k += 1
                cmd = cmd[:-1] + " " + block[k][1].strip()
            k += 1
            out = []
            while k < len(block) and not block[k][1].startswith("$ "):
                out.append(block[k][1])
                k += 1
            yield no, cmd, out

def pattern(out):
    """The expected lines as a regular expression over the whole output."""
    parts = []
    for line in out:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(p) for p in line.split("...")) + r"\n")
    return "".join(parts)

n = failed = 0
for path in files:
    if not os.path.exists(path):
        continue
    for no, cmd, out in examples(path):
        n += 1
        name = "%s:%d: %s" % (os.path.relpath(path, src), no, cmd if len(cmd) < 70 else cmd[:67] + "...")
        if not re.match(r"^blackout( |$)", cmd):
            print("not ok %d - %s (a documented example runs blackout)" % (n, name))
            failed += 1
            continue
        env = dict(os.environ, NO_COLOR="1", PATH=os.path.dirname(blackout) + ":" + os.environ["PATH"])
        p = subprocess.run(["bash", "-c", '"$BLACKOUT_BIN"' + cmd[len("blackout"):]],
                           cwd=work, env=dict(env, BLACKOUT_BIN=blackout),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        got = (p.stdout or p.stderr).decode("utf-8", "replace")
        if got and not got.endswith("\n"):
            got += "\n"
        if re.fullmatch(pattern(out), got, re.S):
            print("ok %d - %s" % (n, name))
            continue
        failed += 1
        print("not ok %d - %s" % (n, name))
        for line in out:
            print("#  docs: %s" % line)
        for line in got.split("\n")[:40]:
            print("#   got: %s" % line)
print("# %d documented examples run, %d differ" % (n, failed))
open(os.path.join(work, "count"), "w").write("%d %d\n" % (n, failed))
PY
read -r n failed <"$work/count" || { n=0; failed=1; }
TEST_N=$n
TEST_FAIL=$failed
[ "$n" -ge 3 ]
ok $? "at least three documented examples found and run ($n)"
done_testing
