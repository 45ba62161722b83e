// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_mdhole.c — `blackout mdhole`: the md write hole checked block by block on the
 * host, from a recording of md members (docs/md.md, "The write hole, block by block"):
 * the explorer writes the distinct states of the log into a state store, and
 * md_hole_check reads each as md would read the array. No guest. Parsing and printing
 * only. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/md_view.h"
#include "blackout/rec.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

#define CMD "mdhole"

enum {
	OPT_STACK = CLI_LONG,
	OPT_FS,
	OPT_WORKLOAD,
	OPT_MAX_STATES,
	OPT_SEED,
	OPT_CONFIG_END, /* the crash_config options end here */
	OPT_LOG,
	OPT_STORE,
	OPT_LIST,
	OPT_IMAGE,
};
static const struct cli_opt mdhole_opts[] = {
    {OPT_LOG, "log", "FILE", "the recording of an md array's members (required)", 0},
    {OPT_STACK, "stack", "SPEC", "the stack the log was recorded on (as explore --log)", 0},
    {OPT_FS, "fs", "FS", "the filesystem configuration (as explore)", 0},
    {OPT_WORKLOAD, "workload", "W", "the workload whose marks the log holds", 0},
    {OPT_MAX_STATES, "max-states", "N", "budget; above it states are sampled", 0},
    {OPT_SEED, "seed", "N", "seed of the sampling (default 0)", 0},
    {OPT_STORE, "store", "DIR",
     "write the states there (kept); without --stack, read the\nstates already there (default: a "
     "temporary directory)",
     0},
    {OPT_LIST, "list", "FILE", "one line per hole block ('-': standard output)", 0},
    {OPT_IMAGE, "array-image", "FILE", "the array as read at the log's end (every write landed)",
     0},
    {0}};

static const struct cli_spec mdhole_spec = {
    "mdhole",
    "Linux md's write hole, block by block, from a recording of its members",
    "--log FILE --stack SPEC --fs FS --workload W [OPTIONS]\n"
    "--log FILE --store DIR [OPTIONS]",
    "Checks Linux md's write hole block by block on the host, with no guest: the\n"
    "recording of an md array's members (scripts/vmrecord --md, a log of several\n"
    "devices) is enumerated as `blackout explore --log` does (same --stack, --fs,\n"
    "--workload, --max-states, --seed), each distinct state is read as md reads the\n"
    "array from its superblocks (RAID4/5/6, a missing member's blocks rebuilt from\n"
    "parity, md's write journal replayed first), and compared with the array\n"
    "where the state's cut epoch began and where it ended, replayed from the\n"
    "log. A block equal in both that reads otherwise in the state is the write\n"
    "hole (docs/md.md). With --store DIR alone, the states are a store made before\n"
    "(e.g. vmtest --log's OUT/states).\n",
    mdhole_opts,
    0,
    0,
    "0 checked (whatever it found), 1 an error, 2 usage error.",
    "$ blackout mdhole --log md.log --store run/states --list -\n",
    NULL};

struct mx {
	const char *log, *store, *list, *image;
	struct crash_config cfg;
	char tmp[64];
};

static int parse(struct mx *m, int argc, char **argv)
{
	struct bo_err err = {{0}};
	struct cli_parse p;
	int k;
	char l[32];
	cli_parse_start(&p, &mdhole_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		if (k < OPT_CONFIG_END) {
			const char *opt = cli_opt_label(&mdhole_spec, k, l, sizeof(l));
			if (crash_config_option(&m->cfg, opt, p.arg, &err) < 0)
				return cli_usage_error(CMD, "%s", err.msg);
			continue;
		}
		*(k == OPT_LOG     ? &m->log
		  : k == OPT_STORE ? &m->store
		  : k == OPT_LIST  ? &m->list
		                   : &m->image) = p.arg;
	}
	if (k < 0)
		return p.status ? p.status : -1;
	if (!m->log)
		return cli_usage_error(CMD, "--log FILE is required (a recording of md members)");
	if (!m->cfg.stack && !m->store)
		return cli_usage_error(CMD, "give --stack, --fs and --workload to enumerate the "
		                            "log, or --store DIR of states made before");
	if (m->cfg.stack && (!m->cfg.fs || !m->cfg.workload))
		return cli_usage_error(CMD, "--stack needs --fs and --workload (the log's marks)");
	return 0;
}

/* The explorer's outside observer: nothing to mount, the array is read afterwards. */
static int observe(void *ctx, const char *store, size_t n, struct crash_observation *obs,
                   struct bo_err *err)
{
	(void)ctx, (void)store, (void)err;
	for (size_t i = 0; i < n; i++) {
		obs[i].mount_rc = -ENOTSUP;
		snprintf(obs[i].mount_msg, sizeof(obs[i].mount_msg),
		         "not mounted: blackout mdhole reads the md array on the host");
	}
	return 0;
}

/* The states of the log into the store; the explorer's state line printed. */
static int enumerate(struct mx *m)
{
	struct crash_workload *w = NULL;
	int rc = cli_vm_workload(CMD, m->cfg.workload, 24, &w);
	if (rc)
		return rc;
	struct crash_observer ob = {.name = "md", .store = m->store, .observe = observe};
	m->cfg.wl = w;
	m->cfg.log = m->log;
	m->cfg.observer = &ob;
	if (!m->cfg.max_states)
		m->cfg.max_states = 500;
	struct bo_err err = {{0}};
	struct crash_result *r = NULL;
	rc = crash_explore(&m->cfg, &r, &err);
	crash_workload_free(w);
	if (rc)
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	if (r->exhaustive)
		printf("states:   %llu built over %llu cut points: exhaustive; %llu distinct\n",
		       (unsigned long long)r->built, (unsigned long long)r->cuts,
		       (unsigned long long)r->judged);
	else
		printf("states:   %llu built over %llu cut points: sampled (seed %llu), %.3g%% of "
		       "2^%.1f outcomes; %llu distinct\n",
		       (unsigned long long)r->built, (unsigned long long)r->cuts,
		       (unsigned long long)r->seed, 100.0 * r->coverage, r->space_log2,
		       (unsigned long long)r->judged);
	crash_result_free(r);
	return 0;
}

static void print(const struct md_hole_result *r)
{
	printf("array:    %s\n", r->array);
	printf("md write hole: %zu of %zu states have blocks unchanged in their cut epoch read "
	       "wrong (%llu blocks",
	       r->hole_states, r->states - r->unread, (unsigned long long)r->hole_blocks);
	for (unsigned i = 0; i < r->nex && i < 3; i++) {
		const struct md_hole_example *x = &r->ex[i];
		printf("%s s%zu %s md block %llu (role %u on %s m%u, stripe %llu)",
		       i ? ";" : "; e.g.", x->state, x->id, (unsigned long long)x->block, x->role,
		       x->missing ? "missing member" : "member", x->dev,
		       (unsigned long long)x->stripe);
	}
	printf(")\n");
	printf("checked:  %llu block readings unchanged in their epoch, over %zu states\n",
	       (unsigned long long)r->unchanged, r->states - r->unread);
	if (strstr(r->array, "write journal"))
		printf("journal:  md's write journal replayed over each state and reference: %llu "
		       "stripes written back in the states, summed\n",
		       (unsigned long long)r->replayed);
	if (r->unread)
		printf("unread:   %zu states md would not assemble as read here (first: %s)\n",
		       r->unread, r->first_unread);
}

static int check(struct mx *m)
{
	struct bo_err err = {{0}};
	struct rec_log *log = NULL;
	int rc = rec_log_load(m->log, &log, &err);
	if (rc)
		return cli_fail(CMD, "--log: %s", bo_errstr(&err, rc));
	FILE *lf = NULL;
	if (m->list && !(lf = strcmp(m->list, "-") ? fopen(m->list, "w") : stdout))
		rc = cli_fail(CMD, "--list %s: %s", m->list, strerror(errno));
	struct md_hole_result res;
	if (rc == 0 && (rc = md_hole_check(m->store, log, lf, &res, &err)))
		rc = cli_fail(CMD, "%s", bo_errstr(&err, rc));
	if (lf && lf != stdout && fclose(lf) && rc == 0)
		rc = cli_fail(CMD, "--list %s: write failed", m->list);
	if (rc == 0)
		print(&res);
	if (rc == 0 && m->image && (rc = md_hole_array_image(m->store, log, m->image, &err)))
		rc = cli_fail(CMD, "--array-image: %s", bo_errstr(&err, rc));
	rec_log_free(log);
	return rc;
}

int cmd_mdhole(int argc, char **argv)
{
	struct mx m = {0};
	int rc = parse(&m, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (m.cfg.stack && !m.store) {
		snprintf(m.tmp, sizeof(m.tmp), "/tmp/bo-mdhole.XXXXXX");
		if (!mkdtemp(m.tmp))
			return cli_fail(CMD, "cannot make a temporary directory: %s",
			                strerror(errno));
		m.store = m.tmp;
	}
	if (m.cfg.stack)
		rc = enumerate(&m);
	if (rc == 0)
		rc = check(&m);
	if (m.tmp[0]) {
		char *argv_rm[] = {"rm", "-rf", m.tmp, NULL};
		cli_run(CMD, "removing the temporary store", argv_rm, true);
	}
	return rc;
}
