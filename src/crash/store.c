// SPDX-License-Identifier: GPL-2.0-or-later
/* store.c — the state store an outside observer reads (docs/realkernel.md, section 2):
 * base.img (the device's view where the run began), one s<N>.delta per distinct state
 * (the 4 KiB blocks where its view differs) and an index; and the key and byte
 * comparison that deduplicate states by that view. Writing only: the plugin serves
 * the store. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/endian.h"
#include "blackout/util.h"
#include "crash/crash_int.h"

#define BLOCK         4096u
#define READ_CHUNK    (4u << 20)
#define COMPARE_CHUNK (256u << 10)

static int read_view(struct bdev *d, uint8_t *buf, uint64_t size, struct bo_err *err)
{
	for (uint64_t off = 0; off < size; off += READ_CHUNK) {
		size_t n = size - off < READ_CHUNK ? (size_t)(size - off) : READ_CHUNK;
		int rc = blk_pread(d, off, n, buf + off);
		if (rc)
			return bo_errf(err, rc, "reading a state's view: %s",
			               bo_errstr(&d->err, rc));
	}
	return 0;
}

static bool zero_block(const uint8_t *b)
{
	static const uint8_t z[BLOCK];
	return memcmp(b, z, BLOCK) == 0;
}

/* Writes base.img sparse (zero blocks are holes), through a temporary name. */
static int write_base(const struct crash_store *s, struct bo_err *err)
{
	char tmp[4200], path[4200];
	snprintf(path, sizeof(path), "%s/base.img", s->dir);
	snprintf(tmp, sizeof(tmp), "%s/.base.img.tmp", s->dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return bo_errf(err, -errno, "state store: cannot create %s: %s", tmp,
		               strerror(errno));
	int rc = ftruncate(fd, (off_t)s->size) ? -errno : 0;
	for (uint64_t off = 0; rc == 0 && off < s->size; off += BLOCK)
		if (!zero_block(s->base + off) &&
		    pwrite(fd, s->base + off, BLOCK, (off_t)off) != (ssize_t)BLOCK)
			rc = errno ? -errno : -EIO;
	if (close(fd) && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return bo_errf(err, rc, "state store: writing %s: %s", path, strerror(-rc));
	}
	return 0;
}

/* The seen file, unlinked at once: no reader of the store ever finds it, and it goes
 * with the process however that ends. */
static int open_seen(struct crash_store *s, struct bo_err *err)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/.seen.tmp", s->dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return bo_errf(err, -errno, "state store: cannot create %s: %s", path,
		               strerror(errno));
	unlink(path);
	if (!(s->seen = fdopen(fd, "w+b"))) {
		close(fd);
		return -ENOMEM;
	}
	if (!(s->cmp = malloc(COMPARE_CHUNK)))
		return -ENOMEM;
	return 0;
}

int crash_store_open(struct crash_store *s, const char *dir, struct bdev *live0, struct bo_err *err)
{
	memset(s, 0, sizeof(*s));
	s->size = blk_size_bytes(live0);
	if (s->size == 0 || s->size % BLOCK)
		return bo_errf(err, -EINVAL,
		               "state store: the device's %llu bytes are not a whole number of "
		               "4 KiB blocks",
		               (unsigned long long)s->size);
	if (s->size > CRASH_STORE_MAX_DEVICE)
		return bo_errf(err, -EFBIG,
		               "state store: a device of %llu MiB is more than the %llu MiB the "
		               "explorer keeps in memory",
		               (unsigned long long)(s->size >> 20),
		               (unsigned long long)(CRASH_STORE_MAX_DEVICE >> 20));
	if (mkdir(dir, 0777) && errno != EEXIST)
		return bo_errf(err, -errno, "state store: cannot make %s: %s", dir,
		               strerror(errno));
	s->dir = strdup(dir);
	s->base = malloc(s->size);
	s->view = malloc(s->size);
	s->nblocks_max = s->size / BLOCK;
	s->blocks = malloc(s->nblocks_max * sizeof(*s->blocks));
	if (!s->dir || !s->base || !s->view || !s->blocks) {
		crash_store_close(s);
		return -ENOMEM;
	}
	/* from a copy: reading must not move anything in the stack every cut starts from */
	struct bdev *copy = NULL;
	int rc = blk_clone(live0, &copy);
	if (rc)
		bo_errf(err, rc, "state store: %s", bo_errstr(&live0->err, rc));
	if (rc == 0)
		rc = read_view(copy, s->base, s->size, err);
	blk_close(copy);
	if (rc == 0)
		rc = write_base(s, err);
	char ip[4200];
	snprintf(ip, sizeof(ip), "%s/.index.tmp", s->dir);
	if (rc == 0 && !(s->index = fopen(ip, "w")))
		rc = bo_errf(err, -errno, "state store: cannot create %s: %s", ip, strerror(errno));
	if (rc == 0)
		rc = open_seen(s, err);
	if (rc)
		crash_store_close(s);
	return rc;
}

int crash_store_view(struct crash_store *s, struct bdev *state, size_t completed, uint64_t *key,
                     struct bo_err *err)
{
	double t0 = bo_now();
	/* the same bytes owe different things before and after an fsync returned */
	uint64_t h = 0x13198a2e03707344ull ^ (uint64_t)completed;
	s->nblocks = 0;
	/* compared piece by piece while the piece is still in the CPU's cache */
	for (uint64_t off = 0; off < s->size; off += COMPARE_CHUNK) {
		size_t n = s->size - off < COMPARE_CHUNK ? (size_t)(s->size - off) : COMPARE_CHUNK;
		int rc = blk_pread(state, off, n, s->view + off);
		if (rc)
			return bo_errf(err, rc, "reading a state's view: %s",
			               bo_errstr(&state->err, rc));
		for (uint64_t b = off / BLOCK; b < (off + n) / BLOCK; b++) {
			const uint8_t *v = s->view + b * BLOCK;
			if (memcmp(v, s->base + b * BLOCK, BLOCK) == 0)
				continue;
			s->blocks[s->nblocks++] = b;
			h = crash_mix64(h ^ b) + 0x9e3779b97f4a7c15ull;
			for (size_t i = 0; i < BLOCK; i += 8)
				h = crash_mix64(h ^ get_le64(v + i));
		}
	}
	*key = h;
	s->seconds += bo_now() - t0;
	return 0;
}

enum { RECORD = 8 + BLOCK }; /* a block's number and bytes, as in a delta */

/* Whether the last viewed state's delta is distinct state e's, byte for byte. */
static int same_view(void *ctx, const struct crash_seen_entry *e)
{
	struct crash_store *s = ctx;
	if (e->nth >= s->nkept)
		return -EINVAL; /* the table was fed without the store */
	const struct crash_store_kept *k = &s->kept[e->nth];
	if (k->nblocks != s->nblocks)
		return 0;
	if (fflush(s->seen))
		return -EIO;
	const size_t per = COMPARE_CHUNK / RECORD;
	for (size_t i = 0; i < s->nblocks; i += per) {
		size_t m = s->nblocks - i < per ? s->nblocks - i : per;
		int rc = bo_pread_full(fileno(s->seen), s->cmp, m * RECORD,
		                       (off_t)(k->off + i * RECORD));
		if (rc)
			return rc;
		for (size_t r = 0; r < m; r++) {
			const uint8_t *rec = s->cmp + r * RECORD;
			uint64_t b = s->blocks[i + r];
			if (get_le64(rec) != b || memcmp(rec + 8, s->view + b * BLOCK, BLOCK) != 0)
				return 0;
		}
	}
	return 1;
}

int crash_store_seen(struct crash_store *s, struct crash_seen *seen, uint64_t key, size_t completed,
                     uint64_t ordinal, bool *dup, uint64_t *first, struct bo_err *err)
{
	double t0 = bo_now();
	int rc = crash_seen_add_by(seen, key, completed, ordinal, same_view, s, dup, first);
	if (rc)
		return bo_errf(err, rc, "state store: comparing a state with an earlier one: %s",
		               strerror(-rc));
	if (*dup)
		goto out;
	struct crash_store_kept *nk = bo_grow(s->kept, &s->kept_cap, s->nkept, sizeof(*nk), 256);
	if (!nk)
		return -ENOMEM;
	s->kept = nk;
	s->kept[s->nkept++] = (struct crash_store_kept){.off = s->seen_end, .nblocks = s->nblocks};
	bool ok = true;
	for (size_t i = 0; ok && i < s->nblocks; i++) {
		uint8_t idx[8];
		put_le64(idx, s->blocks[i]);
		ok = fwrite(idx, 1, 8, s->seen) == 8 &&
		     fwrite(s->view + s->blocks[i] * BLOCK, 1, BLOCK, s->seen) == BLOCK;
	}
	if (!ok)
		return bo_errf(err, -EIO, "state store: writing the seen states' file: %s",
		               strerror(errno));
	s->seen_end += (uint64_t)s->nblocks * RECORD;
out:
	s->seconds += bo_now() - t0;
	return 0;
}

int crash_store_add(struct crash_store *s, const char *id, size_t completed, size_t *n,
                    struct bo_err *err)
{
	double t0 = bo_now();
	if (s->n >= 1000000000u) /* s<N>: N has at most 9 digits */
		return bo_errf(err, -EFBIG, "state store: a billion states; lower --max-states");
	char path[4200];
	snprintf(path, sizeof(path), "%s/s%zu.delta", s->dir, s->n);
	FILE *f = fopen(path, "wb");
	if (!f)
		return bo_errf(err, -errno, "state store: cannot create %s: %s", path,
		               strerror(errno));
	uint8_t hdr[16];
	memcpy(hdr, "BOSTATE1", 8);
	put_le32(hdr + 8, BLOCK);
	put_le32(hdr + 12, (uint32_t)s->nblocks);
	bool ok = fwrite(hdr, 1, sizeof(hdr), f) == sizeof(hdr);
	for (size_t i = 0; ok && i < s->nblocks; i++) {
		uint8_t idx[8];
		put_le64(idx, s->blocks[i]);
		ok = fwrite(idx, 1, 8, f) == 8 &&
		     fwrite(s->view + s->blocks[i] * BLOCK, 1, BLOCK, f) == BLOCK;
	}
	if (fclose(f) || !ok)
		return bo_errf(err, -EIO, "state store: writing %s failed", path);
	fprintf(s->index, "s%zu %s %zu\n", s->n, id, completed);
	s->stored_blocks += s->nblocks;
	*n = s->n++;
	s->seconds += bo_now() - t0;
	return 0;
}

int crash_store_keep(const struct crash_store *s, const char *dir, const char *id,
                     struct bo_err *err)
{
	mkdir(dir, 0777);
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s.img", dir, id);
	FILE *f = fopen(path, "wb");
	if (!f)
		return bo_errf(err, -errno, "--keep: cannot create %s: %s", path, strerror(errno));
	bool ok = fwrite(s->view, 1, s->size, f) == s->size;
	if (fclose(f) || !ok)
		return bo_errf(err, -EIO, "--keep: writing %s failed", path);
	return 0;
}

int crash_store_members(struct crash_store *s, const struct rec_log *log, struct bo_err *err)
{
	uint64_t ss = rec_log_sector_size(log);
	unsigned n = rec_log_ndev(log);
	char tmp[4200], path[4200];
	for (unsigned d = 0; d < n; d++)
		if ((rec_log_dev_sectors(log, d) * ss) % BLOCK)
			return bo_errf(
			    err, -EINVAL,
			    "state store: member %u is %llu bytes, not a whole number of "
			    "4 KiB blocks (a delta's block would span two members)",
			    d, (unsigned long long)(rec_log_dev_sectors(log, d) * ss));
	snprintf(tmp, sizeof(tmp), "%s/.members.tmp", s->dir);
	snprintf(path, sizeof(path), "%s/members", s->dir);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return bo_errf(err, -errno, "state store: cannot create %s: %s", tmp,
		               strerror(errno));
	for (unsigned d = 0; d < n; d++)
		fprintf(f, "m%u %llu %llu\n", d,
		        (unsigned long long)(rec_log_dev_start(log, d) * ss),
		        (unsigned long long)(rec_log_dev_sectors(log, d) * ss));
	int rc = fclose(f) ? -EIO : 0;
	if (rc == 0 && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc ? bo_errf(err, rc, "state store: writing %s: %s", path, strerror(-rc)) : 0;
}

int crash_store_finish(struct crash_store *s, struct bo_err *err)
{
	char tmp[4200], path[4200];
	snprintf(tmp, sizeof(tmp), "%s/.index.tmp", s->dir);
	snprintf(path, sizeof(path), "%s/index", s->dir);
	int rc = fclose(s->index) ? -EIO : 0;
	s->index = NULL;
	if (rc == 0 && rename(tmp, path))
		rc = -errno;
	return rc ? bo_errf(err, rc, "state store: writing %s: %s", path, strerror(-rc)) : 0;
}

void crash_store_close(struct crash_store *s)
{
	if (s->index) {
		char tmp[4200];
		fclose(s->index);
		snprintf(tmp, sizeof(tmp), "%s/.index.tmp", s->dir);
		unlink(tmp);
	}
	if (s->seen)
		fclose(s->seen);
	free(s->kept);
	free(s->cmp);
	free(s->dir);
	free(s->base);
	free(s->view);
	free(s->blocks);
	memset(s, 0, sizeof(*s));
}
