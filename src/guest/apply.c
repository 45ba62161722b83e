// SPDX-License-Identifier: GPL-2.0-or-later
/* apply.c — `bo-observe apply DELTADEV OFFSET TARGET`: writes one state's delta (the
 * store's BOSTATE1 format, docs/realkernel.md section 2), read from the pool's
 * deltas.img at OFFSET, onto TARGET (the guest's dm-snapshot of the base), then fsyncs.
 * The delta is checked whole by the store's own checker (vm_delta_check) against
 * TARGET's size before a byte is written. Every failure is named: the guest reports it
 * as a harness error, never as the filesystem's. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "blackout/util.h"
#include "blackout/vm.h"

/* A delta larger than this is refused rather than held in the guest's RAM (a state
 * differing from the base in 16,000 blocks of 4 KiB is a store to split). */
#define APPLY_MAX (64ull << 20)

static int fail(const char *what, const char *detail)
{
	fprintf(stderr, "bo-observe apply: %s: %s\n", what, detail);
	return 1;
}

/* The size of the delta at off from its header (checked again in full below). */
static int delta_len(int fd, off_t off, off_t devsize, uint64_t *len)
{
	uint8_t h[VM_DELTA_HDR];
	int rc = bo_pread_full(fd, h, sizeof h, off);
	if (rc)
		return rc;
	if (memcmp(h, VM_DELTA_MAGIC, 8) != 0)
		return -EBADMSG;
	uint64_t n =
	    (uint64_t)h[12] | (uint64_t)h[13] << 8 | (uint64_t)h[14] << 16 | (uint64_t)h[15] << 24;
	*len = VM_DELTA_HDR + n * VM_DELTA_REC;
	if (*len > APPLY_MAX || *len > (uint64_t)(devsize - off))
		return -EFBIG;
	return 0;
}

int bo_apply(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: bo-observe apply DELTADEV OFFSET TARGET\n");
		return 2;
	}
	char *end;
	errno = 0;
	unsigned long long off = strtoull(argv[3], &end, 10);
	if (errno || end == argv[3] || *end || argv[3][0] == '-' || off % 4096 || off > INT64_MAX)
		return fail(argv[3], "OFFSET must be a decimal multiple of 4096");
	int dfd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (dfd < 0)
		return fail(argv[2], strerror(errno));
	int tfd = open(argv[4], O_RDWR | O_CLOEXEC);
	if (tfd < 0)
		return fail(argv[4], strerror(errno));
	off_t dsize = lseek(dfd, 0, SEEK_END), tsize = lseek(tfd, 0, SEEK_END);
	if (dsize < 0 || tsize <= 0 || tsize % VM_DELTA_BLOCK)
		return fail(argv[4], "size unknown or not a multiple of 4096");
	if ((off_t)off >= dsize)
		return fail(argv[3], "OFFSET past the end of the deltas device");
	uint64_t len;
	int rc = delta_len(dfd, (off_t)off, dsize, &len);
	if (rc == -EBADMSG)
		return fail(argv[3], "no BOSTATE1 delta at this offset");
	if (rc == -EFBIG)
		return fail(argv[3], "the delta's count runs past the deltas device or 64 MiB");
	if (rc)
		return fail(argv[2], strerror(-rc));
	uint8_t *buf = malloc(len);
	if (!buf)
		return fail(argv[3], "out of memory for the delta");
	if ((rc = bo_pread_full(dfd, buf, len, (off_t)off)))
		return fail(argv[2], strerror(-rc));
	struct bo_err err = {{0}};
	uint32_t count;
	if (vm_delta_check(buf, len, (uint64_t)tsize / VM_DELTA_BLOCK, &count, &err))
		return fail(argv[3], err.msg);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *data = buf + VM_DELTA_HDR + (size_t)i * VM_DELTA_REC + 8;
		rc = bo_pwrite_full(tfd, data, VM_DELTA_BLOCK,
		                    (off_t)(vm_delta_block(buf, i) * VM_DELTA_BLOCK));
		if (rc) {
			char what[64];
			snprintf(what, sizeof what, "writing block %" PRIu64,
			         vm_delta_block(buf, i));
			return fail(what, strerror(-rc));
		}
	}
	if (fsync(tfd) < 0)
		return fail(argv[4], strerror(errno));
	free(buf);
	close(tfd);
	close(dfd);
	return 0;
}
