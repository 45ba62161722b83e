/* SPDX-License-Identifier: GPL-2.0-or-later */
/* app.h — crash-testing an unmodified application (blackout app, docs/apps.md): the
 * host's checks of the program and its checker, the per-run cpio that carries them into
 * the guest, and the acknowledgements read back from the recorded I/O log. The
 * recording, the enumeration and the judging are the real-kernel pipeline's
 * (docs/realkernel.md); this layer only feeds it. */
#ifndef BLACKOUT_APP_H
#define BLACKOUT_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "blackout/crash.h"
#include "blackout/util.h"

/* Files to carry into the guest, by their host path (deduplicated). */
struct app_files {
	char **path;
	size_t n, cap;
};
void app_files_free(struct app_files *f);

/* Checks that PATH (named WHAT in errors: "program", "checker", "--with") can run in
 * the guest: a regular file, executable, and either an ELF whose libraries `ldd` finds
 * all of (each added to libs, the dynamic loader included) or a `#!` script for
 * /bin/sh (the guest's busybox). The error names the file and what is wrong. */
int app_check_exec(const char *what, const char *path, struct app_files *libs, struct bo_err *err);

struct app_spec {
	const char *prog, *checker;
	char *const *args; /* the program's arguments */
	size_t nargs;
	/* more executables, carried to /app/bin, or directories whose files (not their
	 * subdirectories) are carried at their host paths, executable ELF files with their
	 * libraries */
	const char *const *with;
	size_t nwith;
	const char *guest_sh;   /* src/guest/guest-app.sh */
	unsigned prog_timeout;  /* seconds for the program in the recording boot */
	unsigned check_timeout; /* seconds for the checker on one state */
};

/* Writes the per-run tree under DIR (made; must not exist) and OUT, a newc cpio of it
 * (not compressed: a guest under TCG copies a database server's libraries faster than
 * it inflates them), appended by the caller after the cached initramfs: the kernel unpacks
 * concatenated archives, so the cache is never rebuilt. Every file of spec is checked
 * first (app_check_exec). */
int app_stage(const struct app_spec *spec, const char *dir, const char *out, struct bo_err *err);

/* The acknowledgements of a recorded run: each mark "ack TEXT", in log order. */
struct app_acks {
	char **text;
	size_t *at; /* its index in the log */
	size_t n;
	size_t run0; /* the index of the "step 0" mark */
};
/* Reads LOG's acknowledgements; each must be followed by the next "step K" mark
 * (bo_ack writes both), which the explorer counts as a completed step. */
int app_acks_load(const char *log, struct app_acks *a, struct bo_err *err);
void app_acks_free(struct app_acks *a);
/* The number of acknowledgements made before the cut of explorer state ID ("p<POS>..."). */
int app_acks_before(const struct app_acks *a, const char *id, size_t *k);
/* For the judging guests: DIR/app/acks (every acknowledgement, one a line) and
 * DIR/app/acks.map ("s<N> K" for each of the n states of STORE's index), then OUT, the
 * gzipped cpio of DIR. */
int app_judge_stage(const struct app_acks *a, const char *store, size_t n, const char *dir,
                    const char *out, struct bo_err *err);
/* The workload the explorer walks a recording of `nacks` acknowledgements with:
 * bystanders made in the set-up, then one run step that began the program and one per
 * acknowledgement (marks: the oracle asks nothing of the program's own files). */
int app_workload(size_t nacks, struct crash_workload **w, struct bo_err *err);
/* Takes the program's directory (/app) out of an observed tree: its files are the
 * checker's to judge, not the workload oracle's. */
void app_obs_hide(struct crash_observation *obs);
/* Runs `sh -c SCRIPT sh ARGS...`; 0, or -EIO with the failure in err. */
int app_sh(const char *script, char *const args[], struct bo_err *err);

#endif
