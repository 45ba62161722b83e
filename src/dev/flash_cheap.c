// SPDX-License-Identifier: GPL-2.0-or-later
/* flash_cheap.c — the cheap FTL of an SD card or USB stick: block-mapped, and every
 * write is a read-modify-write of its whole erase block, in place, through a one-block
 * RAM buffer (read the block, erase it, program every page in order). A power cut
 * in the middle destroys sectors of that block the host never touched in this epoch.
 * Spare blocks only replace blocks that wore out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev/flash_int.h"

struct cheap {
	uint32_t *map;      /* user erase block -> physical block */
	uint32_t *gen;      /* user block -> how many times it moved to a spare */
	unsigned char *buf; /* the one-block buffer (scratch, not state) */
};

static int cheap_init(struct flash *f)
{
	struct cheap *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	f->fs = c;
	c->map = calloc(f->nlb, sizeof(*c->map));
	c->gen = calloc(f->nlb, sizeof(*c->gen));
	c->buf = malloc(f->p.eb_size);
	return c->map && c->gen && c->buf ? 0 : -ENOMEM;
}

static void cheap_free(struct flash *f)
{
	struct cheap *c = f->fs;
	free(c->map);
	free(c->gen);
	free(c->buf);
	free(c);
	f->fs = NULL;
}

static int cheap_clone(const struct flash *f, struct flash *copy)
{
	int rc = cheap_init(copy);
	if (rc == 0) {
		const struct cheap *c = f->fs;
		struct cheap *n = copy->fs;
		memcpy(n->map, c->map, f->nlb * sizeof(uint32_t));
		memcpy(n->gen, c->gen, f->nlb * sizeof(uint32_t));
	}
	return rc;
}

static int owner_cb(struct flash *f, uint32_t block, void *ctx)
{
	(void)ctx;
	struct cheap *c = f->fs;
	uint32_t ec, flags, owner, gen;
	flash_meta_header(f, &ec, &flags, &owner, &gen);
	/* a replacement block names the user block it stands for and which replacement
	 * it is: the latest wins, good or (worn out since, data intact) bad. Only
	 * spare blocks can replace, so no two user blocks ever share one. */
	if (block >= f->nlb && owner && owner - 1 < f->nlb && gen > c->gen[owner - 1]) {
		c->map[owner - 1] = block;
		c->gen[owner - 1] = gen;
	}
	return 0;
}

static int cheap_rebuild(struct flash *f)
{
	struct cheap *c = f->fs;
	for (uint32_t l = 0; l < f->nlb; l++) {
		c->map[l] = l;
		c->gen[l] = 0;
	}
	return flash_scan(f, owner_cb, NULL);
}

/* The whole block as the host sees it: erased pages read as 0xFF. */
static int read_block(struct flash *f, uint32_t pb, unsigned char *buf)
{
	int rc = flash_nand_read_meta(f, pb);
	if (rc)
		return rc;
	/* meta_buf holds the spares; page reads do not touch it */
	for (uint32_t i = 0; i < f->ppb; i++) {
		struct flash_spare sp;
		flash_meta_spare(f, i, &sp);
		unsigned char *dst = buf + (size_t)i * f->p.page_size;
		if (sp.seq == 0)
			memset(dst, 0xff, f->p.page_size);
		else if ((rc = flash_nand_read(f, (uint64_t)pb * f->ppb + i, dst)))
			return rc;
	}
	return 0;
}

static int cheap_read(struct flash *f, uint64_t lba, uint32_t count, void *out)
{
	struct cheap *c = f->fs;
	size_t ss = f->dev.sector_size;
	uint64_t spb = f->p.eb_size / ss; /* sectors per erase block */
	unsigned char *o = out;
	while (count) {
		uint32_t l = (uint32_t)(lba / spb);
		uint64_t in = lba % spb;
		uint32_t n = (uint32_t)(spb - in < count ? spb - in : count);
		int rc = flash_nand_read_meta(f, c->map[l]);
		if (rc)
			return rc;
		/* page by page: consult the spare, read only programmed pages */
		uint64_t s = in;
		while (s < in + n) {
			uint32_t page = (uint32_t)(s / f->spp);
			uint64_t pend = (uint64_t)(page + 1) * f->spp;
			uint64_t e = pend < in + n ? pend : in + n;
			struct flash_spare sp;
			flash_meta_spare(f, page, &sp);
			unsigned char *dst = o + (s - in) * ss;
			if (sp.seq == 0) {
				memset(dst, 0xff, (e - s) * ss);
			} else {
				rc = flash_nand_read(f, (uint64_t)c->map[l] * f->ppb + page,
				                     f->page_buf);
				if (rc)
					return rc;
				memcpy(dst, f->page_buf + (s - (uint64_t)page * f->spp) * ss,
				       (e - s) * ss);
			}
			s = e;
		}
		o += (size_t)n * ss;
		lba += n;
		count -= n;
	}
	return 0;
}

/* A good spare block not standing for a user block yet, least worn first. */
static uint32_t pick_spare(struct flash *f)
{
	struct cheap *c = f->fs;
	uint8_t *used = calloc(f->nblocks, 1);
	if (!used)
		return FLASH_NONE;
	for (uint32_t l = 0; l < f->nlb; l++)
		used[c->map[l]] = 1;
	uint32_t best = FLASH_NONE;
	for (uint32_t b = f->nlb; b < f->nblocks; b++)
		if (!used[b] && !f->bad[b] && (best == FLASH_NONE || f->ec[b] < f->ec[best]))
			best = b;
	free(used);
	return best;
}

static int rmw_block(struct flash *f, uint32_t l, uint64_t in, uint32_t n, const void *data)
{
	struct cheap *c = f->fs;
	size_t ss = f->dev.sector_size;
	uint32_t pb = c->map[l];
	int rc = read_block(f, pb, c->buf);
	if (rc)
		return rc;
	memcpy(c->buf + in * ss, data, (size_t)n * ss);
	rc = flash_nand_erase(f, pb, pb == l ? 0 : l + 1, c->gen[l]);
	while (rc == -EIO) {
		/* worn out: move the user block to a spare, if one is left */
		uint32_t sb = pick_spare(f);
		if (sb == FLASH_NONE)
			return bo_errf(&f->dev.err, -EIO,
			               "flash: erase block %u (user block %u) is worn out and no "
			               "spare block is left: write refused, old data kept",
			               pb, l);
		rc = flash_nand_erase(f, sb, l + 1, c->gen[l] + 1);
		if (rc == 0) {
			c->map[l] = sb;
			c->gen[l]++;
			pb = sb;
		} else if (rc != -EIO) {
			return rc;
		}
	}
	if (rc)
		return rc;
	for (uint32_t i = 0; i < f->ppb; i++) {
		uint32_t lpn = l * f->ppb + i;
		struct flash_spare sp = {1, lpn, flash_spare_crc(1, lpn)};
		rc = flash_nand_program(f, (uint64_t)pb * f->ppb + i,
		                        c->buf + (size_t)i * f->p.page_size, &sp);
		if (rc)
			return rc;
	}
	return 0;
}

static int cheap_write(struct flash *f, uint64_t lba, uint32_t count, const void *data)
{
	size_t ss = f->dev.sector_size;
	uint64_t spb = f->p.eb_size / ss;
	const unsigned char *d = data;
	while (count) {
		uint32_t l = (uint32_t)(lba / spb);
		uint64_t in = lba % spb;
		uint32_t n = (uint32_t)(spb - in < count ? spb - in : count);
		int rc = rmw_block(f, l, in, n, d);
		if (rc)
			return rc;
		d += (size_t)n * ss;
		lba += n;
		count -= n;
	}
	return 0;
}

const struct flash_ftl_ops flash_cheap_ops = {
    .name = "cheap",
    .init = cheap_init,
    .rebuild = cheap_rebuild,
    .read = cheap_read,
    .write = cheap_write,
    .clone = cheap_clone,
    .free = cheap_free,
};
