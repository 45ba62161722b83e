// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_judge.c — the one judge (crash_judge) on observations as a guest kernel
 * reports them (crash_obs_parse_lines: sizes and per-chunk MD5s, mount, e2fsck): a
 * state holding everything is ok, a lost synced chunk breaks durable, bytes nobody
 * wrote break stale, damage is detected only when something at boot would say so,
 * e2fsck's second opinion is counted, and bad observation lines are refused naming
 * the line. Also the dry run and vmtest's own workloads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "crash/crash_int.h"
#include "tap.h"

static const char *WL = "setup\n"
                        "mkdir /keep\n"
                        "create /keep/a\n"
                        "write /keep/a 0 5k\n"
                        "run\n"
                        "create /log\n"
                        "fsync-dir /\n"
                        "append /log 3k\n"
                        "fsync /log\n"
                        "append /log 2k\n"
                        "fsync /log\n";

#define B(i) (1u << (i))

/* "file SIZE DIGESTS PATH" for these bytes, in 4 KiB chunks. */
static void file_line(FILE *f, const char *path, const uint8_t *b, size_t size)
{
	fprintf(f, "BO:OBS file %zu ", size);
	if (!size)
		fputc('-', f);
	for (size_t off = 0; off < size; off += 4096) {
		uint8_t d[16];
		crash_md5(b + off, size - off < 4096 ? size - off : 4096, d);
		fputs(off ? "," : "", f);
		for (int i = 0; i < 16; i++)
			fprintf(f, "%02x", d[i]);
	}
	fprintf(f, " %s\n", path);
}

struct tree {
	uint8_t keep[5120], log[5120];
	size_t loglen;
};

/* The observation of a recovered state holding t, as guest-init prints it. */
static char *lines(const struct tree *t, const char *fsck)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fputs("BO:BOOT check /dev/vda\nBO:OBS chunk 4096\nBO:OBS mount 0\n"
	      "BO:OBS dir /keep\nBO:OBS dir /lost+found\n",
	      f);
	file_line(f, "/keep/a", t->keep, sizeof t->keep);
	file_line(f, "/log", t->log, t->loglen);
	fprintf(f, "BO:OBS umount 0\n%sBO:OBS end\nBO:END\n",
	        fsck ? fsck
	             : "BO:OBS fsck 0\nBO:OBS fsck-line Pass 1: Checking inodes, blocks, "
	               "and sizes\n");
	fclose(f);
	return buf;
}

static int judge_text(const struct crash_promises *p, const char *text, struct crash_outcome *o)
{
	struct crash_observation obs;
	struct bo_err err = {{0}};
	int rc = crash_obs_parse_lines(text, strlen(text), &obs, &err);
	if (rc) {
		diag("parse: %s", err.msg);
		return rc;
	}
	rc = crash_judge(p, &obs, o);
	crash_observation_free(&obs);
	return rc;
}

/* The parse error of one observation (its first line is a valid chunk line). */
static int parse_err(const char *text, struct bo_err *err)
{
	struct crash_observation obs;
	memset(err, 0, sizeof(*err));
	return crash_obs_parse_lines(text, strlen(text), &obs, err);
}

/* crash_md5 of len bytes at buf, in hex */
static const char *md5_hex(const void *buf, size_t len)
{
	static char hex[33];
	uint8_t d[16];
	crash_md5(buf, len, d);
	for (int b = 0; b < 16; b++)
		snprintf(hex + 2 * b, 3, "%02x", d[b]);
	return hex;
}

/* md5.c against RFC 1321's test suite, and the 4 KiB chunk the guests digest most (its
 * digest from md5sum); the RFC strings end in one padding block or two. */
static void test_md5(void)
{
	static const struct {
		const char *in, *hex;
	} rfc[] = {
	    {"", "d41d8cd98f00b204e9800998ecf8427e"},
	    {"a", "0cc175b9c0f1b6a831c399e269772661"},
	    {"abc", "900150983cd24fb0d6963f7d28e17f72"},
	    {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
	    {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
	    {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	     "d174ab98d277d9f5a5611c2c9f419d9f"},
	    {"1234567890123456789012345678901234567890123456789012345678901234567890123456789"
	     "0",
	     "57edf4a22be3c955ac49da2e2107b67a"},
	};
	for (size_t i = 0; i < sizeof rfc / sizeof *rfc; i++)
		is_str(md5_hex(rfc[i].in, strlen(rfc[i].in)), rfc[i].hex,
		       "md5 of the RFC 1321 string of %zu bytes", strlen(rfc[i].in));
	static uint8_t chunk[4096];
	for (size_t i = 0; i < sizeof chunk; i++)
		chunk[i] = (uint8_t)(i * 7 + i / 13);
	is_str(md5_hex(chunk, sizeof chunk), "da6005a6ce4f3ba62a44305418b9e841",
	       "md5 of a 4 KiB chunk as md5sum gives it");
}

static void test_parser_errors(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS kernel \nBO:OBS end\n", "kernel"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS file 10 - /a\nBO:OBS end\n", "line 3"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS file 10 0123 /a\nBO:OBS end\n", "MD5"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS file 1 "
	     "0123456789abcdef0123456789abcdeZ /a\nBO:OBS end\n",
	     "hex"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir /x/y\nBO:OBS end\n", "directory"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS file 0 - /f\nBO:OBS dir /f/y\n"
	     "BO:OBS end\n",
	     "line 4: its directory"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir x\nBO:OBS end\n", "absolute"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir /../b\nBO:OBS end\n", "'..'"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS end\nBO:OBS dir /a\n", "after 'end'"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\n", "did not finish"},
	    {"BO:OBS chunk 3000\nBO:OBS mount 0\nBO:OBS end\n", "power of two"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS mount 0\nBO:OBS end\n", "line 3"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 32 no fs\nBO:OBS dir /a\nBO:OBS end\n", "mount"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir /a\nBO:OBS dir /a\nBO:OBS end\n",
	     "twice"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS fsck-line x\nBO:OBS end\n", "fsck-line"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS file 99999999999999999999 - /a\n"
	     "BO:OBS end\n",
	     "size"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS frobnicate\nBO:OBS end\n", "unknown"},
	    {"BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS md started\nBO:OBS end\n",
	     "line 3: md: before the 'mount'"},
	    {"BO:OBS md started\nBO:OBS md started\nBO:OBS mount 0\nBO:OBS end\n",
	     "line 2: md: one line"},
	    {"BO:OBS md refused x\nBO:OBS md started\nBO:OBS mount 0\nBO:OBS end\n",
	     "line 2: md: one line"},
	    {"BO:OBS md forced 0\nBO:OBS mount 0\nBO:OBS end\n", "after 'md refused'"},
	    {"BO:OBS md refused x\nBO:OBS md forced 0\nBO:OBS md forced 0\nBO:OBS mount 0\n"
	     "BO:OBS end\n",
	     "line 3: md forced: one line"},
	    {"BO:OBS md refused x\nBO:OBS md forced 300\nBO:OBS mount 0\nBO:OBS end\n",
	     "exit status 0..255"},
	    {"BO:OBS md refused x\nBO:OBS mount 0\nBO:OBS end\n",
	     "line 2: mount: 'md refused' without 'md forced"},
	    {"BO:OBS md refused x\nBO:OBS md forced 1\nBO:OBS mount 0\nBO:OBS end\n",
	     "md did not start"},
	    {"BO:OBS md frobbed\nBO:OBS mount 0\nBO:OBS end\n", "'md started'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct bo_err err;
		int rc = parse_err(bad[i].text, &err);
		ok(rc < 0 && strstr(err.msg, bad[i].want), "bad observation %zu refused: %s", i,
		   err.msg);
	}
}

static void test_checkers(struct crash_promises p, const struct tree *t)
{
	struct crash_outcome o;
	char *txt;
	const char *dirty = "BO:OBS fsck 4\nBO:OBS fsck-line e2fsck 1.47.0 (5-Feb-2023)\n"
	                    "BO:OBS fsck-line Inode 12 has zero dtime.\n";
	is_int(judge_text(&p, txt = lines(t, dirty), &o), 0, "judged");
	ok(o.broken == B(CRASH_INV_CONSISTENT) && !o.detected,
	   "e2fsck finds damage on a journaling fs: consistent, silent (%s)", o.detail);
	ok(strstr(o.detail, "consistent: fsck: e2fsck: Inode 12 has zero dtime.") != NULL,
	   "the detail names e2fsck's first problem once (%s)", o.detail);
	p.boot = CRASH_BOOT_FSCK_FULL;
	is_int(judge_text(&p, txt, &o), 0, "judged");
	ok(o.detected && !strcmp(o.detected_by, "fsck"),
	   "the same with a full fsck at boot: detected by fsck (%s)", o.detected_by);
	free(txt);
	p.boot = CRASH_BOOT_TRUST;

	const char *quiet = "BO:OBS fsck 0\nBO:OBS fsck-line Free blocks count wrong (9, "
	                    "counted=8).\n";
	is_int(judge_text(&p, txt = lines(t, quiet), &o), 0, "judged");
	ok(o.broken == B(CRASH_INV_CONSISTENT), "e2fsck exits 0 but prints a problem: consistent");
	free(txt);

	const char *mnt = "BO:OBS chunk 4096\nBO:OBS mount 32 mount: wrong fs type\n"
	                  "BO:OBS fsck 8\nBO:OBS end\n";
	is_int(judge_text(&p, mnt, &o), 0, "judged");
	ok(o.broken == B(CRASH_INV_CONSISTENT) && o.detected && !strcmp(o.detected_by, "mount"),
	   "a failed mount: consistent, detected by mount");
	is_str(o.detail, "consistent: mount failed: mount exited 32: mount: wrong fs type",
	       "its detail");

	/* blackout's own fsck as the judge, e2fsck's second opinion and the boot scrub */
	struct crash_observation obs;
	struct bo_err err = {{0}};
	txt = lines(t, dirty);
	tap_require(crash_obs_parse_lines(txt, strlen(txt), &obs, &err) == 0, "parse");
	free(txt);
	p.fsck_judges = true;
	obs.check[CRASH_CHECK_FSCK] = (struct crash_check){.ran = true, .clean = true};
	is_int(crash_judge(&p, &obs, &o), 0, "judged");
	ok(o.broken == 0 && o.e2fsck_agrees == 0,
	   "own fsck clean, e2fsck not: ok, and e2fsck disagrees (%d)", o.e2fsck_agrees);
	obs.check[CRASH_CHECK_FSCK] = (struct crash_check){.ran = true, .why = "bitmap: x"};
	obs.check[CRASH_CHECK_VERIFY] = (struct crash_check){.ran = true, .clean = false};
	p.boot = CRASH_BOOT_VERIFY;
	is_int(crash_judge(&p, &obs, &o), 0, "judged");
	ok(o.broken == B(CRASH_INV_CONSISTENT) && o.e2fsck_agrees == 1 && o.detected &&
	       !strcmp(o.detected_by, "verify"),
	   "own fsck dirty, the boot scrub too: detected by verify, e2fsck agrees (%s)",
	   o.detected_by);
	obs.check[CRASH_CHECK_VERIFY].clean = true;
	is_int(crash_judge(&p, &obs, &o), 0, "judged");
	ok(o.broken && !o.detected, "the boot scrub finds nothing: silent");
	crash_observation_free(&obs);
}

/* md's start before the mount (docs/md.md): read from its lines, carried into the
 * outcome beside the verdict, never a detection of its own */
static void test_md(const struct crash_promises *p, const struct tree *t)
{
	struct crash_observation obs;
	struct crash_outcome out;
	struct bo_err err = {{0}};
	char *txt = lines(t, NULL), *buf = malloc(strlen(txt) + 200);
	tap_require(buf != NULL, "memory");
	sprintf(buf, "BO:OBS md started\n%s", txt);
	ok(crash_obs_parse_lines(buf, strlen(buf), &obs, &err) == 0 && obs.md == CRASH_MD_STARTED &&
	       crash_judge(p, &obs, &out) == 0 && out.md == CRASH_MD_STARTED && !out.broken,
	   "md started as a user asked: read, the state judged ok %s", err.msg);
	crash_observation_free(&obs);
	sprintf(buf,
	        "BO:OBS md refused mdadm: /dev/md0 assembled from 3 drives - not enough "
	        "to start the array while not clean - consider --force.\n"
	        "BO:OBS md forced 0\n%s",
	        txt);
	ok(crash_obs_parse_lines(buf, strlen(buf), &obs, &err) == 0 && obs.md == CRASH_MD_FORCED &&
	       strstr(obs.md_msg, "while not clean") && crash_judge(p, &obs, &out) == 0 &&
	       out.md == CRASH_MD_FORCED && !out.broken && !out.detected,
	   "refused, then forced: the refusal kept (%s), the state judged on what it shows: ok",
	   obs.md_msg);
	crash_observation_free(&obs);
	free(txt);
	struct tree lost = *t;
	memset(lost.log + 4096, 0, 1024);
	txt = lines(&lost, NULL);
	sprintf(buf, "BO:OBS md refused not clean\nBO:OBS md forced 0\n%s", txt);
	ok(crash_obs_parse_lines(buf, strlen(buf), &obs, &err) == 0 &&
	       crash_judge(p, &obs, &out) == 0 && out.md == CRASH_MD_FORCED &&
	       out.broken == B(CRASH_INV_DURABLE) && !out.detected &&
	       strstr(out.detail, "md refused to start it"),
	   "refused, forced, a synced chunk lost: durable and silent, the refusal in the detail "
	   "(%s)",
	   out.detail);
	crash_observation_free(&obs);
	free(txt);
	const char *un = "BO:OBS chunk 4096\nBO:OBS md refused not clean\nBO:OBS md forced 1 "
	                 "no\nBO:OBS mount 1 md: cannot start dirty degraded array\n"
	                 "BO:OBS fsck 8\nBO:OBS end\n";
	ok(crash_obs_parse_lines(un, strlen(un), &obs, &err) == 0 &&
	       crash_judge(p, &obs, &out) == 0 && out.md == CRASH_MD_UNSTARTED &&
	       out.broken == B(CRASH_INV_CONSISTENT) && out.detected &&
	       !strcmp(out.detected_by, "mount"),
	   "refused and not started even forced: a mount failure, detected (%s)", out.detail);
	crash_observation_free(&obs);
	free(buf);
}

int main(void)
{
	struct crash_workload *w;
	struct bo_err err = {{0}};
	tap_require(crash_workload_parse(WL, strlen(WL), "judge", &w, &err) == 0, "parse: %s",
	            err.msg);
	struct crash_exec exec[8];
	memset(exec, 0, sizeof(exec));
	is_int(crash_workload_dry_run(w, exec, &err), 0, "dry run: %s", err.msg);
	ok(exec[2].off == 0 && exec[4].off == 3072, "appends start at 0 and at 3k (%llu, %llu)",
	   (unsigned long long)exec[2].off, (unsigned long long)exec[4].off);
	struct crash_oracle *o;
	tap_require(crash_oracle_new(w, exec, &o, &err) == 0, "oracle: %s", err.msg);

	/* what the guest would see after every step */
	struct tree t;
	crash_pattern_fill(w->setup[2].tag, 0, t.keep, sizeof t.keep);
	crash_pattern_fill(w->run[2].tag, 0, t.log, 3072);
	crash_pattern_fill(w->run[4].tag, 3072, t.log + 3072, 2048);
	t.loglen = 5120;
	struct crash_promises p = {.oracle = o, .completed = w->nrun, .boot = CRASH_BOOT_TRUST};
	struct crash_outcome out;
	char *txt;
	is_int(judge_text(&p, txt = lines(&t, NULL), &out), 0, "judged");
	ok(out.broken == 0 && out.allowed == 0 && !out.detected, "everything there: ok (%s)",
	   out.detail);
	free(txt);

	/* the second append's chunk reads back as zeros */
	struct tree lost = t;
	memset(lost.log + 4096, 0, 1024);
	is_int(judge_text(&p, txt = lines(&lost, NULL), &out), 0, "judged");
	ok(out.broken == B(CRASH_INV_DURABLE) && !out.detected,
	   "a synced chunk lost: durable, silent (%s)", out.detail);
	p.completed = 4;
	is_int(judge_text(&p, txt, &out), 0, "judged");
	ok(out.broken == 0, "before the second append returned: allowed (%s)", out.detail);
	free(txt);

	/* the device keeps a write sector by sector: a chunk holding, per sector, different
	 * versions of the file is old-or-new data, not data from elsewhere */
	struct tree torn = t;
	memset(torn.log + 3584, 0, 512);  /* the second append's second sector not yet */
	memset(torn.log + 4096, 0, 1024); /* nor its chunk past 4 KiB */
	p.completed = 4;
	is_int(judge_text(&p, txt = lines(&torn, NULL), &out), 0, "judged");
	ok(out.broken == 0, "a chunk torn between two versions while the append ran: ok (%s)",
	   out.detail);
	free(txt);
	torn = t;
	memset(torn.log, 0, 512); /* the synced first append's first sector lost */
	p.completed = w->nrun;
	is_int(judge_text(&p, txt = lines(&torn, NULL), &out), 0, "judged");
	ok(out.broken == B(CRASH_INV_DURABLE),
	   "a synced sector lost inside a chunk: durable, not stale (%s)", out.detail);
	free(txt);

	/* bytes nobody wrote to /log, and the bystander's chunk */
	struct tree foreign = t;
	memset(foreign.log + 4096, 0x5a, 1024);
	p.completed = w->nrun;
	is_int(judge_text(&p, txt = lines(&foreign, NULL), &out), 0, "judged");
	ok(out.broken == B(CRASH_INV_STALE), "foreign bytes in a chunk: stale (%s)", out.detail);
	free(txt);
	p.flags = CRASH_ORACLE_WRITEBACK;
	is_int(judge_text(&p, txt = lines(&foreign, NULL), &out), 0, "judged");
	ok(out.broken == 0 && out.allowed == B(CRASH_INV_STALE),
	   "data=writeback allows it and says so (%s)", out.detail);
	free(txt);
	p.flags = 0;
	struct tree by = t;
	by.keep[100] ^= 1;
	is_int(judge_text(&p, txt = lines(&by, NULL), &out), 0, "judged");
	ok(out.broken & B(CRASH_INV_BYSTANDER), "a bystander's chunk changed: bystander (%s)",
	   out.detail);
	free(txt);

	/* every file right, but the kernel reported a bug it hit on the way (guest-init's
	 * "kernel" lines, from the state's kernel log) */
	is_int(judge_text(&p,
	                  txt = lines(&t, "BO:OBS fsck 0\nBO:OBS kernel WARNING: CPU: 0 PID: 7 at "
	                                  "fs/ext4/inode.c:123 ext4_foo+0x1/0x2\n"
	                                  "BO:OBS kernel BUG: unable to handle page fault\n"),
	                  &out),
	       0, "judged");
	ok(out.broken == B(CRASH_INV_CONSISTENT) && out.detected &&
	       !strcmp(out.detected_by, "kernel") &&
	       strstr(out.detail, "the kernel reported: WARNING: CPU: 0 PID: 7 at "
	                          "fs/ext4/inode.c:123 ext4_foo+0x1/0x2 (and more)"),
	   "the kernel warned: consistent, detected by the kernel, its first line named (%s)",
	   out.detail);
	free(txt);

	/* a file the guest could not read */
	const char *unread = "BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir /keep\n"
	                     "BO:OBS file 5120 ! /keep/a\nBO:OBS umount 0\nBO:OBS fsck 0\n"
	                     "BO:OBS end\n";
	is_int(judge_text(&p, unread, &out), 0, "judged");
	ok(out.detected && !strcmp(out.detected_by, "read") && out.read_errors == 1,
	   "an unreadable file: detected by the read (%s)", out.detail);

	/* a directory the guest could not list: what it held is a read error, not lost */
	const char *unlisted = "BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir ! /keep\n"
	                       "BO:OBS umount 0\nBO:OBS fsck 0\nBO:OBS end\n";
	is_int(judge_text(&p, unlisted, &out), 0, "judged");
	ok((out.broken & B(CRASH_INV_BYSTANDER)) && out.detected &&
	       !strcmp(out.detected_by, "read") && out.read_errors == 1 &&
	       strstr(out.detail, "/keep cannot be listed"),
	   "an unlisted directory: its bystander detected by the read (%s)", out.detail);
	const char *root = "BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir ! /\n"
	                   "BO:OBS umount 0\nBO:OBS fsck 0\nBO:OBS end\n";
	is_int(judge_text(&p, root, &out), 0, "judged");
	ok(out.detected && !strcmp(out.detected_by, "read") && out.read_errors == 2 &&
	       strstr(out.detail, "/ cannot be listed"),
	   "an unlisted root: /keep and /log detected by the read (%s)", out.detail);

	test_checkers(p, &t);
	test_md(&p, &t);
	test_parser_errors();
	test_md5();

	const char *mk = "BO:BOOT work\nBO:STEP 0\nBO:STEP 1\nBO:STEP 2\nBO:READY\n";
	is_int((int)crash_guest_completed(mk, strlen(mk)), 3, "three steps returned");
	crash_oracle_free(o);
	crash_workload_free(w);

	/* vmtest's own workloads are explorer workloads */
	char *text;
	is_int(crash_guest_workload_text("overwrite", 3, &text, &err), 0, "overwrite text");
	tap_require(crash_workload_parse(text, strlen(text), "overwrite", &w, &err) == 0,
	            "it parses: %s", err.msg);
	ok(w->nsetup == 2 + 4 * 48 && w->nrun == 6, "48 bystander pairs, 3 overwrites (%zu, %zu)",
	   w->nsetup, w->nrun);
	crash_workload_free(w);
	free(text);
	ok(crash_guest_workload_text("frob", 3, &text, &err) == -EINVAL && strstr(err.msg, "frob"),
	   "an unknown kind is refused (%s)", err.msg);

	/* fill depends on the device: refused */
	const char *fill = "run\ncreate /f\nfill /f 64k\n";
	tap_require(crash_workload_parse(fill, strlen(fill), "fill", &w, &err) == 0, "parse fill");
	ok(crash_workload_dry_run(w, exec, &err) == -ENOTSUP && strstr(err.msg, "line 3"),
	   "a fill is refused, naming its line (%s)", err.msg);
	crash_workload_free(w);
	return tap_done();
}
