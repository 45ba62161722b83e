// SPDX-License-Identifier: GPL-2.0-or-later
/* delta.c — the state store's delta files (docs/realkernel.md section 2): checking one
 * read from untrusted bytes, and writing one as the difference of two images (tests,
 * tools). The plugin (src/nbd/states.c) serves what this file accepts. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/vm.h"

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

uint64_t vm_delta_block(const uint8_t *buf, uint32_t i)
{
	return get64(buf + VM_DELTA_HDR + (size_t)i * VM_DELTA_REC);
}

int vm_delta_check(const uint8_t *buf, size_t len, uint64_t nblocks, uint32_t *count,
                   struct bo_err *err)
{
	if (len < VM_DELTA_HDR)
		return bo_errf(err, -EINVAL, "%zu bytes: shorter than the 16-byte header", len);
	if (memcmp(buf, VM_DELTA_MAGIC, 8) != 0)
		return bo_errf(err, -EINVAL, "wrong magic (not a BOSTATE1 delta)");
	uint32_t bs = get32(buf + 8), n = get32(buf + 12);
	if (bs != VM_DELTA_BLOCK)
		return bo_errf(err, -EINVAL, "block size %" PRIu32 ", expected 4096", bs);
	/* the size must be exact: a truncated or padded file is not this state */
	if ((len - VM_DELTA_HDR) % VM_DELTA_REC != 0 || (len - VM_DELTA_HDR) / VM_DELTA_REC != n)
		return bo_errf(
		    err, -EINVAL,
		    "size %zu bytes does not match its count of %" PRIu32 " blocks (expected %llu)",
		    len, n,
		    (unsigned long long)VM_DELTA_HDR + (unsigned long long)n * VM_DELTA_REC);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t b = vm_delta_block(buf, i);
		if (b >= nblocks)
			return bo_errf(err, -EINVAL,
			               "record %" PRIu32 ": block %" PRIu64
			               " outside the device (%" PRIu64 " blocks)",
			               i, b, nblocks);
		if (i > 0 && b <= prev)
			return bo_errf(err, -EINVAL,
			               "record %" PRIu32 ": block %" PRIu64
			               " not after block %" PRIu64
			               " (indices must strictly increase)",
			               i, b, prev);
		prev = b;
	}
	*count = n;
	return 0;
}

static int read_full(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, buf + got, len - got, (off_t)(off + got));
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	memset(buf + got, 0, len - got); /* a short image reads as zeros past its end */
	return 0;
}

static int write_full(FILE *f, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, f) == len ? 0 : -EIO;
}

/* The delta of `image` against `base` (same size, a multiple of 4096) into `out`. */
int vm_delta_write(const char *base, const char *image, const char *out, struct bo_err *err)
{
	int rc = 0;
	int fb = open(base, O_RDONLY | O_CLOEXEC), fi = open(image, O_RDONLY | O_CLOEXEC);
	FILE *f = NULL;
	uint8_t *a = malloc(VM_DELTA_BLOCK), *b = malloc(VM_DELTA_BLOCK);
	struct stat sb, si;
	if (!a || !b) {
		rc = -ENOMEM;
		goto out;
	}
	if (fb < 0 || fstat(fb, &sb) < 0) {
		rc = bo_errf(err, -errno, "%s: %s", base, strerror(errno));
		goto out;
	}
	if (fi < 0 || fstat(fi, &si) < 0) {
		rc = bo_errf(err, -errno, "%s: %s", image, strerror(errno));
		goto out;
	}
	if (sb.st_size != si.st_size || sb.st_size % VM_DELTA_BLOCK != 0) {
		rc = bo_errf(err, -EINVAL, "%s and %s: sizes differ or are not multiples of 4096",
		             base, image);
		goto out;
	}
	f = fopen(out, "wb");
	if (!f) {
		rc = bo_errf(err, -errno, "%s: %s", out, strerror(errno));
		goto out;
	}
	uint8_t hdr[VM_DELTA_HDR];
	memcpy(hdr, VM_DELTA_MAGIC, 8);
	put32(hdr + 8, VM_DELTA_BLOCK);
	put32(hdr + 12, 0); /* the count is written once known */
	rc = write_full(f, hdr, sizeof hdr);
	uint32_t n = 0;
	uint64_t nblocks = (uint64_t)sb.st_size / VM_DELTA_BLOCK;
	for (uint64_t i = 0; rc == 0 && i < nblocks; i++) {
		if ((rc = read_full(fb, a, VM_DELTA_BLOCK, i * VM_DELTA_BLOCK)) ||
		    (rc = read_full(fi, b, VM_DELTA_BLOCK, i * VM_DELTA_BLOCK)))
			break;
		if (memcmp(a, b, VM_DELTA_BLOCK) == 0)
			continue;
		uint8_t idx[8];
		put64(idx, i);
		if (n == UINT32_MAX)
			rc = -EFBIG;
		else if (!(rc = write_full(f, idx, 8)))
			rc = write_full(f, b, VM_DELTA_BLOCK);
		n++;
	}
	put32(hdr + 12, n);
	if (rc == 0 && (fseek(f, 12, SEEK_SET) != 0 || write_full(f, hdr + 12, 4)))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc)
		rc = bo_errf(err, rc, "%s: writing the delta failed: %s", out, strerror(-rc));
out:
	if (fb >= 0)
		close(fb);
	if (fi >= 0)
		close(fi);
	free(a);
	free(b);
	return rc;
}
