// SPDX-License-Identifier: GPL-2.0-or-later
/* test_blk_media.c — the file backend's error paths and the cow overlay's promises:
 * O(1) clones that do not disturb each other, O(changed) memory, discard tracking,
 * digests that see content. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/blk.h"
#include "tap.h"

static char tmpdir[] = "/tmp/blackout-test-XXXXXX";

static void file_errors(void)
{
	char path[256];
	struct bdev *d;
	struct bo_err err = {{0}};

	snprintf(path, sizeof(path), "%s/missing/x.img", tmpdir);
	is_int(blk_file_open(path, 512, 0, 0, &d, &err), -ENOENT, "missing path is -ENOENT");
	ok(strstr(err.msg, "missing/x.img") != NULL, "and the message names the path: %s", err.msg);

	snprintf(path, sizeof(path), "%s/odd.img", tmpdir);
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	ok(fd >= 0 && write(fd, "abc", 3) == 3, "made a 3-byte file");
	close(fd);
	is_int(blk_file_open(path, 512, 0, 0, &d, &err), -EINVAL,
	       "size not a multiple of the sector size is -EINVAL");
	ok(strstr(err.msg, "multiple") != NULL, "message says why: %s", err.msg);

	snprintf(path, sizeof(path), "%s/empty.img", tmpdir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	close(fd);
	is_int(blk_file_open(path, 512, 0, 0, &d, &err), -EINVAL, "an empty file is -EINVAL");

	is_int(blk_file_open(path, 1000, 4096, BLK_FILE_CREATE, &d, &err), -EINVAL,
	       "sector size 1000 is -EINVAL");

	snprintf(path, sizeof(path), "%s/ro.img", tmpdir);
	struct bdev *w;
	is_int(blk_file_open(path, 512, 8192, BLK_FILE_CREATE, &w, &err), 0, "create 8 KiB image");
	unsigned char buf[512];
	memset(buf, 0x5a, sizeof(buf));
	is_int(blk_write(w, 3, 1, buf, BLK_FUA), 0, "FUA write to the file");
	is_int(blk_flush(w), 0, "flush (fdatasync)");
	blk_close(w);
	chmod(path, 0444);
	if (geteuid() == 0) {
		/* root ignores mode bits: a read-only open is the way to test EROFS */
		is_int(blk_file_open(path, 512, 0, BLK_FILE_RDONLY, &d, &err), 0, "read-only open");
	} else {
		is_int(blk_file_open(path, 512, 0, 0, &d, &err), -EACCES,
		       "read-write open of a read-only file is -EACCES");
		ok(strstr(err.msg, "read-only") != NULL, "with a hint: %s", err.msg);
		is_int(blk_file_open(path, 512, 0, BLK_FILE_RDONLY, &d, &err), 0, "read-only open");
	}
	unsigned char got[512];
	is_int(blk_read(d, 3, 1, got), 0, "read back");
	ok(memcmp(got, buf, 512) == 0, "data persisted in the file");
	is_int(blk_write(d, 0, 1, buf, 0), -EROFS, "write to a read-only device is -EROFS");
	is_int(blk_discard(d, 0, 1), -EROFS, "discard on a read-only device is -EROFS");
	is_int(blk_read(d, 16, 1, got), -EINVAL, "read past the end never reaches the file");
	blk_close(d);

	is_int(blk_file_open(path, 512, 16384, BLK_FILE_RDONLY, &d, &err), -EINVAL,
	       "asking a read-only file to be larger than it is is -EINVAL");
}

static int count_cb(void *ctx, uint64_t lba, const void *data)
{
	(void)lba;
	(void)data;
	(*(int *)ctx)++;
	return 0;
}

static void cow_semantics(void)
{
	struct bdev *base, *a, *b;
	tap_require(blk_mem_open(512, 1 << 16, &base) == 0, "base");
	unsigned char x[512], y[512], got[512];
	memset(x, 'x', 512);
	memset(y, 'y', 512);
	blk_write(base, 100, 1, x, 0);
	base->read_only = true;
	tap_require(blk_cow_open(base, &a) == 0, "overlay");
	is_int(blk_cow_changed(a), 0, "a new overlay holds nothing");
	uint64_t d0 = blk_cow_digest(a);
	is_int(blk_read(a, 100, 1, got), 0, "read through to the base");
	ok(memcmp(got, x, 512) == 0, "base data visible");
	is_int(blk_write(a, 100, 1, y, 0), 0, "write to the overlay");
	ok(blk_cow_digest(a) != d0, "digest changes with content");
	is_int(blk_write(base, 0, 1, y, 0), -EROFS, "the base stays read-only");
	is_int(blk_clone(a, &b), 0, "clone");
	ok(blk_cow_digest(a) == blk_cow_digest(b), "clone has the same digest");
	is_int(blk_write(b, 100, 1, x, 0), 0, "write to the clone");
	blk_read(a, 100, 1, got);
	ok(memcmp(got, y, 512) == 0, "the original is untouched by the clone's write");
	blk_read(b, 100, 1, got);
	ok(memcmp(got, x, 512) == 0, "the clone sees its own write");
	ok(blk_cow_digest(a) != blk_cow_digest(b), "digests differ once contents differ");
	is_int(blk_discard(b, 200, 3), 0, "discard");
	blk_read(b, 201, 1, got);
	ok(got[0] == 0 && got[511] == 0, "discarded sectors read as zeroes");
	is_int(blk_cow_changed(b), 4, "overlay holds 1 written + 3 discarded sectors");
	int n = 0;
	blk_cow_foreach(b, count_cb, &n);
	is_int(n, 4, "foreach visits every held sector");
	/* the same writes in another order reach the same digest */
	struct bdev *c;
	blk_cow_open(base, &c);
	blk_discard(c, 200, 3);
	blk_write(c, 100, 1, x, 0);
	ok(blk_cow_digest(c) == blk_cow_digest(b), "digest depends on content, not history");
	blk_close(c);
	blk_close(a);
	blk_close(b);
	blk_close(base);
}

/* One read across leaves of the overlay's tree: empty leaves are skipped whole,
 * a held sector past them (or in the middle of a leaf) is still the overlay's. */
static void cow_read_across(void)
{
	struct bdev *base, *c;
	tap_require(blk_mem_open(512, 1 << 12, &base) == 0, "base");
	unsigned char b[512], o[512];
	memset(b, 'b', sizeof(b));
	memset(o, 'o', sizeof(o));
	for (uint64_t l = 0; l < 1024; l++)
		blk_write(base, l, 1, b, 0);
	base->read_only = true;
	tap_require(blk_cow_open(base, &c) == 0, "overlay");
	static const uint64_t held[] = {5, 63, 64, 200, 700, 701, 1023};
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		blk_write(c, held[i], 1, o, 0);
	unsigned char *got = malloc(1024 * 512);
	tap_require(got != NULL, "buffer");
	bool right = true;
	for (uint64_t start = 0; start < 8; start += 3) {
		is_int(blk_read(c, start, (uint32_t)(1024 - start), got), 0,
		       "read from %llu to the end", (unsigned long long)start);
		for (uint64_t l = start; l < 1024; l++) {
			bool h = false;
			for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
				h = h || held[i] == l;
			right = right && got[(l - start) * 512] == (h ? 'o' : 'b');
		}
	}
	ok(right, "every sector read across empty and held leaves is the overlay's or the base's");
	free(got);
	blk_close(c);
	blk_close(base);
}

static void cow_many_clones(void)
{
	/* a deep chain of clones, each changed a little, all independent */
	struct bdev *base, *o[64];
	blk_mem_open(4096, 1 << 14, &base);
	base->read_only = true;
	blk_cow_open(base, &o[0]);
	unsigned char buf[4096], got[4096];
	int bad = 0;
	for (int i = 1; i < 64; i++) {
		blk_clone(o[i - 1], &o[i]);
		memset(buf, i, sizeof(buf));
		blk_write(o[i], (uint64_t)i * 37 % (1 << 14), 1, buf, 0);
	}
	for (int i = 1; i < 64; i++) {
		for (int j = 1; j < 64; j++) {
			blk_read(o[i], (uint64_t)j * 37 % (1 << 14), 1, got);
			int want = j <= i ? j : 0;
			if (got[0] != want || got[4095] != want)
				bad++;
		}
	}
	is_int(bad, 0, "63 chained clones each see exactly the writes before them");
	is_int(blk_cow_changed(o[63]), 63, "the last clone holds 63 sectors");
	for (int i = 0; i < 64; i++)
		blk_close(o[i]);
	blk_close(base);
}

/* mem in pages: a whole aligned page can be handed over, anything else is copied;
 * pages never written or wholly discarded read as zeroes. */
static void mem_pages(void)
{
	struct bdev *m, *c;
	is_int(blk_mem_open(512, 24, &m), 0, "mem of 12 KiB (three pages)");
	unsigned char got[8192], want[8192];
	memset(want, 0, sizeof(want));
	is_int(blk_read(m, 0, 8, got), 0, "read of a page never written");
	ok(memcmp(got, want, 4096) == 0, "reads as zeroes");

	void *page = blk_page_alloc(), *first = page;
	memset(page, 0x41, 4096);
	is_int(blk_write_swap(m, 8, 8, &page, 0), 0, "write_swap of the aligned page 1");
	ok(page == NULL, "mem kept the buffer and gave back nothing (page 1 had none)");
	memset(want, 0x41, 4096);
	blk_read(m, 8, 8, got);
	ok(memcmp(got, want, 4096) == 0, "page 1 reads back the adopted bytes");

	page = blk_page_alloc();
	memset(page, 0x42, 4096);
	is_int(blk_write_swap(m, 8, 8, &page, 0), 0, "write_swap over page 1 again");
	ok(page == first, "and mem gave back the page it replaced");
	blk_page_free(page);

	page = blk_page_alloc();
	void *mine = page;
	memset(page, 0x43, 4096);
	is_int(blk_write_swap(m, 4, 8, &page, 0), 0, "write_swap straddling pages 0 and 1");
	ok(page == mine, "is a copy: the caller keeps its buffer");
	blk_read(m, 0, 16, got);
	blk_read(m, 0, 4, want);
	ok(want[0] == 0 && got[4 * 512] == 0x43 && got[12 * 512 - 1] == 0x43,
	   "the copy landed across the page boundary");
	is_int(blk_write_swap(m, 20, 8, &page, 0), -EINVAL, "write_swap past the end is refused");
	ok(page == mine, "and leaves the buffer with the caller");
	blk_close(m);
	blk_page_free(page);

	is_int(blk_mem_open(512, 24, &m), 0, "a fresh mem");
	memset(want, 0x77, sizeof(want));
	blk_write(m, 6, 12, want, 0);
	is_int(blk_clone(m, &c), 0, "clone");
	is_int(blk_discard(m, 8, 8), 0, "discard of the whole page 1");
	is_int(blk_discard(m, 6, 1), 0, "and of one sector of page 0");
	blk_read(m, 6, 12, got);
	ok(got[0] == 0 && got[512] == 0x77 && got[2 * 512] == 0 && got[9 * 512] == 0 &&
	       got[10 * 512] == 0x77,
	   "discarded sectors read as zeroes, their neighbours kept");
	blk_read(c, 6, 12, got);
	ok(memcmp(got, want, 12 * 512) == 0, "the clone kept its own pages");
	blk_close(c);
	blk_close(m);

	is_int(blk_mem_open(512, 3, &m), 0, "mem smaller than a page");
	memset(want, 0x19, 512);
	is_int(blk_write(m, 2, 1, want, 0), 0, "write to its last sector");
	blk_read(m, 0, 3, got);
	ok(got[0] == 0 && got[2 * 512] == 0x19 && got[3 * 512 - 1] == 0x19, "reads back");
	blk_close(m);
}

/* A long write (mem streams it into its own pages): every byte lands, from an
 * unaligned start to an end that is not a whole 64 bytes, across a page the image
 * adopted (copied, not streamed), and the sectors around it keep theirs. */
static void mem_long_write(void)
{
	enum { SECT = 512, NS = 400 }; /* 200 KiB */
	static unsigned char in[NS * SECT], got[NS * SECT];
	struct bdev *m;
	is_int(blk_mem_open(SECT, NS, &m), 0, "mem of 200 KiB");
	memset(in, 0x11, sizeof(in));
	blk_write(m, 0, NS, in, 0);
	void *page = blk_page_alloc();
	memset(page, 0x22, 4096);
	is_int(blk_write_swap(m, 8 * 20, 8, &page, 0), 0, "page 20 adopted");
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + i / 4096);
	is_int(blk_write(m, 3, NS - 5, in, 0), 0, "a write of %d sectors from sector 3", NS - 5);
	is_int(blk_read(m, 0, NS, got), 0, "read back");
	ok(got[0] == 0x11 && got[3 * SECT - 1] == 0x11, "the sectors before it kept theirs");
	ok(memcmp(got + 3 * SECT, in, (size_t)(NS - 5) * SECT) == 0,
	   "every byte written is there, the adopted page's too");
	ok(got[(NS - 2) * SECT] == 0x11 && got[NS * SECT - 1] == 0x11,
	   "the sectors after it kept theirs");
	blk_close(m);
	blk_page_free(page);
}

/* blk_page_alloc: page-aligned, distinct, writable; pages freed beyond what the
 * pool keeps holding memory (given back to the kernel) come back usable. */
static void page_pool(void)
{
	enum { N = 6000 }; /* more than the pool keeps holding memory */
	static unsigned char *p[N];
	int misaligned = 0, lost = 0;
	for (int i = 0; i < N; i++) {
		p[i] = blk_page_alloc();
		if (!p[i] || ((uintptr_t)p[i] & (BLK_PAGE_BYTES - 1)))
			misaligned++;
		else
			memset(p[i], i & 0xff, BLK_PAGE_BYTES);
	}
	is_int(misaligned, 0, "%d pages, every one page-aligned", N);
	for (int i = 0; i < N && !misaligned; i++)
		lost += p[i][0] != (i & 0xff) || p[i][BLK_PAGE_BYTES - 1] != (i & 0xff);
	is_int(lost, 0, "each keeps its own bytes: no two overlap");
	for (int i = 0; i < N; i++)
		blk_page_free(p[i]);
	blk_page_free(NULL);
	int bad = 0;
	for (int i = 0; i < N; i++) {
		p[i] = blk_page_alloc();
		if (!p[i]) {
			bad++;
			continue;
		}
		memset(p[i], 0x5a, BLK_PAGE_BYTES);
		bad += p[i][BLK_PAGE_BYTES / 2] != 0x5a;
	}
	is_int(bad, 0, "after all were freed, %d pages again, each usable", N);
	for (int i = 0; i < N; i++)
		blk_page_free(p[i]);
}

int main(void)
{
	tap_require(mkdtemp(tmpdir) != NULL, "temporary directory");
	file_errors();
	cow_semantics();
	cow_read_across();
	cow_many_clones();
	mem_pages();
	mem_long_write();
	page_pool();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		diag("could not remove %s", tmpdir);
	return tap_done();
}
