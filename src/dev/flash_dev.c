// SPDX-License-Identifier: GPL-2.0-or-later
/* flash_dev.c — the `flash` entry of the model registry: its parameters and the glue
 * from parsed spec arguments to dev_flash_open. The model itself is flash.c. */
#include <errno.h>

#include "blackout/dev.h"
#include "blackout/flash.h"

static const char *const ftls[] = {"cheap", "careful", NULL};
static const char *const honor_ignore[] = {"honor", "ignore", NULL};

static const struct dev_param flash_params[] = {
    {"ftl", "careful",
     "cheap: block-mapped, read-modify-write of the whole erase block in place (collateral "
     "damage at a cut); careful: page-mapped log, atomic map commit, GC, wear levelling",
     DEV_PT_ENUM, ftls},
    {"size", "64M", "exported capacity, a whole number of erase blocks, at most 16G", DEV_PT_SIZE,
     NULL, 16ull << 30, DEV_RAM_IF_LEAF},
    {"eb", "128k", "erase block size, a power of two from 16k to 8M", DEV_PT_SIZE},
    {"page", "4k", "NAND page (program unit), a power of two from 512 to 64k", DEV_PT_SIZE},
    {"sector", "512", "exported sector size: 512 or 4096", DEV_PT_U64},
    {"op", "7",
     "over-provisioning: spare erase blocks as a percentage of the user blocks (careful "
     "keeps at least 3)",
     DEV_PT_U64},
    {"endurance", "0",
     "erases a block survives before it goes bad (then writes fail with EIO); 0 = "
     "unlimited",
     DEV_PT_U64},
    {"cache", "0", "internal RAM write cache in bytes, at most 1G; 0 = none", DEV_PT_SIZE, NULL,
     1ull << 30, DEV_RAM_ALWAYS},
    {"flush", "honor", "honor: flush and FUA destage the cache; ignore: a lying device",
     DEV_PT_ENUM, honor_ignore},
    {"garbage", "false",
     "a cut leaves the unprogrammed pages of an interrupted block (cheap) or the "
     "interrupted page (careful) with garbage instead of erased 0xFF",
     DEV_PT_BOOL},
    {"partial_erase", "true",
     "cheap: a cut can fall inside an erase, leaving the block's old pages with some 0 "
     "bits read as 1 (1 in 256) instead of intact or erased",
     DEV_PT_BOOL},
    {"seed", "0", "seed of the garbage and of the partial erases", DEV_PT_U64},
    {NULL},
};

/* The arguments as flash_params, checked as the model will check them (a lower's
 * sector size taken as 512, the smallest: the layout is checked again at open). */
static int flash_args(const struct dev_args *a, struct flash_params *pp, struct bo_err *err)
{
	struct flash_params p;
	flash_params_default(&p);
	int ftl, fl;
	uint64_t sector, op, endurance, page;
	int rc = dev_arg_enum(a, "ftl", ftls, &ftl, err);
	if (rc == 0)
		rc = dev_arg_size(a, "size", &p.size, err);
	if (rc == 0)
		rc = dev_arg_size(a, "eb", &p.eb_size, err);
	if (rc == 0)
		rc = dev_arg_size(a, "page", &page, err);
	if (rc == 0)
		rc = dev_arg_u64(a, "sector", &sector, err);
	if (rc == 0)
		rc = dev_arg_u64(a, "op", &op, err);
	if (rc == 0)
		rc = dev_arg_u64(a, "endurance", &endurance, err);
	if (rc == 0)
		rc = dev_arg_size(a, "cache", &p.cache_bytes, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "flush", honor_ignore, &fl, err);
	if (rc == 0)
		rc = dev_arg_bool(a, "garbage", &p.garbage, err);
	if (rc == 0)
		rc = dev_arg_bool(a, "partial_erase", &p.partial_erase, err);
	if (rc == 0)
		rc = dev_arg_u64(a, "seed", &p.seed, err);
	if (rc)
		return rc;
	if (page > (64u << 10) || sector > 4096 || op > 400 || endurance > UINT32_MAX)
		return bo_errf(err, -EINVAL,
		               "flash: page %llu, sector %llu, op %llu or endurance %llu out of "
		               "range (page <= 64k, sector 512|4096, op <= 400, endurance < 2^32)",
		               (unsigned long long)page, (unsigned long long)sector,
		               (unsigned long long)op, (unsigned long long)endurance);
	p.ftl = ftl == 0 ? FLASH_FTL_CHEAP : FLASH_FTL_CAREFUL;
	p.page_size = (uint32_t)page;
	p.sector_size = (uint32_t)sector;
	p.op_percent = (uint32_t)op;
	p.endurance = (uint32_t)endurance;
	p.flush_ignore = fl == 1;
	*pp = p;
	return flash_params_check(&p, 512, NULL, err);
}

static int flash_check(const struct dev_args *a, struct bo_err *err)
{
	struct flash_params p;
	return flash_args(a, &p, err);
}

static int flash_model_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                            struct bdev **out, struct bo_err *err)
{
	struct flash_params p;
	int rc = flash_args(a, &p, err);
	if (rc)
		return rc;
	if (nlowers == 0)
		return dev_flash_open_ram(&p, out, err);
	return dev_flash_open(&p, lowers[0], out, err);
}

const struct dev_model dev_model_flash = {
    .name = "flash",
    .summary = "NAND flash behind a cheap (erase-block read-modify-write) or careful (log, "
               "GC) translation layer; with no lower device it keeps its pages in RAM",
    .params = flash_params,
    .min_lowers = 0,
    .max_lowers = 1,
    .open = flash_model_open,
    .check = flash_check,
};
