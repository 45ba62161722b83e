// SPDX-License-Identifier: GPL-2.0-or-later
/* media.c — the registry entries for the media a stack bottoms out on (mem, file):
 * parameters in, a blk_mem_open / blk_file_open call out. The media themselves are
 * in src/blk/. */
#include <errno.h>
#include <stdbool.h>

#include "blackout/util.h"

#include "blackout/dev.h"

static const char *const sector_sizes[] = {"512", "4096", NULL};

static int sector_arg(const struct dev_args *a, uint32_t *ss, struct bo_err *err)
{
	int i;
	int rc = dev_arg_enum(a, "sector", sector_sizes, &i, err);
	*ss = i == 1 ? 4096 : 512;
	return rc;
}

/* size and sector size: a whole, positive number of sectors (file: 0 is its size) */
static int size_args(const struct dev_args *a, bool zero_ok, uint64_t *size, uint32_t *ss,
                     struct bo_err *err)
{
	int rc = dev_arg_size(a, "size", size, err);
	if (rc == 0)
		rc = sector_arg(a, ss, err);
	if (rc)
		return rc;
	if ((*size == 0 && !zero_ok) || *size % *ss) {
		char b[32];
		return bo_errf(err, -EINVAL,
		               "%s: size=%s is not a %swhole number of %u-byte sectors",
		               dev_args_model(a)->name, bo_format_size(*size, b, sizeof(b)),
		               zero_ok ? "" : "positive ", *ss);
	}
	return 0;
}

static int mem_check(const struct dev_args *a, struct bo_err *err)
{
	uint64_t size;
	uint32_t ss;
	return size_args(a, false, &size, &ss, err);
}

static int file_check(const struct dev_args *a, struct bo_err *err)
{
	uint64_t size;
	uint32_t ss;
	return size_args(a, true, &size, &ss, err);
}

static int mem_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                    struct bdev **out, struct bo_err *err)
{
	(void)lowers;
	(void)nlowers;
	uint64_t size;
	uint32_t ss;
	int rc = size_args(a, false, &size, &ss, err);
	if (rc)
		return rc;
	rc = blk_mem_open(ss, size / ss, out);
	if (rc)
		return bo_errf(err, rc, "mem: cannot allocate %llu bytes",
		               (unsigned long long)size);
	return 0;
}

static const struct dev_param mem_params[] = {
    {"size", "16M", "capacity in bytes, at most 16G (backed only where written)", DEV_PT_SIZE, NULL,
     16ull << 30, DEV_RAM_ALWAYS},
    {"sector", "512", "sector size: 512|4096", DEV_PT_ENUM, sector_sizes},
    {NULL},
};

const struct dev_model dev_model_mem = {
    .name = "mem",
    .summary = "RAM image: every completed write is durable, nothing is volatile",
    .params = mem_params,
    .open = mem_open,
    .check = mem_check,
};

static int file_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                     struct bdev **out, struct bo_err *err)
{
	(void)lowers;
	(void)nlowers;
	uint64_t size;
	uint32_t ss;
	bool ro;
	int rc = size_args(a, true, &size, &ss, err);
	if (rc == 0)
		rc = dev_arg_bool(a, "readonly", &ro, err);
	if (rc)
		return rc;
	unsigned flags = ro ? BLK_FILE_RDONLY : size ? BLK_FILE_CREATE : 0;
	return blk_file_open(dev_arg_str(a, "path"), ss, size, flags, out, err);
}

static const struct dev_param file_params[] = {
    {"path", NULL, "image file or block device"},
    {"size", "0",
     "bytes, at most 1T; 0 = the file's size, larger creates or extends the file (sparse)",
     DEV_PT_SIZE, NULL, 1ull << 40},
    {"sector", "512", "sector size: 512|4096", DEV_PT_ENUM, sector_sizes},
    {"readonly", "false", "open read-only (writes fail with EROFS)", DEV_PT_BOOL},
    {NULL},
};

const struct dev_model dev_model_file = {
    .name = "file",
    .summary = "image file or block device: pread/pwrite, flush and FUA are fdatasync",
    .params = file_params,
    .open = file_open,
    .check = file_check,
};
