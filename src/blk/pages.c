// SPDX-License-Identifier: GPL-2.0-or-later
/* pages.c — the page-sized blocks models hand to one another (write_swap): a
 * cache's line buffers, which mem adopts as its pages and gives back.
 *
 * Why not malloc: glibc's 4 KiB blocks sit 16 bytes into a page, so every block
 * spans two pages and its copies start and end on split cache lines. A loop of
 * 4 KiB copies into random ones of 16,384 such blocks took about 1.2x the time of
 * the same loop into aligned pages, and aligned_alloc doubles the heap (each block
 * leaves a fragment too small for the next). So pages come from mappings of their
 * own.
 *
 * Free pages are kept on a stack for reuse. Beyond BLK_PAGES_KEEP of them a freed
 * page is given back to the kernel (MADV_DONTNEED) but keeps its address: it is
 * handed out again, zero-filled, only when no page still holding memory is left.
 * That is a system call a page: closing a mem holding 200,000 adopted pages took
 * 0.24 s, where glibc frees as many 4 KiB blocks in 0.03 s.
 * Mappings are never unmapped. One lock: devices in different threads share it.
 *
 * Under AddressSanitizer the pages are aligned_alloc blocks instead, so that a
 * page used after it was freed, or never freed, is still reported. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "blackout/blk.h"

#if defined(__SANITIZE_ADDRESS__)
#define PAGES_FROM_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAGES_FROM_MALLOC 1
#endif
#endif

#ifdef PAGES_FROM_MALLOC

void *blk_page_alloc(void)
{
	return aligned_alloc(BLK_PAGE_BYTES, BLK_PAGE_BYTES);
}

void blk_page_free(void *p)
{
	free(p);
}

#else

#define MAP_PAGES      256  /* pages mapped at a time: 1 MiB */
#define BLK_PAGES_KEEP 4096 /* free pages kept holding memory: 16 MiB */

/* free[0, nhot) are pages that hold memory, free[total - ncold, total) pages given
 * back to the kernel; total is every page ever mapped, so both fit. */
static struct {
	pthread_mutex_t lock;
	void **free;
	size_t total, nhot, ncold;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Maps MAP_PAGES more pages onto the cold end (untouched pages hold no memory). */
static int pool_grow(void)
{
	size_t total = pool.total + MAP_PAGES;
	void **f = realloc(pool.free, total * sizeof(*f));
	if (!f)
		return -1;
	pool.free = f;
	unsigned char *map = mmap(NULL, (size_t)MAP_PAGES * BLK_PAGE_BYTES, PROT_READ | PROT_WRITE,
	                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return -1;
	/* the cold end moves up to the new end of the array */
	for (size_t k = pool.ncold; k-- > 0;)
		f[total - pool.ncold + k] = f[pool.total - pool.ncold + k];
	for (size_t k = 0; k < MAP_PAGES; k++) /* handed out in address order */
		f[total - pool.ncold - MAP_PAGES + k] = map + k * BLK_PAGE_BYTES;
	pool.ncold += MAP_PAGES;
	pool.total = total;
	return 0;
}

void *blk_page_alloc(void)
{
	void *p = NULL;
	pthread_mutex_lock(&pool.lock);
	if (pool.nhot)
		p = pool.free[--pool.nhot];
	else if (pool.ncold || pool_grow() == 0)
		p = pool.free[pool.total - pool.ncold--];
	pthread_mutex_unlock(&pool.lock);
	return p;
}

void blk_page_free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&pool.lock);
	if (pool.nhot < BLK_PAGES_KEEP) {
		pool.free[pool.nhot++] = p;
	} else {
		madvise(p, BLK_PAGE_BYTES, MADV_DONTNEED);
		pool.free[pool.total - ++pool.ncold] = p;
	}
	pthread_mutex_unlock(&pool.lock);
}

#endif
