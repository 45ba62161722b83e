/* SPDX-License-Identifier: GPL-2.0-or-later */
/* flash.h — the NAND flash model with a cheap (block-mapped) or careful (page-mapped log)
 * flash translation layer. Registry glue lives in src/dev/; this is the C constructor. */
#ifndef BLACKOUT_FLASH_H
#define BLACKOUT_FLASH_H

#include <stdbool.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/err.h"

enum flash_ftl {
	FLASH_FTL_CHEAP = 0,   /* read-modify-write of the whole erase block, in place */
	FLASH_FTL_CAREFUL = 1, /* out-of-place log, sequence-numbered spare, GC, wear levelling */
};

struct flash_params {
	enum flash_ftl ftl;
	uint32_t sector_size; /* exported sector: 512 or 4096 */
	uint32_t page_size;   /* NAND page: 512 .. 64k, multiple of sector_size */
	uint64_t eb_size;     /* erase block: 16k .. 8M, multiple of page_size */
	uint64_t size;        /* exported capacity, a multiple of eb_size */
	uint32_t op_percent;  /* spare erase blocks, percent of the user blocks (rounded up) */
	uint32_t endurance;   /* erases a block survives before it goes bad; 0 = unlimited */
	uint64_t cache_bytes; /* internal RAM write cache; 0 = none (writes go straight to NAND) */
	bool flush_ignore;    /* the cache ignores flush and FUA (a lying device) */
	bool garbage;         /* a cut leaves interrupted pages with garbage instead of erased */
	bool partial_erase;   /* cheap: a cut can interrupt an erase, leaving weak bits */
	uint64_t seed;        /* for the garbage, so every outcome is reproducible */
};

/* ftl=careful, sector 512, page 4k, eb 128k, size 64M, op 7%, no endurance limit, no cache,
 * partial erases on. */
void flash_params_default(struct flash_params *p);

/* Checks the geometry; *lower_bytes (may be NULL) is the size the lower medium needs
 * when its sector size is lower_sector (512 or 4096; metadata is kept per block in
 * whole lower sectors, so 512 is smaller and faster). */
int flash_params_check(const struct flash_params *p, uint32_t lower_sector, uint64_t *lower_bytes,
                       struct bo_err *err);

/* Opens the model over `lower`, a medium (mem, file, cow) of at least the size
 * flash_params_check reports, which then holds the NAND pages, their spare areas and
 * per-block erase counters: nothing that must survive a power cut lives only in RAM.
 * A blank (all-zero) lower is formatted; one holding a flash image of the same
 * geometry is mounted (the FTL rebuilds its map from it). On success the device owns
 * `lower`; on failure the caller still does. */
int dev_flash_open(const struct flash_params *p, struct bdev *lower, struct bdev **out,
                   struct bo_err *err);

/* The same over a private, blank RAM medium (a copy-on-write overlay of a zeroed
 * image the device's clones share, so a clone costs only the FTL's RAM state). */
int dev_flash_open_ram(const struct flash_params *p, struct bdev **out, struct bo_err *err);

#endif
