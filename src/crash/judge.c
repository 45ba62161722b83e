// SPDX-License-Identifier: GPL-2.0-or-later
/* judge.c — the one home of a crash state's verdict: what the workload was promised
 * at the cut (the oracle, the data mode's allowances, what the system checks at boot)
 * against an observation (mount, tree, checkers), from any observer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blackout/crash.h"
#include "crash/crash_int.h"

static void detect(struct crash_outcome *o, const char *by)
{
	o->detected = true;
	if (!o->detected_by[0])
		snprintf(o->detected_by, sizeof(o->detected_by), "%s", by);
}

/* A checker found damage in a recovered state: would the user be told? Only if the
 * system runs a check at boot: ext2 always does (no journal); a journaling fs trusts
 * its journal and skips it — the seeds' point — unless verify=fast asks for the quick
 * metadata scrub at mount, which is then what must notice. */
static void boot_detects(const struct crash_promises *p, const struct crash_observation *obs,
                         struct crash_outcome *o)
{
	const struct crash_check *vf = &obs->check[CRASH_CHECK_VERIFY];
	if (p->boot == CRASH_BOOT_FSCK_FULL)
		detect(o, "fsck");
	else if (p->boot == CRASH_BOOT_VERIFY && vf->ran && vf->rc == 0 && !vf->clean)
		detect(o, "verify");
}

/* Consistency from the checkers: the configured judge, else e2fsck; e2fsck beside a
 * configured judge only says whether it agrees. `why` gets the deciding reason. */
static void judge_checkers(const struct crash_promises *p, const struct crash_observation *obs,
                           struct crash_outcome *o, char *why, size_t whylen)
{
	const struct crash_check *own = &obs->check[CRASH_CHECK_FSCK];
	const struct crash_check *e2 = &obs->check[CRASH_CHECK_E2FSCK];
	bool own_dirty = false;
	if (own->ran) {
		snprintf(why, whylen, "%s", own->why);
		if (own->rc == 0 && !own->clean) {
			own_dirty = true;
			o->broken |= 1u << CRASH_INV_CONSISTENT;
			boot_detects(p, obs, o);
		}
	}
	if (!e2->ran || e2->rc != 0)
		return;
	if (p->fsck_judges) {
		o->e2fsck_agrees = e2->clean == !own_dirty;
	} else if (!e2->clean) {
		o->broken |= 1u << CRASH_INV_CONSISTENT;
		boot_detects(p, obs, o);
		snprintf(why, whylen, "%s", e2->why);
	}
}

int crash_judge_tree(const struct crash_promises *p, const struct crash_observation *obs,
                     struct crash_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->e2fsck_agrees = -1;
	o->md = obs->md;
	if (obs->guest_hung) { /* a state that stops the system is noticed, and broken */
		o->broken = 1u << CRASH_INV_CONSISTENT;
		snprintf(o->detail, sizeof(o->detail), "consistent: the guest hung: %s",
		         obs->mount_msg[0] ? obs->mount_msg : "no answer");
		detect(o, "hung");
		return 0;
	}
	if (obs->mount_rc) {
		o->broken = 1u << CRASH_INV_CONSISTENT;
		snprintf(o->detail, sizeof(o->detail), "consistent: mount failed: %s",
		         obs->mount_msg[0] ? obs->mount_msg : strerror(-obs->mount_rc));
		detect(o, "mount");
		return 0;
	}
	struct crash_verdict v;
	int rc = crash_oracle_check(p->oracle, p->completed, &obs->root, p->flags, &v);
	if (rc)
		return rc;
	o->broken = v.broken;
	o->allowed = v.allowed;
	o->read_errors = v.read_errors;
	snprintf(o->detail, sizeof(o->detail), "%s", v.detail);
	if (v.read_errors)
		detect(o, "read");
	if (obs->unmount_rc) /* the filesystem noticed something on the way out */
		detect(o, "unmount");
	return 0;
}

void crash_judge_checks(const struct crash_promises *p, const struct crash_observation *obs,
                        struct crash_outcome *o)
{
	if (obs->mount_rc || obs->guest_hung) /* nothing checked: that is the verdict */
		return;
	char why[256] = "";
	judge_checkers(p, obs, o, why, sizeof(why));
	if (why[0] && (o->broken & (1u << CRASH_INV_CONSISTENT))) {
		size_t l = strlen(o->detail);
		snprintf(o->detail + l, sizeof(o->detail) - l, "%sconsistent: fsck: %.200s",
		         l ? "; " : "", why);
	}
}

/* The application's checker (blackout app): its acknowledgements are promises like a
 * returned fsync, so one it reports lost breaks `durable`, and nobody told the user
 * (silent); corruption it detected breaks `consistent`, noticed by the application; a
 * checker that crashed, hung or exited otherwise is reported as such, never as ok. */
static void judge_app(const struct crash_observation *obs, struct crash_outcome *o)
{
	const struct crash_app_check *a = &obs->app;
	if (!a->ran || obs->mount_rc || obs->guest_hung || a->exit == 0)
		return;
	char what[300];
	if (a->exit == 1) {
		o->broken |= 1u << CRASH_INV_DURABLE;
		snprintf(what, sizeof(what), "app: lost acknowledged work: %s", a->line);
	} else {
		o->broken |= 1u << CRASH_INV_CONSISTENT;
		if (a->exit == 2)
			detect(o, "app");
		else
			detect(o, a->timeout ? "checker-hang" : "checker-crash");
		if (a->exit == 2)
			snprintf(what, sizeof(what), "app: corruption detected: %s", a->line);
		else if (a->timeout)
			snprintf(what, sizeof(what),
			         "app: the checker hung (killed at its timeout)");
		else if (a->sig)
			snprintf(what, sizeof(what), "app: the checker crashed (signal %d): %s",
			         a->sig, a->line);
		else
			snprintf(what, sizeof(what), "app: the checker failed (exit %d): %s",
			         a->exit, a->line);
	}
	size_t l = strlen(o->detail);
	snprintf(o->detail + l, sizeof(o->detail) - l, "%s%.250s", l ? "; " : "", what);
}

/* The kernel reported a bug it hit while mounting, reading, unmounting or checking the
 * state (a WARN, a BUG, an oops, a sanitizer; the guest read its log): whatever the
 * files say, that state broke the kernel's own assumptions, and its log says so. */
static void judge_kernel(const struct crash_observation *obs, struct crash_outcome *o)
{
	if (!obs->kernel_lines || obs->guest_hung)
		return;
	o->broken |= 1u << CRASH_INV_CONSISTENT;
	detect(o, "kernel");
	size_t l = strlen(o->detail);
	snprintf(o->detail + l, sizeof(o->detail) - l,
	         "%sconsistent: the kernel reported: %.200s%s", l ? "; " : "", obs->kernel_msg,
	         obs->kernel_lines > 1 ? " (and more)" : "");
}

int crash_judge(const struct crash_promises *p, const struct crash_observation *obs,
                struct crash_outcome *o)
{
	int rc = crash_judge_tree(p, obs, o);
	if (rc == 0) {
		crash_judge_checks(p, obs, o);
		judge_app(obs, o);
		judge_kernel(obs, o);
	}
	/* md refuses every dirty degraded array, damaged or not: the refusal tells the user
	 * nothing about this state's damage, so it detects nothing; the detail says it */
	if (rc == 0 && o->broken && obs->md == CRASH_MD_FORCED) {
		size_t l = strlen(o->detail);
		snprintf(o->detail + l, sizeof(o->detail) - l,
		         "; md refused to start it (%.100s), judged after --run --force",
		         obs->md_msg[0] ? obs->md_msg : "no message");
	}
	return rc;
}
