// SPDX-License-Identifier: GPL-2.0-or-later
/* config.c — an exploration's configuration as the `blackout explore` command line
 * that rebuilds it, and back: the one place rebuild lines are formatted (CLI --keep,
 * matrix JSON and HTML) and the parser of the options that shape crash states. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/util.h"

/* Characters every POSIX shell takes literally anywhere in a word. */
static bool shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-./:=,+@%", *s))
			return false;
	return true;
}

struct out {
	char *buf;
	size_t len, used; /* used may pass len: the line was truncated */
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->used < o->len)
		memcpy(o->buf + o->used, s, o->used + n < o->len ? n : o->len - o->used);
	o->used += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* One word: bare when the shell takes it as is (and `always` is false), otherwise in
 * single quotes, each ' written as '\'' (the only character single quotes cannot
 * hold). Stack and fs specs are always quoted so a reader sees them as one value. */
static void word(struct out *o, const char *s, bool always)
{
	if (!always && shell_safe(s)) {
		puts_(o, s);
		return;
	}
	put(o, "'", 1);
	for (const char *q; (q = strchr(s, '\'')); s = q + 1) {
		put(o, s, (size_t)(q - s));
		puts_(o, "'\\''");
	}
	puts_(o, s);
	put(o, "'", 1);
}

static void opt(struct out *o, const char *name, const char *value, bool always)
{
	put(o, " ", 1);
	puts_(o, name);
	put(o, " ", 1);
	word(o, value, always);
}

static const char *workload_name(const struct crash_config *c)
{
	return c->workload ? c->workload : c->wl ? c->wl->name : NULL;
}

int crash_config_format(const struct crash_config *cfg, const char *prog, char *buf, size_t len)
{
	const char *wl = workload_name(cfg);
	if (!cfg->stack || !cfg->fs || !wl || !len)
		return -EINVAL;
	struct out o = {buf, len - 1, 0};
	/* a first word with '=' would be a shell variable assignment */
	prog = prog ? prog : "blackout";
	word(&o, prog, strchr(prog, '=') != NULL);
	puts_(&o, " explore");
	opt(&o, "--stack", cfg->stack, true);
	opt(&o, "--fs", cfg->fs, true);
	opt(&o, "--workload", wl, false);
	if (cfg->log)
		opt(&o, "--log", cfg->log, true);
	char num[48];
	snprintf(num, sizeof(num), "%" PRIu64, cfg->seed);
	opt(&o, "--seed", num, false);
	snprintf(num, sizeof(num), "%" PRIu64,
	         cfg->max_states ? cfg->max_states : CRASH_MAX_STATES_DEFAULT);
	opt(&o, "--max-states", num, false);
	if (cfg->arm)
		opt(&o, "--arm", cfg->arm, true);
	if (cfg->nshards > 1) {
		snprintf(num, sizeof(num), "%u/%u", cfg->shard, cfg->nshards);
		opt(&o, "--shard", num, false);
	}
	if (cfg->e2fsck)
		puts_(&o, " --e2fsck");
	if (cfg->state_id)
		opt(&o, "--state", cfg->state_id, false);
	buf[o.used < o.len ? o.used : o.len] = 0;
	return o.used <= o.len ? (int)o.used : -ENAMETOOLONG;
}

/* --shard I/N: N first, so the message about I can give its range */
static int parse_shard(struct crash_config *cfg, const char *v, struct bo_err *err)
{
	const char *slash = v ? strchr(v, '/') : NULL;
	char itext[32];
	uint64_t si, sn;
	if (!slash || (size_t)(slash - v) >= sizeof(itext))
		return bo_errf(err, -EINVAL, "--shard: '%s' is not I/N with 0 <= I < N (e.g. 0/4)",
		               v ? v : "");
	snprintf(itext, sizeof(itext), "%.*s", (int)(slash - v), v);
	int rc = bo_parse_num("--shard's N", slash + 1, 0, 1, UINT32_MAX, &sn, err);
	if (rc == 0)
		rc = bo_parse_num("--shard's I", itext, 0, 0, sn - 1, &si, err);
	if (rc)
		return rc;
	cfg->shard = (unsigned)si;
	cfg->nshards = (unsigned)sn;
	return 0;
}

int crash_config_option(struct crash_config *cfg, const char *opt_, const char *value,
                        struct bo_err *err)
{
	if (strcmp(opt_, "--e2fsck") == 0) {
		cfg->e2fsck = true;
		return 1;
	}
	static const char *const strs[] = {"--stack", "--fs",    "--workload",
	                                   "--arm",   "--state", "--log"};
	const char **dst[] = {&cfg->stack, &cfg->fs,       &cfg->workload,
	                      &cfg->arm,   &cfg->state_id, &cfg->log};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strcmp(opt_, strs[i]) == 0) {
			if (!value)
				return bo_errf(err, -EINVAL, "%s needs a value", opt_);
			*dst[i] = value;
			return 2;
		}
	int rc;
	if (strcmp(opt_, "--seed") == 0)
		rc = bo_parse_num(opt_, value, 0, 0, UINT64_MAX, &cfg->seed, err);
	else if (strcmp(opt_, "--max-states") == 0)
		rc = bo_parse_num(opt_, value, 0, 1, UINT64_MAX, &cfg->max_states, err);
	else if (strcmp(opt_, "--shard") == 0)
		rc = parse_shard(cfg, value, err);
	else
		return 0;
	return rc ? rc : 2;
}

/* ---- splitting a line into words the way sh does (quotes, no expansions) ---- */

struct words {
	char **v;
	size_t n, cap;
};

static int add_word(struct words *w, const char *s, size_t n)
{
	char **nv = bo_grow(w->v, &w->cap, w->n + 1, sizeof(*nv), 16); /* and the NULL after it */
	if (!nv)
		return -ENOMEM;
	w->v = nv;
	if (!(w->v[w->n] = strndup(s, n)))
		return -ENOMEM;
	w->v[++w->n] = NULL;
	return 0;
}

/* Words of line into w; what a shell would expand or treat as syntax (unquoted
 * | & ; < > ( ) $ ` * ? [ # ~, $ or ` inside double quotes) is an error naming the
 * column: a rebuild line never needs them, and guessing would rebuild another state. */
static int split(const char *line, struct words *w, struct bo_err *err)
{
	size_t len = strlen(line);
	char *cur = malloc(len + 1);
	if (!cur)
		return -ENOMEM;
	size_t n = 0;
	bool in_word = false;
	int rc = 0;
	const char *p = line;
	while (rc == 0 && *p) {
		char c = *p;
		size_t col = (size_t)(p - line) + 1;
		if (c == ' ' || c == '\t' || c == '\n') {
			if (in_word)
				rc = add_word(w, cur, n);
			in_word = false;
			n = 0;
			p++;
		} else if (c == '\'') {
			const char *end = strchr(p + 1, '\'');
			if (!end)
				rc = bo_errf(err, -EINVAL, "column %zu: unterminated single quote",
				             col);
			else {
				memcpy(cur + n, p + 1, (size_t)(end - p - 1));
				n += (size_t)(end - p - 1);
				in_word = true;
				p = end + 1;
			}
		} else if (c == '"') {
			in_word = true;
			for (p++; rc == 0 && *p != '"'; p++) {
				if (!*p)
					rc = bo_errf(err, -EINVAL,
					             "column %zu: unterminated double quote", col);
				else if (*p == '$' || *p == '`')
					rc = bo_errf(
					    err, -EINVAL,
					    "column %zu: '%c' would be expanded by the shell",
					    (size_t)(p - line) + 1, *p);
				else if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
					cur[n++] = *++p;
				else if (*p == '\\' && p[1] == '\n')
					p++;
				else
					cur[n++] = *p;
			}
			if (rc == 0)
				p++;
		} else if (c == '\\') {
			if (!p[1])
				rc = bo_errf(err, -EINVAL, "column %zu: a backslash ends the line",
				             col);
			else if (p[1] != '\n')
				cur[n++] = p[1], in_word = true;
			p += 2;
		} else if (strchr("|&;<>()$`*?[#~", c)) {
			rc = bo_errf(err, -EINVAL,
			             "column %zu: unquoted '%c' is shell syntax: quote the value",
			             col, c);
		} else {
			cur[n++] = c;
			in_word = true;
			p++;
		}
	}
	if (rc == 0 && in_word)
		rc = add_word(w, cur, n);
	free(cur);
	return rc;
}

void crash_config_words_free(char **words)
{
	for (size_t i = 0; words && words[i]; i++)
		free(words[i]);
	free(words);
}

int crash_config_parse(const char *line, struct crash_config *cfg, char ***words,
                       struct bo_err *err)
{
	*cfg = (struct crash_config){.max_states = CRASH_MAX_STATES_DEFAULT};
	*words = NULL;
	struct words w = {0};
	int rc = split(line, &w, err);
	if (rc == 0 && (w.n < 2 || w.v[0][0] == '-' || strcmp(w.v[1], "explore") != 0))
		rc = bo_errf(err, -EINVAL, "not a rebuild line: expected 'blackout explore ...'");
	for (size_t i = 2; rc == 0 && i < w.n;) {
		rc = crash_config_option(cfg, w.v[i], w.v[i + 1], err);
		if (rc == 0)
			rc = bo_errf(err, -EINVAL,
			             "'%s' is not an option that shapes crash states (stack, fs, "
			             "workload, log, seed, max-states, arm, shard, e2fsck, state)",
			             w.v[i]);
		else if (rc > 0)
			i += (size_t)rc, rc = 0;
	}
	if (rc == 0 && (!cfg->stack || !cfg->fs || !cfg->workload))
		rc = bo_errf(err, -EINVAL, "a rebuild line needs --stack, --fs and --workload");
	if (rc) {
		crash_config_words_free(w.v);
		*cfg = (struct crash_config){0};
		return rc;
	}
	*words = w.v;
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

bool crash_config_equal(const struct crash_config *a, const struct crash_config *b)
{
	uint64_t ma = a->max_states ? a->max_states : CRASH_MAX_STATES_DEFAULT;
	uint64_t mb = b->max_states ? b->max_states : CRASH_MAX_STATES_DEFAULT;
	bool sharded_a = a->nshards > 1, sharded_b = b->nshards > 1;
	return same_str(a->stack, b->stack) && same_str(a->fs, b->fs) &&
	       same_str(workload_name(a), workload_name(b)) && a->seed == b->seed && ma == mb &&
	       same_str(a->arm, b->arm) && sharded_a == sharded_b &&
	       (!sharded_a || (a->shard == b->shard && a->nshards == b->nshards)) &&
	       a->e2fsck == b->e2fsck && same_str(a->state_id, b->state_id) &&
	       same_str(a->log, b->log);
}
