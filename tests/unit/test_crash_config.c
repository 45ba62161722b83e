// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_config.c — the rebuild line: crash_config_format and crash_config_parse
 * round-trip over many configs (specs with spaces and quotes included), /bin/sh
 * splits the line into the same words, and bad lines get errors that say why. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "tap.h"

/* Words /bin/sh makes of the line (after its program name), NUL-separated. */
static size_t sh_words(const char *line, char *out, size_t cap)
{
	const char *rest = strstr(line, " explore ");
	char *cmd = malloc(strlen(line) + 64);
	snprintf(cmd, strlen(line) + 64, "set --%s; printf '%%s\\0' \"$@\"", rest ? rest : "");
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(out, 1, cap, p) : 0;
	if (p)
		pclose(p);
	free(cmd);
	return n;
}

static bool same_words(char **words, const char *sh, size_t shlen)
{
	size_t off = 0;
	for (size_t i = 1; words[i]; i++) {
		size_t l = strlen(words[i]);
		if (off + l + 1 > shlen || memcmp(sh + off, words[i], l + 1) != 0)
			return false;
		off += l + 1;
	}
	return off == shlen;
}

static int nrt, nrt_ok, nsh, nsh_ok;

static void roundtrip(const struct crash_config *c, bool with_sh)
{
	char line[4096], again[4096];
	struct crash_config p;
	char **words = NULL;
	struct bo_err err = {{0}};
	int n = crash_config_format(c, NULL, line, sizeof(line));
	int rc = n < 0 ? n : crash_config_parse(line, &p, &words, &err);
	bool good = rc == 0 && crash_config_equal(c, &p) &&
	            crash_config_format(&p, NULL, again, sizeof(again)) == n &&
	            strcmp(line, again) == 0;
	nrt++;
	nrt_ok += good;
	if (!good)
		diag("round trip failed (%d %s): %s", rc, err.msg, line);
	if (good && with_sh) {
		static char sh[8192];
		size_t shlen = sh_words(line, sh, sizeof(sh));
		bool same = same_words(words, sh, shlen);
		nsh++;
		nsh_ok += same;
		if (!same)
			diag("sh splits it otherwise: %s", line);
	}
	crash_config_words_free(words);
}

static void expect_parse_error(const char *line, int want_rc, const char *want)
{
	struct crash_config c;
	char **words = (char **)1;
	struct bo_err err = {{0}};
	int rc = crash_config_parse(line, &c, &words, &err);
	ok(rc == want_rc && words == NULL && strstr(err.msg, want), "refused: %s -> '%s'", line,
	   err.msg);
}

int main(void)
{
	static const char *const stacks[] = {
	    "fault > disk(tear=none) > mem(size=16M)",
	    "raid5(chunk=4k,missing=1) > [disk > mem(size=6M)] x4",
	    "raid5(journal=true) > [disk > mem(size=6M) ; mem(size=4M)]",
	    "it's \"quoted\" $HOME `x` \\ back\\slash",
	    "tab\there\nnewline",
	    "''",
	};
	static const char *const fss[] = {"ext2", "ext3,data=ordered,barrier=1,metadata_csum",
	                                  "ext3,data=journal,verify=fast", "a b 'c'"};
	static const char *const wls[] = {
	    "append-fsync", "/tmp/my workloads/o'neil.wl", "--dash-first", "a\"b", "x$y", "-"};
	static const char *const arms[] = {NULL, "write-error after=5 every=25", "it's"};
	static const char *const states[] = {NULL, "p12w-3", "p40-s7", "odd id"};
	static const char *const logs[] = {NULL, "/tmp/io.log", "rec ord'ing.log"};
	static const uint64_t seeds[] = {0, 1, UINT64_MAX};
	static const uint64_t budgets[] = {0, 1, 300, UINT64_MAX};
	static const unsigned shards[][2] = {{0, 0}, {0, 1}, {3, 8}, {0, 4294967295u}};
	size_t k = 0;
	for (size_t s = 0; s < sizeof(stacks) / sizeof(*stacks); s++)
		for (size_t f = 0; f < sizeof(fss) / sizeof(*fss); f++)
			for (size_t w = 0; w < sizeof(wls) / sizeof(*wls); w++)
				for (size_t a = 0; a < sizeof(arms) / sizeof(*arms); a++, k++) {
					struct crash_config c = {
					    .stack = stacks[s],
					    .fs = fss[f],
					    .workload = wls[w],
					    .arm = arms[a],
					    .seed = seeds[k % 3],
					    .max_states = budgets[k % 4],
					    .shard = shards[k % 4][0],
					    .nshards = shards[k % 4][1],
					    .e2fsck = k % 5 == 1,
					    .state_id = states[k % 4],
					    .log = logs[k % 3],
					};
					roundtrip(&c, k % 7 == 0 || s == 3);
				}
	ok(nrt_ok == nrt && nrt > 400, "%d of %d configs round-trip through the line", nrt_ok, nrt);
	ok(nsh_ok == nsh && nsh > 100, "/bin/sh splits %d of %d lines into the parsed words",
	   nsh_ok, nsh);

	/* the matrix's write-errors cell: its rule is part of the line */
	struct crash_workload wl = {.name = "reuse-after-delete"};
	struct crash_config we = {.stack = "fault > disk(tear=none) > mem(size=16M)",
	                          .fs = "ext2",
	                          .wl = &wl,
	                          .seed = 1,
	                          .max_states = 300,
	                          .arm = "write-error after=5 every=25",
	                          .state_id = "p2w-1"};
	char line[512];
	crash_config_format(&we, NULL, line, sizeof(line));
	is_str(line,
	       "blackout explore --stack 'fault > disk(tear=none) > mem(size=16M)' --fs 'ext2' "
	       "--workload reuse-after-delete --seed 1 --max-states 300 --arm 'write-error "
	       "after=5 every=25' --state p2w-1",
	       "the write-errors line carries --arm, the workload named by wl");
	crash_config_format(&we, "/opt/my blackout", line, sizeof(line));
	ok(strncmp(line, "'/opt/my blackout' explore ", 27) == 0, "the program is quoted: %s",
	   line);
	crash_config_format(&we, "A=b", line, sizeof(line));
	ok(strncmp(line, "'A=b' explore ", 14) == 0, "a program with '=' is quoted: %s", line);
	we.nshards = 2;
	we.shard = 1;
	we.e2fsck = true;
	crash_config_format(&we, "bo", line, sizeof(line));
	ok(strstr(line, " --shard 1/2 --e2fsck --state p2w-1") != NULL, "shard and e2fsck: %s",
	   line);
	we.log = "run 1.log";
	crash_config_format(&we, "bo", line, sizeof(line));
	ok(strstr(line, " --workload reuse-after-delete --log 'run 1.log' --seed 1 ") != NULL,
	   "a recording to enumerate is on the line: %s", line);
	we.log = NULL;
	is_int(crash_config_format(&we, NULL, line, 40), -ENAMETOOLONG, "short buffer: refused");
	ok(strlen(line) == 39, "short buffer: truncated, terminated");
	we.wl = NULL;
	is_int(crash_config_format(&we, NULL, line, sizeof(line)), -EINVAL, "no workload: refused");

	struct crash_config c = {0};
	struct bo_err err = {{0}};
	is_int(crash_config_option(&c, "--seed", "7", &err), 2, "--seed takes a value");
	is_int(crash_config_option(&c, "--e2fsck", "x", &err), 1, "--e2fsck takes none");
	is_int(crash_config_option(&c, "--json", "x", &err), 0, "--json is not the config's");
	ok(crash_config_option(&c, "--stack", NULL, &err) == -EINVAL && strstr(err.msg, "--stack"),
	   "--stack without a value: '%s'", err.msg);
	ok(c.seed == 7 && c.e2fsck, "the options landed in the config");

	expect_parse_error("blackout explore --stack 'a --fs b --workload c", -EINVAL,
	                   "unterminated single quote");
	expect_parse_error("blackout explore --stack \"a --fs b --workload c", -EINVAL,
	                   "unterminated double quote");
	expect_parse_error("blackout explore --stack a > b --fs b --workload c", -EINVAL,
	                   "column 28: unquoted '>'");
	expect_parse_error("blackout explore --stack \"$HOME\" --fs b --workload c", -EINVAL,
	                   "'$' would be expanded");
	expect_parse_error("blackout explore --stack a --fs b --workload c --json x", -EINVAL,
	                   "'--json' is not an option that shapes crash states");
	expect_parse_error("blackout explore --fs b --workload c", -EINVAL,
	                   "needs --stack, --fs and --workload");
	expect_parse_error("blackout matrix --quick", -EINVAL, "not a rebuild line");
	expect_parse_error("", -EINVAL, "not a rebuild line");
	expect_parse_error("blackout explore --stack a --fs b --workload c --seed -1", -EINVAL,
	                   "--seed: '-1' is not a whole number");
	expect_parse_error("blackout explore --stack a --fs b --workload c --max-states 0", -ERANGE,
	                   "--max-states: '0' is out of range (1 or more)");
	expect_parse_error("blackout explore --stack a --fs b --workload c --shard 4/4", -ERANGE,
	                   "--shard's I: '4' is out of range (0 to 3)");
	expect_parse_error("blackout explore --stack a --fs b --workload c --shard 4", -EINVAL,
	                   "--shard: '4' is not I/N");
	expect_parse_error("blackout explore --stack a --fs b --workload c --state", -EINVAL,
	                   "--state needs a value");
	expect_parse_error("blackout explore --stack a\\", -EINVAL, "a backslash ends the line");

	/* what sh accepts besides what the formatter writes */
	char **words = NULL;
	int rc = crash_config_parse("./blackout  explore --stack \"a \\\"b\\\"\" --fs x\\ y "
	                            "--workload w'x'\"y\" --seed 0",
	                            &c, &words, &err);
	ok(rc == 0 && strcmp(c.stack, "a \"b\"") == 0 && strcmp(c.fs, "x y") == 0 &&
	       strcmp(c.workload, "wxy") == 0 && c.max_states == CRASH_MAX_STATES_DEFAULT &&
	       c.wl == NULL,
	   "double quotes, backslashes and joined quotes as sh reads them %s", err.msg);
	crash_config_words_free(words);
	return tap_done();
}
