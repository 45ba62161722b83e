// SPDX-License-Identifier: GPL-2.0-or-later
/* mem.c — a RAM image: the simplest medium, and the base most tests and crash
 * states stand on. No volatile state: every completed write is durable.
 *
 * The image is one anonymous mapping (zero-filled, backed only where written),
 * seen as 4 KiB pages. A page can instead be a block the image adopted (blk_page_alloc):
 * a model above that is done with a whole page-sized buffer hands it over rather
 * than have it copied (write_swap: a cache writing back a 4 KiB line gives the
 * line's buffer to mem and takes mem's old page, or nothing, in return). page[i]
 * is that block, or NULL for the mapping's own page i. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "blackout/blk.h"

#define PAGE_SHIFT 12
#define PAGE_BYTES BLK_PAGE_BYTES
_Static_assert(PAGE_BYTES == 1u << PAGE_SHIFT, "mem's pages are blk_page_alloc's");

struct mem_dev {
	struct bdev dev;
	unsigned char *map;   /* the image, page-aligned */
	size_t bytes;         /* mapped: the image rounded up to whole pages */
	unsigned char **page; /* [bytes / PAGE_BYTES]: adopted blocks, NULL = map's own */
	bool heap;            /* a small image from the heap, not a mapping of its own */
	bool written;         /* a write came: until one does, every sector reads zero */
};

/* An image this small comes from the heap: a mapping of its own costs an mmap, its
 * first touch a page fault per page and an munmap, which for the unit tests' devices
 * of a few sectors, opened and closed per outcome, was most of their time (test_dev_cut:
 * 167 of 242 CPU-s in the kernel). */
#define HEAP_MAX (64u << 10)

static inline unsigned char *page_at(const struct mem_dev *m, size_t pg)
{
	return m->page[pg] ? m->page[pg] : m->map + ((size_t)pg << PAGE_SHIFT);
}

/* Gives the mapping's page pg back to the kernel: it reads as zeroes again. */
static void map_drop(struct mem_dev *m, size_t pg)
{
	if (m->heap || madvise(m->map + ((size_t)pg << PAGE_SHIFT), PAGE_BYTES, MADV_DONTNEED))
		memset(m->map + ((size_t)pg << PAGE_SHIFT), 0, PAGE_BYTES);
}

/* The piece of [pos, end) that lies in one page: its page, offset in it, length. */
static inline uint64_t piece(uint64_t pos, uint64_t end, size_t *pg, size_t *po)
{
	*pg = (size_t)(pos >> PAGE_SHIFT);
	*po = (size_t)(pos & (PAGE_BYTES - 1));
	uint64_t room = PAGE_BYTES - *po;
	return end - pos < room ? end - pos : room;
}

/* memcpy, kept a call into libc: GCC sees that a piece is at most 4 KiB and would
 * inline the copy as a `rep movs`, which measured 30% slower than libc's copy of
 * the same 4 KiB (bench_dev, bare mem). */
#if defined(__GNUC__) && !defined(__clang__)
#define NOT_SPECIALISED __attribute__((noipa)) /* GCC bounds n through inlining or IPA */
#else
#define NOT_SPECIALISED __attribute__((noinline))
#endif
NOT_SPECIALISED static void copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

static int mem_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct mem_dev *m = (struct mem_dev *)d;
	unsigned char *out = buf;
	uint64_t off = lba * d->sector_size, end = off + (uint64_t)count * d->sector_size;
	for (uint64_t pos = off, n; pos < end; pos += n) {
		size_t pg, po;
		n = piece(pos, end, &pg, &po);
		copy(out, page_at(m, pg) + po, n);
		out += n;
	}
	return 0;
}

/* A long write into the mapping's own pages, with streaming stores: the image is
 * far larger than the cache and a long write is not read back at once (a RAID
 * stripe's members, a state's blocks), so loading each line before overwriting
 * it only doubled the memory traffic (bench_raid: RAID6 full-stripe writes are
 * ~85% this copy). libc's memcpy streams only past several MiB. */
#define STREAM_MIN (32u << 10)
static void copy_stream(unsigned char *dst, const unsigned char *src, size_t n)
{
#ifdef __SSE2__
	if (((uintptr_t)dst & 15) == 0 && n % 64 == 0) {
		for (size_t i = 0; i < n; i += 64) {
			__m128i a = _mm_loadu_si128((const __m128i *)(src + i));
			__m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
			__m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
			__m128i e = _mm_loadu_si128((const __m128i *)(src + i + 48));
			_mm_stream_si128((__m128i *)(dst + i), a);
			_mm_stream_si128((__m128i *)(dst + i + 16), b);
			_mm_stream_si128((__m128i *)(dst + i + 32), c);
			_mm_stream_si128((__m128i *)(dst + i + 48), e);
		}
		_mm_sfence(); /* ordered before anything that reads the image after us */
		return;
	}
#endif
	copy(dst, src, n);
}

/* The run of the mapping's own pages from page pg on, in bytes from offset po, up to
 * end - pos: long when nothing was adopted there. */
static size_t own_run(const struct mem_dev *m, size_t pg, size_t po, uint64_t left)
{
	size_t run = 0;
	for (size_t p = pg; run < left && !m->page[p]; p++)
		run += PAGE_BYTES - (p == pg ? po : 0);
	return run < left ? run : (size_t)left;
}

static int mem_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct mem_dev *m = (struct mem_dev *)d;
	const unsigned char *in = buf;
	(void)flags;
	m->written = true;
	uint64_t off = lba * d->sector_size, end = off + (uint64_t)count * d->sector_size;
	for (uint64_t pos = off, n; pos < end; pos += n) {
		size_t pg, po;
		n = piece(pos, end, &pg, &po);
		if (end - pos >= STREAM_MIN && !m->page[pg]) {
			size_t run = own_run(m, pg, po, end - pos);
			if (run >= STREAM_MIN) {
				n = run & ~(size_t)63;
				copy_stream(m->map + pos, in, n);
				in += n;
				continue;
			}
		}
		copy(page_at(m, pg) + po, in, n);
		in += n;
	}
	return 0;
}

/* A whole page written by handing over its buffer: mem keeps *buf as the page
 * and gives back the block it replaces, or NULL when that was the mapping's own
 * page (which is released: the adopted block holds the data now). */
static int mem_write_swap(struct bdev *d, uint64_t lba, uint32_t count, void **buf, unsigned flags)
{
	struct mem_dev *m = (struct mem_dev *)d;
	uint64_t off = lba * d->sector_size;
	if ((off & (PAGE_BYTES - 1)) || (uint64_t)count * d->sector_size != PAGE_BYTES)
		return mem_write(d, lba, count, *buf, flags);
	size_t pg = (size_t)(off >> PAGE_SHIFT);
	void *old = m->page[pg];
	m->written = true;
	m->page[pg] = *buf;
	*buf = old;
	if (!old)
		map_drop(m, pg);
	return 0;
}

static int mem_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	/* discarded sectors read back as zeroes, as on a device with RZAT */
	struct mem_dev *m = (struct mem_dev *)d;
	uint64_t off = lba * d->sector_size, end = off + (uint64_t)count * d->sector_size;
	for (uint64_t pos = off, n; pos < end; pos += n) {
		size_t pg, po;
		n = piece(pos, end, &pg, &po);
		if (n == PAGE_BYTES) {
			blk_page_free(m->page[pg]);
			m->page[pg] = NULL;
			map_drop(m, pg);
		} else {
			memset(page_at(m, pg) + po, 0, n);
		}
	}
	return 0;
}

/* Only a medium nothing was ever written to is known to be zero: the crash explorer's
 * bases, every write of theirs held in the overlay above (cow.c). */
static bool mem_reads_zero(struct bdev *d, uint64_t lba, uint32_t count)
{
	(void)lba;
	(void)count;
	return !((struct mem_dev *)d)->written;
}

static void mem_free(struct mem_dev *m)
{
	if (m->page)
		for (size_t i = 0; i < m->bytes >> PAGE_SHIFT; i++)
			blk_page_free(m->page[i]);
	free(m->page);
	if (m->map && m->heap)
		free(m->map);
	else if (m->map)
		munmap(m->map, m->bytes);
	free(m);
}

static void mem_close(struct bdev *d)
{
	mem_free((struct mem_dev *)d);
}

static int mem_clone(struct bdev *d, struct bdev **out);

static const struct bdev_ops mem_ops = {
    .read = mem_read,
    .write = mem_write,
    .write_swap = mem_write_swap,
    .discard = mem_discard,
    .close = mem_close,
    .clone = mem_clone,
    .reads_zero = mem_reads_zero,
};

static int mem_alloc(uint32_t sector_size, uint64_t nr_sectors, struct mem_dev **out)
{
	struct mem_dev *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	int rc = blk_init(&m->dev, &mem_ops, "mem", sector_size, nr_sectors);
	if (rc) {
		free(m);
		return rc;
	}
	if (nr_sectors == 0 || nr_sectors > (SIZE_MAX >> 1) / sector_size) {
		free(m);
		return -EINVAL;
	}
	m->bytes =
	    (size_t)((nr_sectors * sector_size + PAGE_BYTES - 1) & ~(uint64_t)(PAGE_BYTES - 1));
	m->page = calloc(m->bytes >> PAGE_SHIFT, sizeof(*m->page));
	m->heap = m->bytes <= HEAP_MAX;
	if (m->heap) {
		m->map = aligned_alloc(PAGE_BYTES, m->bytes);
		if (m->map)
			memset(m->map, 0, m->bytes);
	} else {
		void *map = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE,
		                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		m->map = map == MAP_FAILED ? NULL : map;
	}
	if (!m->page || !m->map) {
		mem_free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

int blk_mem_open(uint32_t sector_size, uint64_t nr_sectors, struct bdev **out)
{
	struct mem_dev *m;
	int rc = mem_alloc(sector_size, nr_sectors, &m);
	if (rc == 0)
		*out = &m->dev;
	return rc;
}

static int mem_clone(struct bdev *d, struct bdev **out)
{
	const struct mem_dev *src = (const struct mem_dev *)d;
	struct mem_dev *m;
	int rc = mem_alloc(d->sector_size, d->nr_sectors, &m);
	if (rc)
		return rc;
	for (size_t i = 0; i < m->bytes >> PAGE_SHIFT; i++)
		memcpy(page_at(m, i), page_at(src, i), PAGE_BYTES);
	m->dev.read_only = d->read_only;
	m->written = src->written;
	*out = &m->dev;
	return 0;
}
