// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_fsck.c — full check of a 1 GiB ext3 image holding 100,000 files: blackout fsck
 * beside e2fsck -fn on the same image in the same run, and --fast beside both.
 * Builds the image with mke2fs -d from a generated tree in /tmp. Never fails on speed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/e2fsck.h"
#include "blackout/fsck.h"
#include "blackout/util.h"

#include "bench_goal.h"

#define NFILES 100000
#define PERDIR 1000

static int make_tree(const char *root)
{
	char p[800];
	if (mkdir(root, 0755) && errno != EEXIST)
		return -errno;
	for (int i = 0; i < NFILES; i++) {
		if (i % PERDIR == 0) {
			snprintf(p, sizeof(p), "%s/d%03d", root, i / PERDIR);
			if (mkdir(p, 0755) && errno != EEXIST)
				return -errno;
		}
		snprintf(p, sizeof(p), "%s/d%03d/file_%06d", root, i / PERDIR, i);
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return -errno;
		/* mostly small files, some spanning indirect blocks */
		static char buf[65536];
		size_t n = i % 100 == 0 ? sizeof(buf) : (size_t)(100 + i % 3000);
		memset(buf, 'a' + i % 26, n);
		ssize_t w = write(fd, buf, n);
		close(fd);
		if (w != (ssize_t)n)
			return -EIO;
	}
	return 0;
}

static double time_blackout(const char *img, bool fast, uint32_t *problems)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	if (blk_file_open(img, 512, 0, BLK_FILE_RDONLY, &d, &err))
		return -1;
	struct fsck_opts o = {.fast = fast};
	struct fsck_report r;
	double t = bo_now();
	int rc = fsck_check(d, &o, &r, &err);
	t = bo_now() - t;
	blk_close(d);
	if (rc) {
		fprintf(stderr, "bench_fsck: %s\n", bo_errstr(&err, rc));
		return -1;
	}
	*problems = r.nr_problems;
	return t;
}

static double time_e2fsck(const char *img, bool *clean, bool *summary_printed)
{
	struct e2fsck_verdict v;
	struct bo_err err = {{0}};
	double t = bo_now();
	int rc = e2fsck_run(img, NULL, &v, &err);
	t = bo_now() - t;
	if (rc)
		return -1;
	*clean = v.clean;
	const char *sum = v.output ? strstr(v.output, " files (") : NULL;
	if (sum && !*summary_printed) {
		const char *b = sum;
		while (b > v.output && b[-1] != ' ' && b[-1] != '\n')
			b--;
		const char *e = strchr(sum, '\n');
		printf("e2fsck summary: %.*s\n", (int)(e ? e - b : (long)strlen(b)), b);
		*summary_printed = true;
	}
	e2fsck_verdict_free(&v);
	return t;
}

static double best(double a, double b)
{
	return a < b ? a : b;
}

int main(void)
{
	char dir[] = "/tmp/blackout-bench-fsck-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char tree[600], img[600], cmd[2048];
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(img, sizeof(img), "%s/fs.img", dir);
	double t0 = bo_now();
	if (make_tree(tree)) {
		fprintf(stderr, "bench_fsck: could not generate the tree\n");
		return 1;
	}
	snprintf(cmd, sizeof(cmd),
	         "mke2fs -q -F -t ext3 -N 131072 -d %s %s 1G >/dev/null 2>&1 && rm -rf %s", tree,
	         img, tree);
	if (system(cmd) != 0) {
		fprintf(stderr, "bench_fsck: mke2fs -d failed\n");
		return 1;
	}
	printf("image: 1 GiB ext3, %d files in %d directories (built in %.1f s)\n", NFILES,
	       NFILES / PERDIR, bo_now() - t0);
	uint32_t pf = 0, pq = 0;
	bool clean = false, shown = false;
	double e = 1e9, f = 1e9, q = 1e9;
	for (int i = 0; i < 3; i++) { /* interleaved, best of three, warm page cache */
		e = best(e, time_e2fsck(img, &clean, &shown));
		f = best(f, time_blackout(img, false, &pf));
		q = best(q, time_blackout(img, true, &pq));
	}
	printf("e2fsck -fn          %8.1f ms  (%s)\n", e * 1e3, clean ? "clean" : "NOT clean");
	printf("blackout fsck       %8.1f ms  (%u problems)  %.2fx e2fsck's time\n", f * 1e3, pf,
	       f / e);
	bench_goal("blackout fsck time / e2fsck -fn", f / e, false, 0.5, "x");
	printf(
	    "blackout fsck --fast%8.1f ms  (%u problems)  %.2fx e2fsck's, %.2fx the full check\n",
	    q * 1e3, pq, q / e, q / f);

	/* The crash explorer's case: many checks of a small image, each on a fresh
	 * copy-on-write overlay of an in-memory device. */
	char small[600];
	snprintf(small, sizeof(small), "%s/small.img", dir);
	snprintf(cmd, sizeof(cmd),
	         "mkdir -p %s/s && for i in $(seq 1 300); do echo $i > %s/s/f$i; done &&"
	         " mke2fs -q -F -t ext3 -b 1024 -N 1024 -d %s/s %s 8M >/dev/null 2>&1",
	         dir, dir, dir, small);
	struct bdev *file, *mem, *ov;
	struct bo_err err = {{0}};
	if (system(cmd) == 0 && !blk_file_open(small, 512, 0, BLK_FILE_RDONLY, &file, &err)) {
		static uint8_t buf[1 << 20];
		uint64_t n = blk_size_bytes(file);
		if (!blk_mem_open(512, n / 512, &mem)) {
			for (uint64_t off = 0; off < n; off += sizeof(buf)) {
				size_t len =
				    n - off < sizeof(buf) ? (size_t)(n - off) : sizeof(buf);
				if (blk_pread(file, off, len, buf) ||
				    blk_pwrite(mem, off, len, buf, 0))
					break;
			}
			int iters = 2000;
			uint32_t probs = 0;
			double t = bo_now();
			for (int i = 0; i < iters; i++) {
				if (blk_cow_open(mem, &ov))
					break;
				struct fsck_opts o = {.max_problems = 1};
				struct fsck_report r;
				if (!fsck_check(ov, &o, &r, &err))
					probs += r.nr_problems;
				blk_close(ov);
			}
			t = (bo_now() - t) / iters;
			double te = 1e9;
			bool c2 = false, sh2 = true;
			for (int i = 0; i < 5; i++)
				te = best(te, time_e2fsck(small, &c2, &sh2));
			printf("8 MiB ext3, 300 files, check on a COW overlay: %.0f us each (%.0f "
			       "checks/s, "
			       "%u problems); e2fsck -fn %.1f ms each (%.0fx)\n",
			       t * 1e6, 1 / t, probs, te * 1e3, te / t);
			blk_close(mem);
		}
		blk_close(file);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_fsck: could not remove %s\n", dir);
	return 0;
}
