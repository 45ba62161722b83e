// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_vmtest_wl.c — the plumbing scripts/vmtest calls (docs/vmtest.md): it parses the
 * arguments and prints; compiling and judging are library calls (crash/guest.c,
 * crash/obsparse.c, crash/judge.c).
 *
 *   blackout vmtest compile WORKLOAD DIR [--files N]
 *       DIR/workload.sh and DIR/wl/ for the initramfs (crash_guest_compile).
 *   blackout vmtest judge WORKLOAD DIR CUTS [--files N] [--fs FS[,OPTS]] [--stack S]
 *                         [--seed S] [--attach A] [--boot-s X] [--span N]
 *                         [--explore-json FILE]
 *       judges each cut from the raw lines the guests left in DIR (cutI.markers.txt:
 *       the steps that returned; chkI.markers.txt: the observation; cutI.host: whether
 *       the power went): one line per cut, DIR/verdicts.jsonl (one object per cut,
 *       then the summary) and the results in the explorer's format.
 *   blackout vmtest check-record OPTIONS
 *       scripts/vmrecord's options checked (exit 2 naming the fault).
 *   blackout vmtest points SEED SPAN CUTS
 *       the seeded cut points of the harness, one "I WRITE SEED" line per cut. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/dev.h"
#include "blackout/json.h"
#include "blackout/util.h"
#include "blackout/vmexplore.h"
#include "cli/cli.h"

struct vmargs {
	const char *workload, *dir, *fs, *stack, *attach, *boot_s, *ejson, *kver;
	unsigned files, cuts;
	uint64_t seed, span;
};

int cli_vm_workload(const char *cmd, const char *name, unsigned files, struct crash_workload **w)
{
	struct bo_err err = {{0}};
	int rc = vm_workload_load(name, files, w, &err);
	return rc ? cli_fail(cmd, "%s", bo_errstr(&err, rc)) : 0;
}

/* The workload (vmtest's own kinds are generated), and what a dry run saw each of its
 * run steps do. 0, or the exit status of a failure it reported. */
static int load(const char *cmd, const struct vmargs *a, struct crash_workload **w,
                struct crash_exec **exec)
{
	struct bo_err err = {{0}};
	*exec = NULL;
	int rc = cli_vm_workload(cmd, a->workload, a->files, w);
	if (rc)
		return rc;
	*exec = calloc((*w)->nrun ? (*w)->nrun : 1, sizeof(**exec));
	if (!*exec)
		rc = cli_fail(cmd, "out of memory");
	else if ((rc = crash_workload_dry_run(*w, *exec, &err)))
		rc = cli_fail(cmd, "%s: %s", (*w)->name, bo_errstr(&err, rc));
	if (rc) {
		free(*exec);
		crash_workload_free(*w);
	}
	return rc;
}

static int compile(const struct vmargs *a)
{
	struct crash_workload *w;
	struct crash_exec *exec;
	int rc = load("vmtest compile", a, &w, &exec);
	if (rc)
		return rc;
	struct bo_err err = {{0}};
	rc = crash_guest_compile(w, exec, a->dir, &err);
	if (rc)
		rc = cli_fail("vmtest compile", "%s", bo_errstr(&err, rc));
	free(exec);
	crash_workload_free(w);
	return rc;
}

/* DIR/NAME as text ("" when missing: the guest left nothing). */
static char *slurp(const char *dir, const char *name, unsigned i, size_t *len)
{
	char p[4096], n[64];
	snprintf(n, sizeof n, name, i);
	snprintf(p, sizeof p, "%s/%s", dir, n);
	char *buf = NULL;
	struct bo_err err = {{0}};
	if (bo_read_file(p, CRASH_OBS_MAX_TEXT, &buf, len, &err) != 0) {
		*len = 0;
		return strdup("");
	}
	return buf;
}

static const char *outcome_word(const struct crash_outcome *o, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int i = 0; i < CRASH_INV_N; i++)
		if (o->broken & (1u << i))
			at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s",
			                       at ? "," : "", crash_inv_name((enum crash_inv)i));
	return buf[0] ? buf : "ok";
}

/* Judges cut i from what its guests left; prints its line and JSON object. */
static int judge_cut(const struct vmargs *a, const struct crash_promises *base, unsigned i,
                     struct vm_cut_tally *t, FILE *vj)
{
	size_t wl, cl, hl;
	char *work = slurp(a->dir, "cut%u.markers.txt", i, &wl);
	char *chk = slurp(a->dir, "chk%u.markers.txt", i, &cl);
	char *host = slurp(a->dir, "cut%u.host", i, &hl);
	int rc = work && chk && host ? 0 : -ENOMEM;
	unsigned long long point = 0;
	int observed = 0;
	if (rc == 0 && sscanf(host, "observed %d point %llu", &observed, &point) == 2 && observed)
		t->observed++;
	struct crash_promises p = *base;
	p.completed = rc == 0 ? crash_guest_completed(work, wl) : 0;
	struct crash_observation obs;
	struct crash_outcome o;
	struct bo_err err = {{0}};
	int jrc = rc ? rc : crash_obs_parse_lines(chk, cl, &obs, &err);
	if (jrc == 0) {
		if (p.completed > base->completed)
			jrc = bo_errf(&err, -ERANGE, "the guest says %zu steps returned, of %zu",
			              p.completed, base->completed);
		else
			jrc = crash_judge(&p, &obs, &o);
		if (jrc == 0)
			rc = vm_cut_add(t, i, p.completed, point, &obs, &o);
		crash_observation_free(&obs);
	}
	char word[64];
	const char *verdict = jrc ? "unclassified" : outcome_word(&o, word, sizeof word);
	const char *how = jrc || !o.broken ? "" : o.detected ? " (detected)" : " (SILENT)";
	printf("vmtest: cut %2u at write %4llu: %s%s, %zu steps returned%s%s\n", i, point, verdict,
	       how, p.completed, jrc ? ": " : "", jrc ? bo_errstr(&err, jrc) : "");
	bo_json_write(json_pack("{s:i,s:I,s:s,s:b,s:o,s:o}", "cut", (int)i, "completed",
	                        (json_int_t)p.completed, "outcome", verdict, "detected",
	                        jrc == 0 && o.detected, "detected_by",
	                        bo_json_text(jrc ? "" : o.detected_by), "detail",
	                        bo_json_text(jrc ? bo_errstr(&err, jrc) : o.detail)),
	              vj, 0);
	free(work);
	free(chk);
	free(host);
	return rc;
}

static void summary(const struct vmargs *a, const struct vm_cut_tally *t, FILE *f)
{
	const struct crash_result *r = t->r;
	const char *mopt = a->fs && strchr(a->fs, ',') ? strchr(a->fs, ',') + 1 : "defaults";
	char fs[16];
	snprintf(fs, sizeof fs, "%.*s", (int)strcspn(a->fs ? a->fs : "ext4", ","),
	         a->fs ? a->fs : "ext4");
	json_t *j =
	    json_pack("{s:b,s:o,s:o,s:o,s:o,s:o}", "summary", 1, "stack",
	              bo_json_text(a->stack ? a->stack : ""), "fs", bo_json_text(fs),
	              "mount_options", bo_json_text(mopt), "workload", bo_json_text(a->workload),
	              "attachment", bo_json_text(a->attach ? a->attach : "virtio"));
	if (j && a->kver)
		json_object_set_new(j, "kernel", bo_json_text(a->kver));
	json_t *n = json_pack(
	    "{s:i,s:i,s:i,s:I,s:I,s:I,s:I,s:i,s:i,s:I,s:I,s:I,s:f,s:I}", "cuts", (int)a->cuts,
	    "observed", (int)t->observed, "classified", (int)t->classified, "ok", (json_int_t)r->ok,
	    "lost_synced", (json_int_t)r->viol[CRASH_INV_DURABLE], "bystander_damage",
	    (json_int_t)r->viol[CRASH_INV_BYSTANDER], "foreign_data",
	    (json_int_t)r->viol[CRASH_INV_STALE], "unmountable", (int)t->unmountable, "fsck_errors",
	    (int)t->fsck_errors, "atomic_replace", (json_int_t)r->viol[CRASH_INV_ATOMIC], "silent",
	    (json_int_t)r->silent, "detected", (json_int_t)r->detected, "boot_to_workload_s",
	    a->boot_s ? strtod(a->boot_s, NULL) : 0.0, "workload_writes", (json_int_t)a->span);
	if (j && n && json_object_update(j, n) == 0)
		bo_json_write(j, f, 0);
	else
		json_decref(j);
	json_decref(n);
	printf("vmtest: %u cuts, %u observed, %u classified: %llu ok, %llu lost synced data, %llu "
	       "bystander damage, %llu stale data, %u unmountable, %u fsck errors; %llu silent, "
	       "%llu detected\n",
	       a->cuts, t->observed, t->classified, (unsigned long long)r->ok,
	       (unsigned long long)r->viol[CRASH_INV_DURABLE],
	       (unsigned long long)r->viol[CRASH_INV_BYSTANDER],
	       (unsigned long long)r->viol[CRASH_INV_STALE], t->unmountable, t->fsck_errors,
	       (unsigned long long)r->silent, (unsigned long long)r->detected);
}

/* The cuts in the explorer's format (blackout explore --merge, matrix --vm). */
static int explore_json(const struct vmargs *a, struct vm_cut_tally *t)
{
	struct crash_result *r = t->r;
	snprintf(r->stack, sizeof r->stack, "%s", a->stack ? a->stack : "");
	snprintf(r->fs, sizeof r->fs, "linux-%s%s", a->fs ? a->fs : "ext4",
	         a->fs && strchr(a->fs, ',') ? "" : ",defaults");
	snprintf(r->workload, sizeof r->workload, "%s", a->workload);
	snprintf(r->kernel, sizeof r->kernel, "%s", a->kver ? a->kver : "");
	r->seed = a->seed;
	r->max_states = r->cuts = a->cuts;
	r->built = t->observed;
	r->nshards = 1;
	r->e2fsck_runs = t->classified;
	if (!a->ejson)
		return 0;
	FILE *f = fopen(a->ejson, "w");
	if (!f)
		return cli_fail("vmtest judge", "cannot write %s", a->ejson);
	int rc = crash_result_write_json(r, f);
	if (fclose(f) || rc)
		return cli_fail("vmtest judge", "writing %s failed", a->ejson);
	return 0;
}

static int judge(const struct vmargs *a)
{
	struct crash_workload *w;
	struct crash_exec *exec;
	int rc = load("vmtest judge", a, &w, &exec);
	if (rc)
		return rc;
	struct bo_err err = {{0}};
	struct crash_oracle *o = NULL;
	struct vm_cut_tally t = {.r = calloc(1, sizeof(*t.r))};
	char p[4096];
	snprintf(p, sizeof p, "%s/verdicts.jsonl", a->dir);
	FILE *vj = t.r ? fopen(p, "w") : NULL;
	if (!vj) {
		rc = cli_fail("vmtest judge", "cannot write %s", p);
		goto out;
	}
	if ((rc = crash_oracle_new(w, exec, &o, &err))) {
		rc = cli_fail("vmtest judge", "%s", bo_errstr(&err, rc));
		goto out;
	}
	/* the guest's ext3/ext4 trusts its journal at boot; e2fsck -fn judges consistency */
	const char *mo = a->fs && strchr(a->fs, ',') ? strchr(a->fs, ',') : "";
	struct crash_promises base = {
	    .oracle = o,
	    .completed = w->nrun,
	    .flags =
	        (strstr(mo, "data=writeback") ? CRASH_ORACLE_WRITEBACK : 0) |
	        (crash_oracle_fs_promises(a->fs ? a->fs : "ext4") ? CRASH_ORACLE_FS_PROMISE : 0),
	    .boot = CRASH_BOOT_TRUST,
	    .fsck_judges = false,
	};
	for (unsigned i = 1; i <= a->cuts && rc == 0; i++)
		rc = judge_cut(a, &base, i, &t, vj);
	if (rc) {
		rc = cli_fail("vmtest judge", "%s", strerror(-rc));
		goto out;
	}
	summary(a, &t, vj);
	rc = explore_json(a, &t);
out:
	if (vj && fclose(vj) && rc == 0)
		rc = cli_fail("vmtest judge", "writing %s failed", p);
	crash_result_free(t.r);
	crash_oracle_free(o);
	free(exec);
	crash_workload_free(w);
	return rc;
}

static int parse_opts(const char *cmd, int argc, char **argv, int first, struct vmargs *a)
{
	for (int i = first; i < argc; i += 2) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;
		if (!v)
			return cli_usage_error(cmd, "%s needs a value", o);
		if (!strcmp(o, "--files")) {
			int rc = cli_num(cmd, o, v, 0, 0, 1000, &n);
			if (rc)
				return rc;
			a->files = (unsigned)n;
		} else if (!strcmp(o, "--seed")) {
			int rc = cli_num(cmd, o, v, 0, 0, UINT64_MAX, &a->seed);
			if (rc)
				return rc;
		} else if (!strcmp(o, "--span")) {
			int rc = cli_num(cmd, o, v, 0, 0, UINT64_MAX, &a->span);
			if (rc)
				return rc;
		} else if (!strcmp(o, "--fs")) {
			a->fs = v;
		} else if (!strcmp(o, "--stack")) {
			a->stack = v;
		} else if (!strcmp(o, "--attach")) {
			a->attach = v;
		} else if (!strcmp(o, "--boot-s")) {
			a->boot_s = strspn(v, "0123456789.") == strlen(v) && *v ? v : "0";
		} else if (!strcmp(o, "--explore-json")) {
			a->ejson = v;
		} else if (!strcmp(o, "--kver")) {
			a->kver = v;
		} else {
			return cli_usage_error(cmd, "unknown argument '%s'", o);
		}
	}
	return 0;
}

/* The recording's options as scripts/vmrecord takes them, checked by the library
 * (vm_explore_check, vm_md_check): the script only starts and stops processes. */
static int check_record(int argc, char **argv)
{
	const char *cmd = "vmtest check-record", *md_fail = NULL;
	struct vm_explore_opts o = {.files = 24};
	struct bo_err err = {{0}};
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;
		int rc = 0;
		if (!strcmp(a, "--integrity")) {
			o.integrity = true;
			continue;
		}
		if (!v)
			return cli_usage_error(cmd, "%s needs a value", a);
		if (!strcmp(a, "--stack"))
			o.cfg.stack = v;
		else if (!strcmp(a, "--fs"))
			o.cfg.fs = v;
		else if (!strcmp(a, "--workload"))
			o.cfg.workload = v;
		else if (!strcmp(a, "--md"))
			o.md = v;
		else if (!strcmp(a, "--md-fail"))
			md_fail = v;
		else if (!strcmp(a, "--kernel"))
			o.kernel = v;
		else if (!strcmp(a, "--files") && !(rc = cli_num(cmd, a, v, 0, 1, 1000, &n)))
			o.files = (unsigned)n;
		else if (!strcmp(a, "--md-chunk") && !(rc = cli_num(cmd, a, v, 0, 1, 1u << 20, &n)))
			o.md_chunk = (unsigned)n;
		else if (!strcmp(a, "--timeout"))
			rc = cli_num(cmd, a, v, 0, 10, 3600, &n);
		else if (strcmp(a, "--out") && strcmp(a, "--initrd-extra") &&
		         strcmp(a, "--files") && strcmp(a, "--md-chunk"))
			return cli_usage_error(cmd, "unknown argument '%s'", a);
		if (rc)
			return rc;
		i++;
	}
	if (vm_explore_check(&o, &err) || vm_md_check(o.md, o.md_chunk, md_fail, &err))
		return cli_usage_error(cmd, "%s", err.msg);
	struct dev_spec *spec = NULL;
	int rc = dev_spec_parse(o.cfg.stack, &spec, &err);
	dev_spec_free(spec);
	return rc < 0 ? cli_fail(cmd, "%s", bo_errstr(&err, rc)) : 0;
}

/* Where the seeded-cut harness cuts (scripts/vmtest): `points SEED SPAN CUTS` prints,
 * for cut i = 1..CUTS, "i K OSEED" — the plugin write K in [1, SPAN] after which the
 * power goes, and the seed of what the device keeps (vm_cut_points). */
static int points(int argc, char **argv)
{
	const char *cmd = "vmtest points";
	uint64_t seed, span, cuts;
	if (argc != 5)
		return cli_usage_error(cmd, "usage: vmtest points SEED SPAN CUTS");
	int rc = cli_num(cmd, "SEED", argv[2], 0, 0, UINT64_MAX, &seed);
	if (rc == 0)
		rc = cli_num(cmd, "SPAN", argv[3], 0, 1, UINT64_MAX, &span);
	if (rc == 0)
		rc = cli_num(cmd, "CUTS", argv[4], 0, 1, 1000, &cuts);
	if (rc)
		return rc;
	struct vm_cut_point p[1000];
	vm_cut_points(seed, span, (unsigned)cuts, p);
	for (unsigned i = 0; i < cuts; i++)
		printf("%u %" PRIu64 " %" PRIu64 "\n", i + 1, p[i].write, p[i].seed);
	return 0;
}

int cmd_vmtest_plumbing(int argc, char **argv)
{
	struct vmargs a = {.files = 24};
	if (!strcmp(argv[1], "check-record"))
		return check_record(argc, argv);
	if (!strcmp(argv[1], "points"))
		return points(argc, argv);
	if (!strcmp(argv[1], "compile")) {
		if (argc < 4)
			return cli_usage_error("vmtest compile",
			                       "usage: vmtest compile WORKLOAD DIR [--files N]");
		a.workload = argv[2];
		a.dir = argv[3];
		int rc = parse_opts("vmtest compile", argc, argv, 4, &a);
		return rc ? rc : compile(&a);
	}
	if (argc < 5)
		return cli_usage_error("vmtest judge",
		                       "usage: vmtest judge WORKLOAD DIR CUTS "
		                       "[--files N] [--fs FS] [--explore-json F] ...");
	uint64_t cuts;
	a.workload = argv[2];
	a.dir = argv[3];
	int rc = cli_num("vmtest judge", "CUTS", argv[4], 0, 0, 1000, &cuts);
	if (rc == 0)
		rc = parse_opts("vmtest judge", argc, argv, 5, &a);
	a.cuts = (unsigned)cuts;
	return rc ? rc : judge(&a);
}
