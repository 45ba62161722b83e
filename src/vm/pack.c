// SPDX-License-Identifier: GPL-2.0-or-later
/* pack.c — the judging guests' view of a state store (docs/realkernel.md section 2,
 * "deltas.img"): base.img checked, every s<N>.delta checked by vm_delta_check and
 * packed into one file at 4096-aligned offsets, which qemu hands the guest as a
 * read-only disk. A broken store is one error here, before any guest boots. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/util.h"
#include "blackout/vm.h"

int vm_store_base_blocks(const char *statedir, uint64_t *nblocks, struct bo_err *err)
{
	char path[1100];
	struct stat st;
	snprintf(path, sizeof path, "%s/base.img", statedir);
	if (stat(path, &st) < 0)
		return bo_errf(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size % VM_DELTA_BLOCK)
		return bo_errf(err, -EINVAL,
		               "%s: not a regular file of a non-zero multiple of 4096 bytes", path);
	*nblocks = (uint64_t)st.st_size / VM_DELTA_BLOCK;
	return 0;
}

/* One delta, checked, appended to out at *end (then rounded up to 4096). */
static int pack_one(const char *path, uint64_t nblocks, int out, uint64_t *end, struct bo_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return bo_errf(err, -e, "%s: %s", path, strerror(e));
	}
	/* a FIFO would stall the pool; a file larger than any delta of this device is not one */
	uint64_t max = VM_DELTA_HDR + nblocks * VM_DELTA_REC;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return bo_errf(err, -EINVAL, "%s: not a regular file of at most %llu bytes", path,
		               (unsigned long long)max);
	}
	size_t len = (size_t)st.st_size;
	uint8_t *buf = malloc(len ? len : 1);
	int rc = buf ? bo_read_full(fd, buf, len) : -ENOMEM;
	close(fd);
	uint32_t count;
	struct bo_err why = {{0}};
	if (rc)
		rc = bo_errf(err, rc, "%s: %s", path, strerror(-rc));
	else if ((rc = vm_delta_check(buf, len, nblocks, &count, &why)))
		rc = bo_errf(err, rc, "%s: %s", path, why.msg);
	else if ((rc = bo_pwrite_full(out, buf, len, (off_t)*end)))
		rc = bo_errf(err, rc, "writing deltas.img: %s", strerror(-rc));
	else
		*end += (len + VM_DELTA_BLOCK - 1) / VM_DELTA_BLOCK * VM_DELTA_BLOCK;
	free(buf);
	return rc;
}

int vm_deltas_pack(const char *statedir, size_t n, const char *out, uint64_t *offsets,
                   struct bo_err *err)
{
	uint64_t nblocks;
	int rc = vm_store_base_blocks(statedir, &nblocks, err);
	if (rc)
		return rc;
	char tmp[1100], path[1100];
	snprintf(tmp, sizeof tmp, "%s.tmp", out);
	int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return bo_errf(err, -errno, "%s: %s", tmp, strerror(errno));
	uint64_t end = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		snprintf(path, sizeof path, "%s/s%zu.delta", statedir, i);
		offsets[i] = end;
		rc = pack_one(path, nblocks, fd, &end, err);
	}
	/* qemu sees a raw disk of whole sectors: the last delta's padding is kept */
	if (rc == 0 && ftruncate(fd, (off_t)(end ? end : VM_DELTA_BLOCK)) < 0)
		rc = bo_errf(err, -errno, "%s: %s", tmp, strerror(errno));
	if (close(fd) < 0 && rc == 0)
		rc = bo_errf(err, -errno, "%s: %s", tmp, strerror(errno));
	if (rc == 0 && rename(tmp, out) < 0)
		rc = bo_errf(err, -errno, "%s: %s", out, strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}
