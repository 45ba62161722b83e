// SPDX-License-Identifier: GPL-2.0-or-later
/* acks.c — an application's acknowledgements, read back from the recorded I/O log
 * (marks "ack TEXT", each followed by "step K": docs/apps.md), and what the judging
 * guests need to run its checker on each state with the acknowledgements made before
 * that state's cut; plus the explorer's workload for such a recording. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/app.h"
#include "blackout/rec.h"

void app_acks_free(struct app_acks *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->text[i]);
	free(a->text);
	free(a->at);
	memset(a, 0, sizeof(*a));
}

/* "step K" with K a decimal number: K, else -1. */
static long long step_no(const char *m)
{
	if (strncmp(m, "step ", 5) || !m[5] || strspn(m + 5, "0123456789") != strlen(m + 5) ||
	    strlen(m + 5) > 9)
		return -1;
	return strtoll(m + 5, NULL, 10);
}

int app_acks_load(const char *path, struct app_acks *a, struct bo_err *err)
{
	struct rec_log *log;
	memset(a, 0, sizeof(*a));
	int rc = rec_log_load(path, &log, err);
	if (rc)
		return rc;
	size_t n = rec_log_len(log);
	a->run0 = SIZE_MAX;
	bool want_step = false;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->op != REC_MARK)
			continue;
		long long st = step_no(e->mark);
		if (st == 0 && a->run0 == SIZE_MAX)
			a->run0 = i;
		if (want_step) {
			if (st != (long long)a->n)
				rc = bo_errf(err, -EINVAL,
				             "%s: record %zu: mark 'ack %.40s' is not followed by "
				             "'step %zu' (bo_ack writes both)",
				             path, a->at[a->n - 1], a->text[a->n - 1], a->n);
			want_step = false;
			continue;
		}
		if (strncmp(e->mark, "ack ", 4))
			continue;
		if (a->run0 == SIZE_MAX) {
			rc = bo_errf(err, -EINVAL, "%s: record %zu: an ack before the run began",
			             path, i);
			break;
		}
		char **nt = realloc(a->text, (a->n + 1) * sizeof(*nt));
		if (nt)
			a->text = nt;
		size_t *na = nt ? realloc(a->at, (a->n + 1) * sizeof(*na)) : NULL;
		if (na)
			a->at = na;
		if (!nt || !na || !(a->text[a->n] = strdup(e->mark + 4))) {
			rc = -ENOMEM;
			break;
		}
		a->at[a->n++] = i;
		want_step = true;
	}
	if (rc == 0 && want_step)
		rc = bo_errf(err, -EINVAL, "%s: the last ack has no 'step %zu' after it", path,
		             a->n);
	if (rc == 0 && a->run0 == SIZE_MAX)
		rc = bo_errf(err, -EINVAL, "%s: no 'step 0' mark: the program never began", path);
	rec_log_free(log);
	if (rc)
		app_acks_free(a);
	return rc;
}

int app_acks_before(const struct app_acks *a, const char *id, size_t *k)
{
	char *end;
	if (id[0] != 'p' || id[1] < '0' || id[1] > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long pos = strtoull(id + 1, &end, 10);
	if (errno || (*end != '-' && *end != 'w'))
		return -EINVAL;
	/* the cut is before run entry pos: log entries [run0, run0 + pos) completed */
	size_t n = 0;
	while (n < a->n && a->at[n] < a->run0 + pos)
		n++;
	*k = n;
	return 0;
}

int app_judge_stage(const struct app_acks *a, const char *store, size_t n, const char *dir,
                    const char *out, struct bo_err *err)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/index", store);
	FILE *in = fopen(p, "r");
	if (!in)
		return bo_errf(err, -errno, "cannot read %s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/app", dir);
	char cmd[4096 + 16];
	snprintf(cmd, sizeof(cmd), "%s", dir);
	int rc = 0;
	if ((mkdir(cmd, 0755) && errno != EEXIST) || (mkdir(p, 0755) && errno != EEXIST))
		rc = bo_errf(err, -errno, "cannot make %s: %s", p, strerror(errno));
	FILE *acks = NULL, *map = NULL;
	if (rc == 0) {
		snprintf(p, sizeof(p), "%s/app/acks", dir);
		acks = fopen(p, "w");
		snprintf(p, sizeof(p), "%s/app/acks.map", dir);
		map = fopen(p, "w");
		if (!acks || !map)
			rc = bo_errf(err, -EIO, "cannot write %s/app: %s", dir, strerror(errno));
	}
	for (size_t i = 0; rc == 0 && i < a->n; i++)
		fprintf(acks, "%s\n", a->text[i]);
	char line[512];
	size_t seen = 0;
	while (rc == 0 && seen < n && fgets(line, sizeof(line), in)) {
		char name[32], id[256];
		size_t k;
		if (sscanf(line, "%31s %255s", name, id) != 2 || app_acks_before(a, id, &k))
			rc =
			    bo_errf(err, -EINVAL, "%s/index: a line not 's<N> ID COMPLETED': %.80s",
			            store, line);
		else
			fprintf(map, "%s %zu\n", name, k);
		seen++;
	}
	if (rc == 0 && seen < n)
		rc = bo_errf(err, -EINVAL, "%s/index: %zu states, not %zu", store, seen, n);
	fclose(in);
	if (acks && fclose(acks) && !rc)
		rc = bo_errf(err, -EIO, "writing %s/app/acks failed", dir);
	if (map && fclose(map) && !rc)
		rc = bo_errf(err, -EIO, "writing %s/app/acks.map failed", dir);
	if (rc == 0)
		rc = app_sh("cd \"$1\" && find . -mindepth 1 | sed 's|^\\./||' | "
		            "cpio -o -H newc --quiet | gzip -1 >\"$2\"",
		            (char *const[]){(char *)dir, (char *)out, NULL}, err);
	return rc;
}

int app_workload(size_t nacks, struct crash_workload **w, struct bo_err *err)
{
	static const char head[] = "name app\n"
	                           "summary an application under blackout app: each run step "
	                           "is an acknowledgement\n"
	                           "setup\nmkdir /keep\ncreate /keep/a\nwrite /keep/a 0 24k\n"
	                           "run\nmark app\n";
	if (nacks > CRASH_WL_MAX_STEPS - 1)
		return bo_errf(err, -E2BIG, "%zu acknowledgements: at most %u", nacks,
		               CRASH_WL_MAX_STEPS - 1);
	size_t len = sizeof(head) + nacks * 10;
	char *t = malloc(len);
	if (!t)
		return -ENOMEM;
	size_t o = (size_t)snprintf(t, len, "%s", head);
	for (size_t i = 0; i < nacks; i++)
		o += (size_t)snprintf(t + o, len - o, "mark ack\n");
	int rc = crash_workload_parse(t, o, "app", w, err);
	free(t);
	return rc;
}

void app_obs_hide(struct crash_observation *obs)
{
	struct crash_obs_node *r = &obs->root;
	for (size_t i = 0; i < r->nkids; i++) {
		if (strcmp(r->kids[i].name, "app"))
			continue;
		crash_obs_free(&r->kids[i]);
		memmove(&r->kids[i], &r->kids[i + 1], (r->nkids - i - 1) * sizeof(r->kids[0]));
		r->nkids--;
		return;
	}
}
