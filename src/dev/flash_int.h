/* SPDX-License-Identifier: GPL-2.0-or-later */
/* flash_int.h — internals shared by the flash model's NAND layer (flash.c) and its two
 * translation layers (flash_cheap.c, flash_careful.c). Not a public interface.
 *
 * Lower-medium layout (bytes): [superblock: one lower sector] [per-block metadata, each
 * block's rounded up to lower sectors: 16-byte header {erase count, flags, owner, gen}
 * then one 16-byte spare entry per page {seq, lpn, crc}] [page data, 4k-aligned].
 * A page is programmed iff its spare seq is non-zero; erased pages read as 0xFF. An
 * all-zero lower is a factory-fresh chip. */
#ifndef BLACKOUT_DEV_FLASH_INT_H
#define BLACKOUT_DEV_FLASH_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/flash.h"

#define FLASH_NONE      UINT32_MAX
#define FLASH_HDR_BYTES 16
#define FLASH_SPARE     16
#define FLASH_BAD       1u /* header flag: the block failed an erase */

struct flash_spare {
	uint64_t seq; /* 0 = erased */
	uint32_t lpn; /* logical page the data belongs to */
	uint32_t crc; /* crc32c of seq and lpn: a torn program fails it */
};

struct flash;

/* A device opened without a lower stands on a copy-on-write overlay of a zeroed RAM
 * image (lazily allocated by the OS) that it and its clones share. */
struct flash_base {
	uint32_t ref;
	struct bdev *mem;
};

struct flash_ftl_ops {
	const char *name;
	int (*init)(struct flash *f);    /* allocate RAM state */
	int (*rebuild)(struct flash *f); /* RAM state from the lower only (open, power on) */
	int (*read)(struct flash *f, uint64_t lba, uint32_t count, void *buf);
	int (*write)(struct flash *f, uint64_t lba, uint32_t count, const void *buf);
	int (*clone)(const struct flash *f, struct flash *copy);
	void (*free)(struct flash *f);
	void (*stats)(struct flash *f, void (*emit)(void *, const char *, uint64_t), void *ctx);
};

struct flash_stats {
	uint64_t host_writes, host_write_bytes, host_reads, flushes;
	uint64_t nand_programs, nand_erases, nand_page_reads, erase_failures;
	uint64_t gc_runs, gc_copies, wl_moves, cache_destages;
};

struct flash_centry {
	uint64_t lba;
	uint32_t count;
	unsigned char *data;
};

/* Micro-step recording while a power cut replays the interrupted operation. */
struct flash_rstep {
	bool program;   /* else erase */
	uint32_t block; /* erase block of the step */
	uint64_t ppn;   /* programs: physical page */
};
struct flash_rwrite {
	uint32_t step;
	uint64_t off;
	uint32_t len;
	size_t before; /* offset of the before-image in the arena */
};
struct flash_rec {
	struct flash_rstep *steps;
	uint32_t nsteps, capsteps;
	struct flash_rwrite *w;
	uint32_t nw, capw;
	unsigned char *arena; /* before-images, back to back */
	size_t used, cap;
	int err; /* ENOMEM while recording */
};

struct flash {
	struct bdev dev;
	struct bdev *lower; /* first after dev: the pass-through ops of single.c */
	struct flash_params p;
	const struct flash_ftl_ops *ftl;
	void *fs; /* the FTL's RAM state */

	uint32_t lss;     /* lower sector size */
	uint32_t ppb;     /* pages per erase block */
	uint32_t nblocks; /* physical erase blocks, spares included */
	uint32_t nlb;     /* user (logical) erase blocks */
	uint32_t spp;     /* exported sectors per page */
	uint64_t nlpn, nppn;
	uint64_t meta_off, meta_bytes, data_off, lower_bytes;

	uint32_t *ec;  /* erase count per block (mirror of the headers) */
	uint8_t *bad;  /* bad flag per block (mirror) */
	uint32_t nbad; /* bad blocks */

	struct flash_stats st;
	struct flash_centry *cache;
	uint32_t ncache, capcache;
	uint64_t cache_used;

	struct flash_rec *rec;
	struct flash_base *base; /* the private RAM medium under `lower`, or NULL */
	unsigned char *page_buf; /* scratch: one page */
	unsigned char *meta_buf; /* scratch: one block's metadata */
	unsigned char *sect_buf; /* scratch: one lower sector */
};

extern const struct flash_ftl_ops flash_cheap_ops, flash_careful_ops;

/* ---- NAND layer (flash.c) ---- */
uint32_t flash_spare_crc(uint64_t seq, uint32_t lpn);
/* Programs one page with data and spare: one micro-step. */
int flash_nand_program(struct flash *f, uint64_t ppn, const void *data,
                       const struct flash_spare *sp);
/* Erases a block: one micro-step. A block past its endurance fails: it is marked bad
 * (its data stays readable) and -EIO is returned. A block already bad fails at once. */
int flash_nand_erase(struct flash *f, uint32_t block, uint32_t owner, uint32_t gen);
/* The raw data of a page (no erased check: caller knows it is programmed). */
int flash_nand_read(struct flash *f, uint64_t ppn, void *buf);
/* One block's metadata into f->meta_buf, decoded on demand by the helpers below. */
int flash_nand_read_meta(struct flash *f, uint32_t block);
void flash_meta_header(const struct flash *f, uint32_t *ec, uint32_t *flags, uint32_t *owner,
                       uint32_t *gen);
void flash_meta_spare(const struct flash *f, uint32_t page, struct flash_spare *sp);
/* Reads every block header into f->ec / f->bad and calls fn (may be NULL) per block
 * with the metadata in f->meta_buf. */
int flash_scan(struct flash *f, int (*fn)(struct flash *f, uint32_t block, void *ctx), void *ctx);

#endif
