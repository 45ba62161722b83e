// SPDX-License-Identifier: GPL-2.0-or-later
/* reject.c — a run step the guest kernel refused, named from the recording's marks: the
 * compiled workload marks "error I TEXT" (the step's last error line) before "fail I"
 * (src/crash/guest.c), and the run stops there. The result then says which step, what
 * it asked and the errno, so a refusal is an outcome rather than a harness failure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/rec.h"
#include "blackout/vmexplore.h"

/* "WORD I[ REST]": I, and REST in *rest (or ""); -1 when the mark is another one. */
static long mark_step(const char *mark, const char *word, const char **rest)
{
	size_t lw = strlen(word), nd;
	if (strncmp(mark, word, lw) || mark[lw] != ' ')
		return -1;
	const char *d = mark + lw + 1;
	nd = strspn(d, "0123456789");
	if (nd == 0 || nd > 9 || (d[nd] && d[nd] != ' '))
		return -1;
	*rest = d[nd] ? d + nd + 1 : "";
	return strtol(d, NULL, 10);
}

/* The errno whose message is text (as strerror gives it; busybox and the guest's helper
 * print it last on their line), or 0. */
static int errno_of(const char *text)
{
	for (int e = 1; e < 200; e++)
		if (!strcmp(strerror(e), text))
			return e;
	return 0;
}

/* A step the filesystem could not carry out, as opposed to one it refused as asked. */
static bool failed_not_refused(int e)
{
	return e == EIO || e == ENOSPC || e == EROFS || e == EDQUOT || e == ENOMEM || e == EUCLEAN;
}

/* One step as the workload language writes it, without the newline. */
static void step_text(const struct crash_workload *w, size_t i, char *buf, size_t len)
{
	snprintf(buf, len, "?");
	if (!w || i >= w->nrun)
		return;
	struct crash_workload one = {.name = "x", .run = &w->run[i], .nrun = 1};
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		return;
	int rc = crash_workload_format(&one, f);
	if (fclose(f) == 0 && rc == 0 && text) {
		const char *run = strstr(text, "\nrun\n");
		if (run)
			snprintf(buf, len, "%.*s", (int)strcspn(run + 5, "\n"), run + 5);
	}
	free(text);
}

int vm_rejected(const char *logpath, const struct crash_workload *w, char *buf, size_t len,
                struct bo_err *err)
{
	buf[0] = '\0';
	struct rec_log *log = NULL;
	int rc = rec_log_load(logpath, &log, err);
	if (rc)
		return rc;
	char why[REC_MARK_MAX + 1] = "";
	long err_step = -1, failed = -1;
	for (size_t i = 0; i < rec_log_len(log) && failed < 0; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		const char *rest;
		long k;
		if (e->op != REC_MARK)
			continue;
		if ((k = mark_step(e->mark, "error", &rest)) >= 0) {
			err_step = k;
			snprintf(why, sizeof why, "%s", rest);
		} else if ((k = mark_step(e->mark, "fail", &rest)) >= 0) {
			failed = k;
		}
	}
	rec_log_free(log);
	if (failed < 0)
		return 0;
	char step[160];
	step_text(w, (size_t)failed, step, sizeof step);
	if (err_step != failed || !why[0]) {
		/* a step that failed with no error line: not the kernel's (a test the compiled
		 * step makes first, such as the file existing) */
		snprintf(buf, len, "step %ld (%s): failed without an error from the kernel", failed,
		         step);
		return 0;
	}
	int e = errno_of(why);
	const char *name = e ? strerrorname_np(e) : NULL;
	snprintf(buf, len, "step %ld (%s): %s the kernel: %s", failed, step,
	         e && failed_not_refused(e) ? "failed in" : "rejected by", name ? name : why);
	return 0;
}
