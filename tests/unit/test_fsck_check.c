// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fsck_check.c — blackout fsck through its C API: clean images are clean; every
 * corruption kind is judged as e2fsck -fn judges it, and the same whether or not the
 * device can say which blocks are zeroes (pass 1 then leaves empty inode-table blocks
 * out); repairs leave e2fsck clean; hostile images (hundreds of stacked corruptions,
 * random metadata) never crash it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/e2fsck.h"
#include "blackout/fsck.h"
#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "tap.h"

static char dir[] = "/tmp/blackout-fsck-XXXXXX";

static int mkimg(const char *name, const char *args)
{
	const char *src = getenv("BLACKOUT_SRC");
	char cmd[1024];
	snprintf(
	    cmd, sizeof(cmd),
	    "cd %s && SCRATCH=%s sh -c 'e2fsck_clean() { e2fsck -fn \"$1\" >/dev/null 2>&1; }; "
	    ". %s/tests/compat/fsck_mkimg.sh; fsck_mkimg %s %s'",
	    dir, dir, src ? src : ".", name, args);
	return system(cmd);
}

static int check(struct bdev *d, enum fsck_repair rep, bool fast, struct fsck_report *r)
{
	struct fsck_opts o = {.repair = rep, .fast = fast};
	struct bo_err err = {{0}};
	int rc = fsck_check(d, &o, r, &err);
	if (rc < 0)
		diag("fsck_check: %s", bo_errstr(&err, rc));
	return rc;
}

static bool e2_clean(struct bdev *d, char *first, size_t n)
{
	struct e2fsck_verdict v;
	struct bo_err err = {{0}};
	if (e2fsck_run_bdev(d, NULL, &v, &err))
		return false;
	bool c = v.clean;
	snprintf(first, n, "%s", v.first_problem);
	e2fsck_verdict_free(&v);
	return c;
}

/* The image's bytes in an overlay over a medium never written, as the crash explorer
 * holds a state: its zero sectors are known zero (blk_reads_zero), a file's are not. */
static struct bdev *zero_aware_copy(struct bdev *img, struct bdev **zbase)
{
	struct bdev *z;
	tap_require(blk_mem_open(512, img->nr_sectors, zbase) == 0, "zero base");
	(*zbase)->read_only = true;
	tap_require(blk_cow_open(*zbase, &z) == 0, "overlay over it");
	unsigned char *buf = malloc(1 << 20);
	uint32_t per = (1 << 20) / 512;
	for (uint64_t l = 0; l < img->nr_sectors; l += per) {
		uint32_t n = img->nr_sectors - l < per ? (uint32_t)(img->nr_sectors - l) : per;
		tap_require(blk_read(img, l, n, buf) == 0 && blk_write(z, l, n, buf, 0) == 0,
		            "copy the image");
	}
	free(buf);
	return z;
}

/* Two reports alike: the count and every problem kept (code, inode, block). */
static bool same_report(const struct fsck_report *a, const struct fsck_report *b)
{
	if (a->nr_problems != b->nr_problems || a->nr_kept != b->nr_kept)
		return false;
	for (uint32_t i = 0; i < a->nr_kept; i++)
		if (a->problems[i].code != b->problems[i].code ||
		    a->problems[i].ino != b->problems[i].ino ||
		    a->problems[i].block != b->problems[i].block)
			return false;
	return true;
}

static void per_image(const char *name, const char *args)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	double t0 = bo_now();
	tap_require(mkimg(name, args) == 0, "%s: image built (%s)", name, args);
	diag("%s: built in %.2fs", name, bo_now() - t0);
	t0 = bo_now();
	struct bdev *base, *d;
	struct bo_err err = {{0}};
	tap_require(blk_file_open(path, 512, 0, BLK_FILE_RDONLY, &base, &err) == 0, "open %s",
	            path);
	struct fsck_report r;
	is_int(check(base, FSCK_REPAIR_NONE, false, &r), 0, "%s: check ran", name);
	is_int((int)r.nr_problems, 0, "%s: clean image has no problems (%s)", name,
	       r.nr_kept ? r.problems[0].msg : "");
	is_int(check(base, FSCK_REPAIR_NONE, true, &r), 0, "%s: --fast ran", name);
	is_int((int)r.nr_problems, 0, "%s: --fast finds nothing on a clean image", name);

	/* --fast catches checksum damage on metadata_csum images */
	if (strstr(args, "metadata_csum")) {
		tap_require(blk_cow_open(base, &d) == 0, "overlay");
		int n = 0;
		for (uint64_t seed = 1; seed < 40 && n == 0; seed++) {
			n = fsck_corrupt(d, FSCK_C_INODE, seed, 1, NULL, 0, &err);
		}
		check(d, FSCK_REPAIR_NONE, true, &r);
		ok(r.nr_problems > 0 && r.by_checksum,
		   "%s: --fast catches a damaged inode by its checksum", name);
		blk_close(d);
	}

	/* every kind: our verdict against e2fsck's, on copy-on-write overlays; and the
	 * same damage where zeroes are known, which must give the same report */
	struct bdev *zbase, *z0 = zero_aware_copy(base, &zbase);
	int agree = 0, total = 0, alike = 0;
	for (int k = 0; k < FSCK_C_NR; k++)
		for (uint64_t seed = 100; seed < 103; seed++) {
			tap_require(blk_cow_open(base, &d) == 0, "overlay");
			char log[512];
			int n = fsck_corrupt(d, (enum fsck_corrupt_what)k, seed, 1, log,
			                     sizeof(log), &err);
			if (n > 0) {
				struct bdev *z;
				struct fsck_report rz;
				tap_require(blk_clone(z0, &z) == 0, "clone");
				fsck_corrupt(z, (enum fsck_corrupt_what)k, seed, 1, NULL, 0, &err);
				int rcz = check(z, FSCK_REPAIR_NONE, false, &rz);
				blk_close(z);
				int rc = check(d, FSCK_REPAIR_NONE, false, &r);
				if (rc == rcz && same_report(&r, &rz))
					alike++;
				else
					diag("%s %s seed %llu: %u problems read whole, %u knowing "
					     "zeroes",
					     name, fsck_corrupt_name((enum fsck_corrupt_what)k),
					     (unsigned long long)seed, r.nr_problems,
					     rz.nr_problems);
				bool ours = rc == 0 && r.nr_problems == 0;
				char first[256];
				bool theirs = e2_clean(d, first, sizeof(first));
				total++;
				if (ours == theirs)
					agree++;
				else
					diag(
					    "%s %s seed %llu: blackout %s, e2fsck %s (%s) after %s",
					    name, fsck_corrupt_name((enum fsck_corrupt_what)k),
					    (unsigned long long)seed, ours ? "clean" : "not clean",
					    theirs ? "clean" : "not clean", first, log);
			}
			blk_close(d);
		}
	ok(total >= 20 && agree == total, "%s: verdicts agree with e2fsck on %d/%d corruptions",
	   name, agree, total);
	is_int(alike, total, "%s: the same %d reports where the device knows its zeroes", name,
	       total);
	blk_close(z0);
	blk_close(zbase);

	diag("agreement %.2fs", bo_now() - t0);
	t0 = bo_now();
	/* reproducible: same seed, same bytes */
	struct bdev *a, *b;
	blk_cow_open(base, &a);
	blk_cow_open(base, &b);
	fsck_corrupt(a, FSCK_C_DIRENT, 9, 4, NULL, 0, &err);
	fsck_corrupt(b, FSCK_C_DIRENT, 9, 4, NULL, 0, &err);
	ok(blk_cow_digest(a) == blk_cow_digest(b) && blk_cow_changed(a) > 0,
	   "%s: corruption is reproducible", name);
	blk_close(a);
	blk_close(b);

	/* max_problems: the crash explorer's "any problem?" */
	blk_cow_open(base, &d);
	fsck_corrupt(d, FSCK_C_BITMAP, 1, 5, NULL, 0, &err);
	struct fsck_opts o1 = {.max_problems = 1};
	is_int(fsck_check(d, &o1, &r, &err), 0, "%s: check with max_problems 1", name);
	is_int((int)r.nr_problems, 1, "%s: stops at the first problem", name);

	/* repairs of crash damage: bitmaps and counts, link counts */
	struct fsck_report rr;
	is_int(check(d, FSCK_REPAIR_YES, false, &rr), 0, "%s: repair ran", name);
	is_int(fsck_exit_code(&rr), 1, "%s: bitmap damage repaired (exit 1, %u left)", name,
	       rr.nr_problems);
	char first[256];
	ok(e2_clean(d, first, sizeof(first)), "%s: e2fsck clean after bitmap repair (%s)", name,
	   first);
	blk_close(d);
	blk_cow_open(base, &d);
	{
		/* a wrong link count on root's child 'a' (inode of /a: find it by corrupting
		 * inode links via the API would be random; set root's own instead) */
		uint8_t blk[4096];
		uint8_t head[4096];
		blk_pread(d, 0, sizeof(head), head);
		const uint8_t *sb = head + 1024;
		uint32_t bs = sb_block_size(sb), isz = sb_inode_size(sb);
		uint8_t gdb[4096];
		blk_pread(d, (uint64_t)(get_le32(sb + SB_FIRST_DATA_BLOCK) + 1) * bs, bs, gdb);
		uint64_t it = gd_inode_table(gdb, 32);
		blk_pread(d, it * bs, bs, blk);
		uint8_t *root = blk + isz; /* inode 2 */
		put_le16(root + I_LINKS_COUNT, (uint16_t)(ino_links(root) + 3));
		blk_pwrite(d, it * bs, bs, blk, 0);
	}
	check(d, FSCK_REPAIR_NONE, false, &r);
	ok(r.nr_problems > 0, "%s: wrong root link count found", name);
	check(d, FSCK_REPAIR_YES, false, &rr);
	is_int((int)rr.nr_problems, 0, "%s: link count repaired", name);
	ok(e2_clean(d, first, sizeof(first)), "%s: e2fsck clean after link repair (%s)", name,
	   first);
	blk_close(d);

	/* needs_recovery is reported as such */
	blk_cow_open(base, &d);
	{
		uint8_t head[4096];
		blk_pread(d, 0, sizeof(head), head);
		uint8_t *sb = head + 1024;
		put_le32(sb + SB_FEATURE_INCOMPAT,
		         get_le32(sb + SB_FEATURE_INCOMPAT) | EXT3_FEATURE_INCOMPAT_RECOVER);
		if (sb_has_ro_compat(sb, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM))
			put_le32(sb + SB_CHECKSUM, crc32c_raw(~0u, sb, SB_CHECKSUM));
		blk_pwrite(d, 0, sizeof(head), head, 0);
	}
	check(d, FSCK_REPAIR_NONE, false, &r);
	ok(r.needs_recovery && r.nr_kept && r.problems[0].kind == FSCK_NEEDS_RECOVERY,
	   "%s: needs_recovery reported distinctly", name);
	blk_close(d);

	diag("repairs %.2fs", bo_now() - t0);
	t0 = bo_now();
	/* hostile images: stacked corruptions of every kind, then check, scrub, repair */
	int survived = 0;
	int rounds = getenv("BLACKOUT_ASAN") ? 20 : 60;
	for (int i = 0; i < rounds; i++) {
		blk_cow_open(base, &d);
		for (int k = FSCK_C_NR - 1; k >= 0; k--) /* superblock last: it may end all */
			fsck_corrupt(d, (enum fsck_corrupt_what)k, (uint64_t)i * 31 + (uint64_t)k,
			             1 + (uint32_t)(i % 7), NULL, 0, &err);
		int r1 = check(d, FSCK_REPAIR_NONE, false, &r);
		int r2 = check(d, FSCK_REPAIR_NONE, true, &r);
		int r3 = check(d, FSCK_REPAIR_YES, false, &rr);
		if (r1 <= 0 && r2 <= 0 && r3 <= 0)
			survived++;
		blk_close(d);
	}
	/* and random bytes over the first 64 KiB of metadata */
	struct bo_rng rng;
	bo_rng_seed(&rng, 42);
	for (int i = 0; i < rounds; i++) {
		blk_cow_open(base, &d);
		uint8_t buf[512];
		for (int s = 0; s < 8; s++) {
			uint64_t lba = 2 + bo_rng_below(&rng, 128);
			blk_read(d, lba, 1, buf);
			for (int j = 0; j < 16; j++)
				buf[bo_rng_below(&rng, 512)] = (uint8_t)bo_rng_next(&rng);
			blk_write(d, lba, 1, buf, 0);
		}
		int r1 = check(d, FSCK_REPAIR_NONE, false, &r);
		int r3 = check(d, FSCK_REPAIR_YES, false, &rr);
		if (r1 <= 0 && r3 <= 0)
			survived++;
		blk_close(d);
	}
	is_int(survived, 2 * rounds, "%s: %d hostile images checked and repaired without a crash",
	       name, 2 * rounds);
	diag("hostile %.2fs", bo_now() - t0);
	blk_close(base);
}

int main(void)
{
	tap_require(mkdtemp(dir) != NULL, "scratch directory");
	per_image("e3_1k.img", "ext3 1024");
	per_image("e3_4k_csum.img", "ext3 4096 -O metadata_csum");
	per_image("e2_1k_csum.img", "ext2 1024 -O metadata_csum");
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return tap_done();
}
