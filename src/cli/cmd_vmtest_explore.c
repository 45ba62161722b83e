// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_vmtest_explore.c — `blackout vmtest` without --cuts: its options into
 * vm_explore's (record the guest's run once, enumerate its crash states, judge every
 * distinct state in real-kernel guests with the one judge; src/vm/explore.c), then the
 * explorer's summary and its JSON (docs/vmtest.md). Parsing and printing only. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/util.h"
#include "blackout/vmexplore.h"
#include "cli/cli.h"

#define CMD "vmtest"
/* A guest judges a few states a second: the explorer's default budget (100000) would
 * keep a person waiting for hours; 500 distinct-or-not states take minutes. */
#define VMTEST_MAX_STATES 500

struct vx {
	struct vm_explore_opts o;
	const char *json;
	bool tty;
	double t0, last;
};

static int parse(struct vx *v, int argc, char **argv)
{
	struct bo_err err = {{0}};
	struct vm_explore_opts *o = &v->o;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		/* the options that shape the states are the explorer's own */
		if (!strcmp(a, "--stack") || !strcmp(a, "--fs") || !strcmp(a, "--workload") ||
		    !strcmp(a, "--max-states") || !strcmp(a, "--seed") || !strcmp(a, "--shard") ||
		    !strcmp(a, "--state")) {
			int used = crash_config_option(&o->cfg, a, val, &err);
			if (used < 0)
				return cli_usage_error(CMD, "%s", err.msg);
			i += used - 1;
			continue;
		}
		if (!strcmp(a, "--integrity")) {
			o->integrity = true;
			continue;
		}
		if (!strcmp(a, "--prune")) {
			o->cfg.prune = true;
			continue;
		}
		if (!val)
			return cli_usage_error(CMD, "%s needs a value", a);
		uint64_t n;
		int rc = 0;
		if (!strcmp(a, "--jobs")) {
			rc = cli_num(CMD, a, val, 0, 1, 64, &n);
			o->jobs = (unsigned)n;
		} else if (!strcmp(a, "--files")) {
			rc = cli_num(CMD, a, val, 0, 0, 1000, &n);
			o->files = (unsigned)n;
		} else if (!strcmp(a, "--md-drop")) {
			rc = cli_num(CMD, a, val, 0, 0, 63, &n);
			o->md_drop = (unsigned)n;
			o->md_drop_set = true;
		} else if (!strcmp(a, "--prune-check")) {
			rc = cli_num(CMD, a, val, 0, 1, 1000000, &n);
			o->cfg.prune_check = (unsigned)n;
		} else if (!strcmp(a, "--md-chunk")) {
			rc = cli_num(CMD, a, val, 0, 1, 1u << 20, &n);
			o->md_chunk = (unsigned)n;
		} else if (!strcmp(a, "--log")) {
			o->log = val;
		} else if (!strcmp(a, "--out")) {
			o->out = val;
		} else if (!strcmp(a, "--json")) {
			v->json = val;
		} else if (!strcmp(a, "--keep")) {
			o->cfg.keep_dir = val;
		} else if (!strcmp(a, "--md")) {
			o->md = val;
		} else if (!strcmp(a, "--kernel")) {
			o->kernel = val;
		} else {
			return cli_usage_error(CMD, "unknown argument '%s'", a);
		}
		if (rc)
			return rc;
		i++;
	}
	if (o->cfg.prune_check && !o->cfg.prune)
		return cli_usage_error(CMD, "--prune-check goes with --prune");
	if (vm_explore_check(o, &err))
		return cli_usage_error(CMD, "%s", err.msg);
	return 0;
}

static void progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct vx *v = ctx;
	const struct crash_config *c = &v->o.cfg;
	if (!strcmp(phase, "recording")) {
		printf("vmtest: recording %s on %s (%s) in one boot\n", c->workload, c->fs,
		       c->stack);
		return;
	}
	double now = bo_now();
	bool guests = !strcmp(phase, "judged in guests");
	if (guests && done == 0) { /* the guests start: their own clock */
		if (v->tty)
			fputc('\n', stderr);
		v->t0 = now;
		return;
	}
	double s = now - v->t0;
	if (done != total && now - v->last < (v->tty ? 0.25 : 5))
		return;
	v->last = now;
	double left = done && total > done ? s / (double)done * (double)(total - done) : 0;
	fprintf(stderr,
	        "%svmtest: %s %" PRIu64 " of %" PRIu64
	        " states, %.0f s so far, about %.0f s left%s",
	        v->tty ? "\r" : "", phase, done, total, s, left, v->tty ? "   " : "\n");
}

static void print_times(const struct vm_explore_info *info, const struct crash_result *r, FILE *f)
{
	const struct vm_pool_stats *s = &info->pool;
	fprintf(f,
	        "\ntime: %.1fs (enumerate %.1f, of which views and store %.1f; guests %.1f)\n"
	        "guests: %u boots, %zu states observed, %u hung%s; summed over guests: boot %.1f, "
	        "connect %.1f, mount %.1f, read %.1f, umount %.1f, check %.1f, other %.1f s\n",
	        r->t_total, r->t_total - r->t_observe, r->t_store, r->t_observe, s->boots,
	        s->observed, s->hung, vm_retried_note(s), s->boot, s->connect, s->mount, s->read,
	        s->umount, s->check, s->other);
	if (r->t_observe > 0 && s->wall > 0)
		fprintf(f, "        %.2f distinct states judged per second in all\n",
		        (double)r->judged / r->t_observe);
}

int cmd_vmtest_explore(int argc, char **argv)
{
	struct vx v = {.o = {.files = 24, .cfg = {.max_states = VMTEST_MAX_STATES}}};
	int rc = parse(&v, argc, argv);
	if (rc)
		return rc;
	v.tty = isatty(2);
	v.t0 = bo_now();
	v.last = -1e9;
	v.o.progress = progress;
	v.o.progress_ctx = &v;
	struct bo_err err = {{0}};
	struct crash_result *r = NULL;
	struct vm_explore_info info;
	rc = vm_explore(&v.o, &r, &info, &err);
	if (v.tty)
		fputc('\n', stderr);
	if (rc)
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	return cli_vm_report(CMD, r, &info, v.json, print_times);
}
