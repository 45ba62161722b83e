// SPDX-License-Identifier: GPL-2.0-or-later
/* obsparse.c — reads a guest kernel's observation of a recovered crash state: the raw
 * "BO:OBS ..." lines src/guest/guest-init prints (docs/architecture.md, "Observation
 * lines") into a struct crash_observation. The bytes are untrusted: every number,
 * path and digest is checked and an error names the line. Other lines are ignored. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crash/crash_int.h"

#define OBS_MAX_NODES 100000
#define OBS_MAX_DEPTH 64
#define OBS_MAX_SIZE  (1ull << 40)
#define OBS_MAX_LINE  (2u << 20) /* a file of ~250 MiB in 4 KiB chunks */

struct oparse {
	struct crash_observation *obs;
	struct bo_err *err;
	unsigned line;
	uint32_t chunk;
	size_t nodes;
	bool mount, end, e2_seen, e2_problem, app_line, md_refused;
	const struct crash_checker_rules *ck; /* the `checker` line's, else e2fsck's */
};

static int perr(struct oparse *p, const char *what, const char *arg)
{
	return bo_errf(p->err, -EINVAL, "observation line %u: %s%s%.80s%s", p->line, what,
	               arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
}

/* A whole decimal number in [0, max] from s (up to the next space); *end past it. */
static int num(const char *s, uint64_t max, uint64_t *v, const char **end)
{
	uint64_t x = 0;
	const char *q = s;
	for (; *q >= '0' && *q <= '9'; q++) {
		if (x > (max - (uint64_t)(*q - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*q - '0');
	}
	if (q == s || (*q && *q != ' '))
		return -EINVAL;
	*v = x;
	*end = *q ? q + 1 : q;
	return 0;
}

static struct crash_obs_node *find_kid(struct crash_obs_node *d, const char *name, size_t len)
{
	for (size_t i = d->nkids; i-- > 0;) /* sorted input: the newest is the likely one */
		if (strlen(d->kids[i].name) == len && memcmp(d->kids[i].name, name, len) == 0)
			return &d->kids[i];
	return NULL;
}

/* Adds the node PATH names (its parent must be there, as a directory). */
static int add_node(struct oparse *p, const char *path, struct crash_obs_node **out)
{
	if (path[0] != '/' || strlen(path) > CRASH_WL_MAX_PATH)
		return perr(p, "not an absolute path of at most 1024 bytes:", path);
	if (++p->nodes > OBS_MAX_NODES)
		return perr(p, "more than 100000 files and directories", NULL);
	struct crash_obs_node *d = &p->obs->root;
	const char *c = path + 1;
	for (unsigned depth = 0;; depth++) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		if (len == 0 || len > 255 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return perr(
			    p, "a path component is empty, '.', '..' or over 255 bytes:", path);
		if (depth >= OBS_MAX_DEPTH)
			return perr(p, "deeper than 64 directories:", path);
		if (!slash) {
			struct crash_obs_node *nk = realloc(d->kids, (d->nkids + 1) * sizeof(*nk));
			if (!nk)
				return bo_errf(p->err, -ENOMEM, "observation: out of memory");
			d->kids = nk;
			struct crash_obs_node *k = &d->kids[d->nkids];
			memset(k, 0, sizeof(*k));
			if (!(k->name = strndup(c, len)))
				return bo_errf(p->err, -ENOMEM, "observation: out of memory");
			d->nkids++;
			*out = k;
			return 0;
		}
		d = find_kid(d, c, len);
		if (!d || !d->dir)
			return perr(p, "its directory was not listed before it:", path);
		c = slash + 1;
	}
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* "file SIZE DIGESTS PATH": DIGESTS is '-' (empty file), '!' (unreadable) or the
 * comma-separated MD5s of its chunks. */
static int parse_file(struct oparse *p, const char *s)
{
	uint64_t size;
	const char *q;
	if (num(s, OBS_MAX_SIZE, &size, &q))
		return perr(p, "file: a size up to 2^40 expected, not", s);
	const char *sp = strchr(q, ' ');
	if (!sp)
		return perr(p, "file: SIZE DIGESTS PATH expected, not", s);
	const char *dig = q, *path = sp + 1;
	size_t dlen = (size_t)(sp - q);
	bool unreadable = dlen == 1 && dig[0] == '!';
	if (!unreadable && !p->chunk)
		return perr(p, "file: no 'chunk' line before it", NULL);
	uint64_t n = unreadable ? 0 : (size + p->chunk - 1) / p->chunk;
	if (!unreadable && n == 0 && !(dlen == 1 && dig[0] == '-'))
		return perr(p, "file: an empty file's digests are '-', not", dig);
	if (n && dlen != n * 33 - 1)
		return perr(p, "file: one 32-digit MD5 per chunk expected, comma-separated:", dig);
	struct crash_obs_node *k;
	int rc = add_node(p, path, &k);
	if (rc)
		return rc;
	k->size = size;
	k->chunk = p->chunk;
	if (unreadable) {
		k->read_rc = -EIO;
		return 0;
	}
	if (n && !(k->md5 = calloc(n, sizeof(*k->md5))))
		return bo_errf(p->err, -ENOMEM, "observation: out of memory");
	for (uint64_t i = 0; i < n; i++) {
		const char *h = dig + i * 33;
		if (i + 1 < n && h[32] != ',')
			return perr(p, "file: digests are separated by commas:", dig);
		for (int b = 0; b < 16; b++) {
			int hi = hexval(h[2 * b]), lo = hexval(h[2 * b + 1]);
			if (hi < 0 || lo < 0)
				return perr(p, "file: a digest is 32 lowercase hex digits:", h);
			k->md5[i][b] = (uint8_t)(hi << 4 | lo);
		}
	}
	return 0;
}

/* The checker's output lines: clean only if it exits 0 and prints nothing but what
 * a clean run prints (checklines.c). The guest's checker, whichever it is, fills the
 * e2fsck slot: the outside checker the judge reads when blackout's fsck is not the
 * judge. */
static void checker_line(struct oparse *p, const char *text)
{
	struct crash_check *c = &p->obs->check[CRASH_CHECK_E2FSCK];
	if (p->e2_problem || p->ck->clean_line(text))
		return;
	p->e2_problem = true; /* the first problem line says why */
	c->clean = false;
	snprintf(c->why, sizeof(c->why), "%s: %.230s", p->ck->says, text);
}

/* "fsck EXIT": the checker's exit status; from its could_not_check up (e2fsck 8,
 * xfs_repair -n 2: a dirty log) it did not check, and its lines say nothing. */
static void checker_exit(struct oparse *p, uint64_t v)
{
	struct crash_check *c = &p->obs->check[CRASH_CHECK_E2FSCK];
	c->ran = true;
	c->clean = v == 0;
	if (v >= p->ck->could_not_check) {
		p->e2_problem = true;
		c->rc = -EIO;
		snprintf(c->why, sizeof(c->why), "%s could not check (exit %u)", p->ck->says,
		         (unsigned)v);
	} else if (v) {
		snprintf(c->why, sizeof(c->why), "%s: exit %u", p->ck->says, (unsigned)v);
	}
}

/* "app exit N" | "app signal N" | "app timeout": how the application's checker ended
 * (blackout app, docs/apps.md); "app-line TEXT": its output, the first line kept. */
static int app_obs(struct oparse *p, const char *s)
{
	struct crash_app_check *a = &p->obs->app;
	uint64_t v;
	const char *q;
	if (!strncmp(s, "app-line ", 9)) {
		if (!a->ran)
			return perr(p, "app-line before the 'app' line", NULL);
		if (!p->app_line)
			snprintf(a->line, sizeof(a->line), "%.250s", s + 9);
		p->app_line = true;
		return 0;
	}
	if (a->ran)
		return perr(p, "app: one line 'app exit N|signal N|timeout'", NULL);
	a->ran = true;
	a->exit = -1;
	if (!strcmp(s, "app timeout")) {
		a->timeout = true;
	} else if (!strncmp(s, "app exit ", 9)) {
		if (num(s + 9, 255, &v, &q) || *q)
			return perr(p, "app exit: a status 0..255, not", s + 9);
		a->exit = (int)v;
	} else if (!strncmp(s, "app signal ", 11)) {
		if (num(s + 11, 64, &v, &q) || *q || !v)
			return perr(p, "app signal: a signal 1..64, not", s + 11);
		a->sig = (int)v;
	} else {
		return perr(p, "app: 'app exit N', 'app signal N' or 'app timeout', not", s);
	}
	return 0;
}

/* "md started" | "md refused [MESSAGE]" then "md forced EXIT [MESSAGE]": how md came
 * up under the filesystem, before the mount (docs/md.md). A refusal is always followed
 * by the forced attempt, and a forced start that failed leaves nothing to mount. */
static int md_obs(struct oparse *p, const char *s)
{
	struct crash_observation *obs = p->obs;
	uint64_t v;
	const char *q;
	if (p->mount)
		return perr(p, "md: before the 'mount' line, not after it", NULL);
	if (!strcmp(s, "started") || !strcmp(s, "refused") || !strncmp(s, "refused ", 8)) {
		if (obs->md != CRASH_MD_NONE || p->md_refused)
			return perr(p, "md: one line 'md started' or 'md refused MESSAGE'", NULL);
		if (s[0] == 's') {
			obs->md = CRASH_MD_STARTED;
			return 0;
		}
		p->md_refused = true;
		snprintf(obs->md_msg, sizeof(obs->md_msg), "%.150s", s[7] ? s + 8 : "");
		return 0;
	}
	if (!strncmp(s, "forced ", 7)) {
		if (!p->md_refused || obs->md != CRASH_MD_NONE)
			return perr(p, "md forced: one line, after 'md refused'", NULL);
		if (num(s + 7, 255, &v, &q))
			return perr(p, "md forced: an exit status 0..255, not", s + 7);
		obs->md = v ? CRASH_MD_UNSTARTED : CRASH_MD_FORCED;
		return 0;
	}
	return perr(p, "md: 'md started', 'md refused MESSAGE' or 'md forced EXIT', not", s);
}

static int parse_line(struct oparse *p, const char *s)
{
	struct crash_observation *obs = p->obs;
	uint64_t v;
	const char *q;
	if (p->end)
		return perr(p, "a line after 'end'", NULL);
	if (!strncmp(s, "chunk ", 6)) {
		if (num(s + 6, 1u << 20, &v, &q) || *q || v < 512 || (v & (v - 1)))
			return perr(p, "chunk: a power of two from 512 to 1048576, not", s + 6);
		p->chunk = (uint32_t)v;
	} else if (!strncmp(s, "md ", 3)) {
		return md_obs(p, s + 3);
	} else if (!strncmp(s, "mount ", 6)) {
		if (p->mount || num(s + 6, 255, &v, &q))
			return perr(p, "mount: one line 'mount EXIT [MESSAGE]', not", s + 6);
		if (p->md_refused && obs->md == CRASH_MD_NONE)
			return perr(p, "mount: 'md refused' without 'md forced EXIT' before it",
			            NULL);
		if (obs->md == CRASH_MD_UNSTARTED && v == 0)
			return perr(p, "mount 0: md did not start ('md forced' failed)", NULL);
		p->mount = true;
		if (v) {
			obs->mount_rc = -EIO;
			snprintf(obs->mount_msg, sizeof(obs->mount_msg), "mount exited %u%s%.200s",
			         (unsigned)v, *q ? ": " : "", q);
		}
	} else if (!strncmp(s, "dir ", 4) || !strncmp(s, "file ", 5)) {
		if (!p->mount || obs->mount_rc)
			return perr(p, "a file or directory without a successful mount before it",
			            NULL);
		struct crash_obs_node *k;
		if (s[0] == 'f')
			return parse_file(p, s + 5);
		/* "dir ! PATH": a directory the walker could not list (all of it, or past
		 * a read error) */
		bool unlisted = !strncmp(s + 4, "! ", 2);
		const char *path = s + (unlisted ? 6 : 4);
		if (unlisted && !strcmp(path, "/")) {
			obs->root.read_rc = -EIO;
			return 0;
		}
		int rc = add_node(p, path, &k);
		if (rc == 0) {
			k->dir = true;
			k->read_rc = unlisted ? -EIO : 0;
		}
		return rc;
	} else if (!strncmp(s, "umount ", 7)) {
		if (num(s + 7, 255, &v, &q) || *q)
			return perr(p, "umount: an exit status, not", s + 7);
		obs->unmount_rc = v ? -EIO : 0;
	} else if (!strncmp(s, "checker ", 8)) {
		if (p->ck || p->e2_seen)
			return perr(p, "checker: one line 'checker NAME', before 'fsck EXIT'",
			            NULL);
		if (!(p->ck = crash_checker_find(s + 8)))
			return perr(p, "checker: e2fsck, xfs_repair or btrfs-check, not", s + 8);
	} else if (!strncmp(s, "fsck ", 5)) {
		if (p->e2_seen || num(s + 5, 255, &v, &q) || *q)
			return perr(p, "fsck: one line 'fsck EXIT', not", s + 5);
		p->e2_seen = true;
		if (!p->ck) /* observers before the `checker` line ran e2fsck */
			p->ck = crash_checker_find("e2fsck");
		checker_exit(p, v);
	} else if (!strncmp(s, "fsck-line ", 10)) {
		if (!p->e2_seen)
			return perr(p, "fsck-line before the 'fsck EXIT' line", NULL);
		checker_line(p, s + 10);
	} else if (!strncmp(s, "kernel ", 7)) {
		/* the kernel's own report of a bug it hit during the state (guest-init) */
		if (!s[7])
			return perr(p, "kernel: the kernel's line, not", "nothing");
		if (obs->kernel_lines++ == 0)
			snprintf(obs->kernel_msg, sizeof(obs->kernel_msg), "%.200s", s + 7);
	} else if (!strcmp(s, "end")) {
		p->end = true;
	} else if (!strncmp(s, "app ", 4) || !strncmp(s, "app-line ", 9)) {
		return app_obs(p, s);
	} else {
		return perr(p, "unknown observation", s);
	}
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct crash_obs_node *)a)->name,
	              ((const struct crash_obs_node *)b)->name);
}

/* Sorts every directory by name, as blackout's own observer lists them, and refuses
 * a name listed twice. */
static int sort_tree(struct oparse *p, struct crash_obs_node *d)
{
	if (d->nkids > 1)
		qsort(d->kids, d->nkids, sizeof(*d->kids), cmp_node);
	for (size_t i = 0; i < d->nkids; i++) {
		if (i && strcmp(d->kids[i - 1].name, d->kids[i].name) == 0)
			return bo_errf(p->err, -EINVAL, "observation: '%.80s' listed twice",
			               d->kids[i].name);
		int rc = sort_tree(p, &d->kids[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int crash_obs_parse_lines(const char *text, size_t len, struct crash_observation *obs,
                          struct bo_err *err)
{
	memset(obs, 0, sizeof(*obs));
	obs->root.dir = true;
	struct oparse p = {.obs = obs, .err = err};
	if (len > CRASH_OBS_MAX_TEXT)
		return bo_errf(err, -EFBIG, "observation: longer than %u bytes",
		               CRASH_OBS_MAX_TEXT);
	int rc = 0;
	for (size_t at = 0; at < len && rc == 0;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (text + at)) : len - at;
		p.line++;
		if (l >= 7 && memcmp(text + at, "BO:OBS ", 7) == 0) {
			char *buf;
			if (l > OBS_MAX_LINE || memchr(text + at, '\0', l))
				rc = perr(&p, "longer than 2 MiB, or holds a NUL byte", NULL);
			else if (!(buf = strndup(text + at + 7, l - 7)))
				rc = bo_errf(err, -ENOMEM, "observation: out of memory");
			else {
				size_t bl = l - 7;
				if (bl && buf[bl - 1] == '\r')
					buf[bl - 1] = '\0';
				rc = parse_line(&p, buf);
				free(buf);
			}
		}
		at += l + 1;
	}
	if (rc == 0 && (!p.mount || !p.end))
		rc = bo_errf(
		    err, -ENODATA,
		    "observation: no 'mount' or no 'end' line: the observer did not finish");
	if (rc == 0)
		rc = sort_tree(&p, &obs->root);
	if (rc)
		crash_observation_free(obs);
	return rc;
}

size_t crash_guest_completed(const char *markers, size_t len)
{
	size_t n = 0;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(markers + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (markers + at)) : len - at;
		if (l >= 8 && memcmp(markers + at, "BO:STEP ", 8) == 0)
			n++;
		at += l + 1;
	}
	return n;
}
